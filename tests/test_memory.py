"""Freed heap memory handed back to the system (``memory.return_free_heap``)."""

import ctypes
from pathlib import Path

import pytest

from culturebench.evaluate.runs import memory


def _rss_mib() -> float:
    return next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                if line.startswith("VmRSS:")) / 1024


@pytest.mark.skipif(memory._malloc_trim() is None or not Path("/proc/self/status").is_file(),
                    reason="needs glibc's malloc_trim and /proc")
def test_free_heap_pages_pinned_by_a_live_block_go_back_to_the_system():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(4096) for _ in range(40_000)]  # ~160 MB of heap, below the mmap threshold
    for block in blocks:
        ctypes.memset(block, 1, 4096)  # touched: resident
    for block in blocks[:-1]:
        libc.free(block)  # the last block keeps the heap's top, so free() itself cannot shrink it
    before = _rss_mib()
    memory.return_free_heap()
    after = _rss_mib()
    libc.free(blocks[-1])
    assert before - after > 100
