"""Freed memory handed back to the system between the stages of a large run (issue #28)."""

from __future__ import annotations

import ctypes
import functools


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # a C library without it (macOS, musl), or no CDLL(None) (Windows)
        return None


def return_free_heap() -> None:
    """Hand the C heap's free pages back to the system: glibc's ``malloc_trim(0)``, nothing where the C library
    has none. glibc keeps what is freed for reuse, and numpy's large temporaries raise its mmap threshold as they are
    freed (up to 32 MB), so the arrays after them come from the heap and stay resident once freed; a later stage's
    peak then sits on top of them. Dask's workers trim for the same reason. Called after each streaming step and
    after a large bootstrap (docs/performance.md, "Evaluating at scale", for the figures)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
