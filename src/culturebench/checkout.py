"""Where this culturebench came from: the git checkout it runs from (if any) and the sample ``raw/`` bundled there.

A release records both in its manifest, so its card and report can give a rebuild recipe that works (install from
the checkout at the recorded commit; the wheel ships no ``raw/``) and say plainly when it was built from the
bundled synthetic sample rather than the publishers' files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from culturebench.io import sha256_file

REPOSITORY = Path(__file__).resolve().parents[2]
"""The checkout root when culturebench runs from a source tree (``pip install -e .``); meaningless in a wheel."""
BUNDLED_RAW = REPOSITORY / "raw"
"""The sample raw inputs shipped in the repository (written by ``scripts/make_sample_*.py``)."""


def bundled_raw() -> Path:
    """The sample raw inputs shipped in the repository's top-level ``raw/`` (or ``./raw`` outside a checkout)."""
    return BUNDLED_RAW if BUNDLED_RAW.is_dir() else Path("raw")


def source_commit() -> dict | None:
    """``{"commit": sha, "dirty": bool}`` of the git checkout culturebench runs from, or None outside one
    (a wheel install, no git). ``dirty``: tracked files differ from the commit, so the commit alone does not
    reproduce the code that ran."""
    if not (REPOSITORY / ".git").exists() or not (REPOSITORY / "pyproject.toml").is_file():
        return None
    try:
        head = subprocess.run(["git", "-C", str(REPOSITORY), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(REPOSITORY), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head, "dirty": bool(status.strip())}


def is_bundled_sample(inputs: list[dict]) -> bool:
    """True when every input file (``name`` relative to RAW, ``sha256``) is byte-identical to the bundled sample
    file at the same path: the release holds synthetic sample rows, not the benchmark."""
    if not inputs or not BUNDLED_RAW.is_dir():
        return False
    for item in inputs:
        path = BUNDLED_RAW / item["name"]
        if not path.is_file() or sha256_file(path) != item["sha256"]:
            return False
    return True
