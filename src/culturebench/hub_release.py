"""A release published on the Hugging Face Hub, used where a release folder is expected (``--release`` of
``evaluate`` and ``score``; the RELEASE argument of ``validate``, ``audit`` and ``info``).

``ORG/NAME`` or ``ORG/NAME@REVISION`` that is not a local folder, nor written as a path (``looks_like_path``), is
fetched with ``huggingface_hub.snapshot_download`` (``snapshot``) into huggingface-hub's own cache (``HF_HUB_CACHE``; a later call reuses it) and verified against the release's
``manifest.json`` before use (``release_reader.Release.open``): every file the upload holds must have the manifest's sha256. The upload lacks, by
design, the configs ``culturebench publish`` withheld (named in its card's YAML ``culturebench`` block), and its
README.md is the card rewritten for the Hub; a config uploaded without some columns (``withheld_columns``) differs
from the manifest on purpose, and so does croissant.json then (it gives the uploaded files' sha256). Without network (or ``HF_HUB_OFFLINE=1``) the cached snapshot is used, and when there
is none the error says what is missing and where it was looked for.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from culturebench.errors import InputError
from culturebench.manifest import CROISSANT_FILE

HUB_REPO = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<revision>[\w./-]+))?$")
"""``ORG/NAME[@revision]``."""


def snapshot(value: str) -> Path:
    """The local snapshot of the Hub dataset repo ``value`` names (``ORG/NAME[@REVISION]``, no local folder), not yet
    verified (``release_reader.Release.snapshot`` verifies it). Anything that is no Hub repo id, or is written as a
    path (``looks_like_path``), is a missing folder: an InputError saying so, never a Hub lookup."""
    found = HUB_REPO.match(str(value))
    if found is None or looks_like_path(str(value)):
        raise InputError(f"release folder not found{_releases_beside(Path(value))}", file=value)
    return fetch(found["repo"], found["revision"])


def looks_like_path(value: str) -> bool:
    """A release argument written as a path, never a Hub repo id: it starts with ``.``, ``/`` or ``~``, ends with
    ``/``, holds a backslash or more than one ``/`` before any ``@revision``, or its first part is a folder here
    (``releases/typo`` beside a ``releases/`` folder)."""
    name = value.split("@", 1)[0]
    return (value.startswith((".", "/", "~")) or value.endswith("/") or "\\" in value or name.count("/") != 1
            or Path(name.split("/", 1)[0]).is_dir())


def _releases_beside(path: Path) -> str:
    """"; releases/ holds: a, b" (the release folders beside a missing one), or "" when there are none."""
    parent = path.parent
    found = sorted(p.name for p in parent.iterdir() if (p / "manifest.json").is_file()) if parent.is_dir() else []
    return f"; {parent.as_posix().rstrip('/') or '.'}/ holds: {', '.join(found)}" if found else ""


def fetch(repo_id: str, revision: str | None) -> Path:
    """The snapshot of a Hub dataset repo in huggingface-hub's cache (downloaded when the Hub can be reached)."""
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import (HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError,
                                        RevisionNotFoundError)

    where = f"{repo_id}@{revision or 'main'} (no local folder of that name)"
    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision))
    except RevisionNotFoundError:
        raise InputError(f"{where}: the dataset repo has no revision {revision!r}") from None
    except RepositoryNotFoundError:
        raise InputError(f"{where}: no such dataset repo on the Hub (or not readable with this token)") from None
    except LocalEntryNotFoundError:
        raise InputError(f"{where}: the Hub cannot be reached and the release is not in the local cache "
                         f"({constants.HF_HUB_CACHE}); run the command once with network to fetch it") from None
    except HfHubHTTPError as exc:
        raise InputError(f"{where}: Hub request failed: {str(exc).splitlines()[0]}") from None


def card_block(folder: Path) -> dict:
    """The ``culturebench`` block of the uploaded card's YAML ({} without one)."""
    readme = folder / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        return {}
    header = yaml.safe_load(text[4:text.index("\n---\n", 4)]) or {}
    block = header.get("culturebench")
    return block if isinstance(block, dict) else {}


def by_design(folder: Path, outputs: list[dict]) -> set[str]:
    """The paths of ``outputs`` (manifest.json's) in which a Hub upload differs from its release on purpose:
    README.md (the card rewritten for the Hub), the files of withheld configs and of configs uploaded without some
    columns, and then croissant.json (which gives those files' uploaded sha256)."""
    block = card_block(folder)
    trimmed = set((block.get("withheld_columns") or {}).keys())
    skipped = set(block.get("withheld_configs") or []) | trimmed
    return {"README.md"} | ({CROISSANT_FILE} if trimmed else set()) | {
        o["path"] for o in outputs if (o.get("config") or o["path"].split("/", 1)[0]) in skipped}
