"""run.json: what a run of ``culturebench evaluate <benchmark>`` was and how it ran (versions, the release's manifest
hash, arguments without secrets, the backend's cache parameters and settings, the runner's totals), the same for
every benchmark (``write_run_record``). Secrets never reach it: arguments whose name looks like a secret are
dropped, and every string is scrubbed of the values of secret-looking environment variables and of every key and
header value a backend sends (``redaction.sent_secrets``)."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from culturebench import __version__
from culturebench.evaluate.models.redaction import REDACTED, sent_secrets
from culturebench.evaluate.runs.run_folder import METRICS_FILE
from culturebench.io import sha256_file, write_json
from culturebench.release_reader import Release

RUN_FILE = "run.json"
LIBRARIES = ("pyreqwest", "aiohttp", "ray", "vllm", "torch", "transformers", "polars", "pyarrow", "numpy", "scipy",
             "matplotlib", "typer", "rich")
"""Libraries whose versions run.json records (None when not installed); pyreqwest and aiohttp are the HTTP clients
of the openai and ray backends (run.json's backend.http_library says which one a run used: ``transport.py``)."""

SECRET_NAME = re.compile(r"api[_-]?key|secret|passw|credential|authorization|bearer|(?:^|[_-])token$", re.IGNORECASE)
"""Argument / JSON key names treated as secrets (``api_key``, ``hf_token``; not ``prompt_tokens``)."""
SECRET_ENV = re.compile(r"key|token|secret|passw|credential|auth", re.IGNORECASE)
"""Environment-variable names whose values are treated as secrets (OPENAI_API_KEY, HF_TOKEN, ...)."""


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str | None]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def versions() -> dict:
    """culturebench, Python, platform and library versions."""
    return {
        "culturebench": __version__,
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": platform.platform(),
        "libraries": library_versions(),
    }


def release_info(release: Release) -> dict:
    """The release evaluated: its path, benchmark, build time and the sha256 of its manifest.json (which lists the
    sha256 of every data file, so this one hash pins the whole release)."""
    manifest = release.manifest.data
    return {
        "path": str(release.folder),
        "benchmark": manifest.get("benchmark"),
        "created_at": manifest.get("created_at"),
        "culturebench_version": manifest.get("culturebench_version"),
        "manifest_sha256": sha256_file(release.folder / "manifest.json"),
    }


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose name looks like a secret (at least 6 characters long) and every key,
    header value and proxy password a backend of this process sends (``redaction.sent_secrets``)."""
    environ = os.environ if environ is None else environ
    found = {v for k, v in environ.items() if SECRET_ENV.search(k) and len(v) >= 6} | set(sent_secrets())
    return sorted(found, key=len, reverse=True)


def scrub(value: Any, secrets: list[str] | None = None) -> Any:
    """``value`` (nested dicts/lists/strings) with secret-named keys dropped and secret values replaced."""
    secrets = secret_values() if secrets is None else secrets
    if isinstance(value, Mapping):
        return {str(k): scrub(v, secrets) for k, v in value.items() if not SECRET_NAME.search(str(k))}
    if isinstance(value, (list, tuple)):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, Path):
        return scrub(str(value), secrets)
    return value


def redact_args(args: Mapping[str, Any]) -> dict:
    """Command arguments for run.json: JSON-safe (paths as text), secret-named ones dropped, secret values scrubbed."""
    return scrub({k: (str(v) if isinstance(v, Path) else v) for k, v in args.items()})


def run_record(*, benchmark: str, command: str, args: Mapping[str, Any], release: Mapping, backend: Any,
               stats: Mapping, extra: Mapping | None = None, started_at: datetime | None = None) -> dict:
    """The content of run.json (scrubbed of secrets); ``backend`` None for a run that asked no model (``score``)."""
    cache_params = backend.cache_params() if hasattr(backend, "cache_params") else {}
    record = {
        "benchmark": benchmark,
        "command": command,
        "started_at": (started_at or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
        "release": dict(release),
        "args": redact_args(args),
        "backend": None if backend is None else {
            "name": getattr(backend, "name", type(backend).__name__), "model": getattr(backend, "model", None),
            "cache_params": cache_params, **(backend.run_info() if hasattr(backend, "run_info") else {})},
        "runner": dict(stats),
        **(dict(extra) if extra else {}),
    }
    return scrub(record)


def write_run_json(out: Path, record: Mapping) -> Path:
    path = Path(out) / RUN_FILE
    write_json(path, scrub(record))
    return path


def write_run_record(out: Path, files: Sequence[Path], *, benchmark: str, release: Release,
                     backend: Any, args: Mapping | None, started_at: datetime, stats: Mapping,
                     extra: Mapping) -> list[Path]:
    """run.json of ``culturebench evaluate <benchmark>``: ``run_record`` with ``extra`` and the names of ``files``
    (the run folder's other outputs) as ``files``; returns ``files`` and run.json. The runner's count of answers cut
    off by the token limit is added to metrics.json (``truncated_answers``: count and of how many).
    ``release.files_verified``: True when ``evaluate`` checked the files against manifest.json, False under
    ``--allow-modified-release``, None when not run from the command line (nothing checked)."""
    metrics_path = next((Path(p) for p in files if Path(p).name == METRICS_FILE), None)
    if metrics_path is not None and metrics_path.is_file():  # answers cut off by the token limit, beside the metrics
        metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
        metrics["truncated_answers"] = {"count": int(stats.get("truncated") or 0),
                                        "of": int(stats.get("n_requests") or 0)}
        write_json(metrics_path, metrics)
    # the command line checks the release's files against manifest.json before the first request, unless told not to
    allowed = (args or {}).get("allow_modified_release")
    checked = {"files_verified": None if allowed is None else not allowed}
    record = run_record(benchmark=benchmark, command=f"culturebench evaluate {benchmark}", args=args or {},
                        release={**release_info(release), **checked}, backend=backend, stats=stats,
                        started_at=started_at,
                        extra={**extra, "files": [Path(p).name for p in files]})
    return [*files, write_run_json(out, record)]


def write_score_record(out: Path, files: Sequence[Path], *, benchmark: str, release: Path, args: Mapping,
                       started_at: datetime) -> list[Path]:
    """run.json of ``culturebench score <benchmark>``, as ``write_run_record`` writes ``evaluate``'s (versions, the
    release with its manifest hash, the arguments, the files written) without a backend (null) or runner totals:
    nothing was asked of a model. Returns ``files`` and run.json."""
    allowed = args.get("allow_modified_release")
    record = run_record(benchmark=benchmark, command=f"culturebench score {benchmark}", args=args,
                        release={**release_info(Release.open(release)),
                                 "files_verified": None if allowed is None else not allowed},
                        backend=None, stats={}, started_at=started_at,
                        extra={"files": [Path(p).name for p in files]})
    return [*files, write_run_json(out, record)]
