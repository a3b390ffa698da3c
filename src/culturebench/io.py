"""The one place for file I/O helpers shared by every stage: hashing, atomic directories, JSON."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from culturebench.errors import InputError


@dataclass(frozen=True)
class InputFile:
    """A raw input as recorded in the manifest: name relative to the raw folder, hash, size, rows read."""

    path: Path
    name: str
    sha256: str
    size: int
    rows: int


def input_name(path: Path, root: Path | None) -> str:
    """How a raw input is named in errors and the manifest: its path relative to the raw folder, else its file name."""
    path = Path(path)
    return str(path.relative_to(root)) if root is not None and path.is_relative_to(root) else path.name


def read_input_bytes(path: Path, name: str) -> bytes:
    """A raw input's bytes; a file that cannot be read or is empty is an InputError naming it (as ``name``)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", file=name) from None
    if not data.strip():
        raise InputError("file is empty", file=name)
    return data


def read_input_text(path: Path, name: str) -> tuple[bytes, str]:
    """A raw input's bytes and text: UTF-8 (a BOM is allowed), else cp1252 as Windows tools save CSV files."""
    data = read_input_bytes(path, name)
    try:
        return data, data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data, data.decode("cp1252", errors="replace")


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json(path: Path, data: object) -> None:
    """Deterministic JSON: sorted keys, two-space indent, trailing newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a temp dir beside ``target``; on success it replaces ``target`` by rename, on any error it is removed.

    A crash or Ctrl-C therefore never leaves a half-written ``target``.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
