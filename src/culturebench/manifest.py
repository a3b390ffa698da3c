"""Parsing and checking a release's manifest.json: below ``release_reader.Release``, which reads it (``load_manifest``,
once per release opened) for every command, and below the release writer, so that the checks of a release against
its manifest import nothing of the builders' side."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection
from pathlib import Path

from culturebench.errors import InputError
from culturebench.io import sha256_file

MANIFEST_KEYS = ("benchmark", "outputs", "accounting", "inputs", "seed", "validation", "created_at", "redistributable")
"""What a build writes into manifest.json and ``validate``, ``audit`` and ``info`` read."""
REQUIRED_KEYS = ("benchmark", "outputs")
"""What every manifest.json holds, whatever reads it."""
CROISSANT_FILE = "croissant.json"
"""The release's Croissant metadata (``culturebench.croissant`` writes it), a file manifest.json lists."""


def load_manifest(release: Path, required: Collection[str] = REQUIRED_KEYS) -> dict:
    """A release's manifest.json, parsed (``release_reader.Release.open`` is its one reader); one that cannot be read,
    is not JSON or lacks the ``required`` keys is an InputError naming it."""
    path = Path(release) / "manifest.json"
    if not path.is_file():
        raise InputError("not a culturebench release (no manifest.json)", file=release)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"does not parse as JSON ({exc})", file=path) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror or exc})", file=path) from None
    if not isinstance(manifest, dict):
        raise InputError("not a JSON object", file=path)
    check_keys(manifest, required, path)
    outputs = manifest["outputs"]
    if not isinstance(outputs, list) or not all(isinstance(o, dict) and "path" in o for o in outputs):
        raise InputError("'outputs' is not a list of {path, sha256, ...} objects", file=path)
    return manifest


def check_keys(manifest: dict, required: Collection[str], path: Path) -> None:
    """A manifest without the ``required`` keys is an InputError naming its file ``path``."""
    missing = [key for key in required if key not in manifest]
    if missing:
        raise InputError(f"no {', '.join(repr(k) for k in missing)}: not a complete culturebench release",
                         file=path)


UNLISTED = "not listed in manifest.json"


def unlisted_files(release: Path, manifest: dict) -> list[str]:
    """The files of ``release`` (relative, sorted) that its manifest does not list: ``load_dataset`` would read a
    stray shard, so ``validate``, ``audit`` and ``diff`` refuse them."""
    release = Path(release)
    listed = {o["path"] for o in manifest["outputs"]} | {"manifest.json"}
    return [relative for relative in sorted(p.relative_to(release).as_posix() for p in release.rglob("*") if p.is_file())
            if relative not in listed]


def _hash_memo_path() -> Path:
    """Where ``verify_release`` remembers file hashes: ``$CULTUREBENCH_CACHE`` or ``~/.cache/culturebench``."""
    root = os.environ.get("CULTUREBENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "culturebench")
    return Path(root) / "release-hashes.json"


def _remembered_sha256(path: Path, memo: dict) -> str:
    """The sha256 of ``path``, computed once per (absolute path, size, mtime): a file rewritten in place gets a new
    mtime (or size) and is hashed again."""
    stat = path.stat()
    prefix = f"{path.resolve()}|"
    key = f"{prefix}{stat.st_size}|{stat.st_mtime_ns}"
    if key not in memo:
        for stale in [k for k in memo if k.startswith(prefix)]:  # the file's earlier versions
            del memo[stale]
        memo[key] = sha256_file(path)
    return memo[key]


def verify_release(release: Path, manifest: dict, *, exempt: Collection[str] = (),
                   remedy: str = "rebuild or re-download the release, or --allow-modified-release to use it anyway"
                   ) -> None:
    """Check a release's listed files against manifest.json before it is evaluated or scored: a missing file or one
    whose sha256 differs is an InputError naming the file and ``remedy`` (``--allow-modified-release`` skips this,
    and run.json records it). Paths in ``exempt`` differ on purpose (a Hub upload: ``hub_release.by_design``).
    Hashes are remembered by size and mtime (``_hash_memo_path``), so a release is read once."""
    release = Path(release)
    memo_path = _hash_memo_path()
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
        memo = memo if isinstance(memo, dict) else {}
    except (OSError, ValueError):
        memo = {}
    before = len(memo)
    for output in manifest["outputs"]:
        if output["path"] in exempt:
            continue
        path = release / output["path"]
        if not path.is_file():
            raise InputError(f"file listed in manifest.json is missing; {remedy}", file=path)
        if not output.get("sha256"):
            raise InputError(f"manifest.json lists no sha256 for this file, so it cannot be checked; {remedy}",
                             file=path)
        if _remembered_sha256(path, memo) != output.get("sha256"):
            raise InputError(f"file does not match manifest.json (sha256 mismatch: modified or corrupt); {remedy}",
                             file=path)
    if len(memo) != before:
        with contextlib.suppress(OSError):  # a read-only home only costs the hashing next time
            memo_path.parent.mkdir(parents=True, exist_ok=True)
            temporary = memo_path.with_name(f".{memo_path.name}.{os.getpid()}")
            temporary.write_text(json.dumps(memo, sort_keys=True), encoding="utf-8")
            os.replace(temporary, memo_path)
