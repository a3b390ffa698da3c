"""Publish a release folder as a Hugging Face Hub dataset repo (``culturebench publish``).

One publish is one commit (``HfApi.create_commit``) holding only what changed: every file of the release is compared
with the remote branch's file list (LFS sha256 for large files, git blob id for small ones) and the remote card's
recorded manifest sha256, so re-publishing an unchanged release sends no commit and a changed one only the changed
files plus deletions of release files that are gone.

License gating: a config that the manifest marks not redistributable (e.g. WVS respondent rows) is withheld unless
the repo is private *and* the user names its license with ``--allow-restricted``, except where only some columns
carry the restricted text (the benchmark's ``open_columns``, ``contract.OpenColumns``): then the config is uploaded
without those columns, under the license of the rest. Quarantine files are raw source
rows and follow the same rule. The uploaded README.md is the release card rewritten for the Hub: withheld configs are
dropped from the YAML ``configs``/``dataset_info`` (so ``load_dataset(repo, config)`` works for exactly what was
uploaded), a "Withheld configs" section says how to rebuild them, and the YAML ``culturebench`` block records the
manifest sha256. croissant.json is uploaded as built (it already marks the withheld configs as not distributed),
except that a config uploaded without some columns gets its uploaded files' sha256 and loses those fields.

The token comes only from ``HF_TOKEN`` or the huggingface-hub login and is never printed, logged or written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from culturebench import __version__, croissant
from culturebench.builders.base import license_name
from culturebench.errors import InputError
from culturebench.io import sha256_file
from culturebench.cards import loading_example
from culturebench.release_reader import Release, opened_once
from culturebench.validation.report import ORIGIN_KEYS, rebuild_commands

RELEASE_FOLDERS = ("data/", "quarantine/", "validation/")
"""Remote files under these folders that the release no longer has are deleted; other remote files are kept."""
QUARANTINE = "quarantine"


@dataclass(frozen=True)
class PlannedFile:
    path: str
    sha256: str
    size: int
    git_oid: str
    source: Path | None = None
    content: bytes | None = None


@dataclass(frozen=True)
class Withheld:
    config: str
    license: str
    reason: str
    files: tuple[str, ...]
    columns: tuple[str, ...] = ()
    """Only these columns are withheld (the config is uploaded without them); empty: the whole config."""


@dataclass
class Remote:
    exists: bool
    private: bool | None = None
    sha: str | None = None
    branch_exists: bool = True
    manifest_sha256: str | None = None
    files: dict = field(default_factory=dict)  # path -> (sha256 or None, git blob id or None)
    note: str = ""
    unreachable: str = ""
    """Why the Hub could not be read (a dry run offline plans against an empty repo instead)."""


@dataclass
class Plan:
    release: Path
    repo_id: str
    revision: str | None
    private: bool
    benchmark: str
    manifest_sha256: str
    files: list[PlannedFile]
    withheld: list[Withheld]
    remote: Remote
    uploads: list[PlannedFile] = field(default_factory=list)
    deletions: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    commit: str | None = None
    branch_created: bool = False
    changes: list[str] = field(default_factory=list)
    """What the release changes from the remote's current revision (``release_diff``; empty for a new repo)."""

    @property
    def up_to_date(self) -> bool:
        return not self.uploads and not self.deletions

    @property
    def commit_message(self) -> str:
        return f"culturebench publish {self.benchmark} (manifest sha256 {self.manifest_sha256})"

    def lines(self, dry_run: bool) -> list[str]:
        """What would be / was sent, one line each (paths only; never the token)."""
        where = f"{self.repo_id}@{self.revision or 'main'}"
        if self.remote.exists:
            state = (f"remote {where}: {'private' if self.remote.private else 'public'}, "
                     f"manifest {self.remote.manifest_sha256 or 'unknown'}")
            if not self.remote.branch_exists:
                state += f"; branch {self.revision} will be created from main"
        elif self.remote.unreachable:
            state = (f"remote {where}: not checked, the Hub cannot be reached ({self.remote.unreachable}); "
                     "offline dry run: planned against an empty repo")
        else:
            state = f"remote {where}: does not exist{self.remote.note}; will be created {'private' if self.private else 'public'}"
        out = [state, f"local manifest sha256 {self.manifest_sha256}"]
        out += [f"changes since {where}: {line}" for line in self.changes]
        for item in self.withheld:
            if item.columns:
                out.append(f"withheld column {', '.join(item.columns)} of {item.config} (license {item.license}; the "
                           f"config is uploaded without it): {item.reason}")
            else:
                out.append(f"withheld {item.config} ({len(item.files)} files, license {item.license}): {item.reason}")
        verb = "would upload" if dry_run else "upload"
        out += [f"{verb} {f.path} ({f.size:,} bytes, sha256 {f.sha256[:12]})" for f in self.uploads]
        out += [f"{'would delete' if dry_run else 'delete'} {path}" for path in self.deletions]
        if self.unchanged:
            out.append(f"unchanged: {len(self.unchanged)} files")
        if self.branch_created:
            out.append(f"created branch {self.revision} from main")
        if self.up_to_date:
            out.append(f"{where} is up to date: nothing to commit")
        elif self.commit:
            out.append(f"committed {self.commit} to {where}: {self.commit_message}")
        elif dry_run:
            out.append(f"dry run: one commit to {where} with {len(self.uploads)} uploads, {len(self.deletions)} deletions")
        return out


def git_blob_oid(data: bytes) -> str:
    """The git blob id (sha1 of ``blob <size>\\0`` + content): what the Hub lists for a regular (non-LFS) file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _file_oid(path: Path) -> str:
    digest = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def plan(release: Path, repo_id: str, *, private: bool = False, revision: str | None = None,
         allow_restricted: tuple[str, ...] | list[str] = (), api=None, offline_ok: bool = False) -> Plan:
    """Everything a publish would send, compared with the remote (read only; nothing is written). With
    ``offline_ok`` (a dry run) an unreachable Hub is planned as an empty repo, and the plan says so."""
    release = Path(release)
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo_id or ""):
        raise InputError(f"--repo-id must look like ORG/NAME, got {repo_id!r}")
    opened = Release.open(release)
    manifest = opened.manifest.data
    benchmark = opened.benchmark  # the manifest names it: looked up once, here
    if manifest.get("validation", {}).get("failed"):
        raise InputError(f"release has {manifest['validation']['failed']} failing checks; not publishing", file=release)
    changed = [o["path"] for o in manifest["outputs"]
               if not (release / o["path"]).is_file() or sha256_file(release / o["path"]) != o["sha256"]]
    if changed:
        raise InputError(f"{len(changed)} files differ from manifest.json (first: {changed[0]}); run culturebench audit",
                         file=release)
    card = getattr(benchmark.builder_module(), "CARD", None)
    described = {c.name: c for c in getattr(card, "configs", ())}
    restricted = {config: license_name(benchmark.name, described.get(config))
                  for config, ok in manifest.get("redistributable", {}).items() if not ok}
    allowed = set(allow_restricted)
    unknown = allowed - set(restricted.values())
    if unknown:
        names = ", ".join(sorted(set(restricted.values()))) or "none (every config is redistributable)"
        raise InputError(f"--allow-restricted {', '.join(sorted(unknown))}: not a license of this release's restricted "
                         f"configs; they are under: {names}")
    if allowed and not private:
        raise InputError("--allow-restricted needs --private: restricted configs are only uploaded to a private repo")

    if api is None:
        remote = Remote(exists=False, note=" (not checked)")
    else:
        try:
            remote = read_remote(api, repo_id, revision)
        except HubUnreachable as exc:
            if not offline_ok:
                raise
            remote = Remote(exists=False, unreachable=exc.reason)
    if private and remote.exists and remote.private is False:
        raise InputError(f"{repo_id} exists and is public; --private cannot change an existing repo's visibility")
    repo_private = private and (not remote.exists or bool(remote.private))

    def gate(license_: str) -> str | None:
        if not restricted_allowed(license_):
            if not private:
                return f"source terms ({license_}) forbid redistribution; uploaded only to a private repo with --private --allow-restricted {license_}"
            return f"source terms ({license_}) forbid redistribution; pass --allow-restricted {license_} to upload it to this private repo"
        return None

    def restricted_allowed(license_: str) -> bool:
        return repo_private and license_ in allowed

    withheld: list[Withheld] = []
    withheld_paths: set[str] = set()
    by_config: dict[str, list[str]] = {}
    for output in manifest["outputs"]:
        if "config" in output:
            by_config.setdefault(output["config"], []).append(output["path"])
    projected: dict[str, tuple[str, ...]] = {}  # path -> columns dropped from it
    for config, license_ in restricted.items():
        why = gate(license_)
        if why:
            files = tuple(by_config.get(config, []))
            open_columns = benchmark.open_columns.get(config)
            if open_columns is not None:
                withheld.append(Withheld(config, license_, f"{open_columns.reason}; {why}", files,
                                         open_columns.withheld))
                projected.update({path: open_columns.withheld for path in files})
                continue
            withheld.append(Withheld(config, license_, why, files))
            withheld_paths.update(files)
    quarantine = tuple(o["path"] for o in manifest["outputs"] if o["path"].startswith(QUARANTINE + "/"))
    blocked = sorted({lic for lic in restricted.values() if not restricted_allowed(lic)})
    if quarantine and blocked:
        withheld.append(Withheld(QUARANTINE, ", ".join(blocked),
                                 "quarantined rows are raw source rows under the same terms: " + gate(blocked[0]), quarantine))
        withheld_paths.update(quarantine)

    manifest_sha = sha256_file(release / "manifest.json")
    files: list[PlannedFile] = []
    for output in manifest["outputs"]:
        path = output["path"]
        if path in withheld_paths or path == "README.md" or (path == croissant.FILE and projected):
            continue
        source = release / path
        if path in projected:
            files.append(_planned_bytes(path, parquet_without(source, projected[path])))
            continue
        files.append(PlannedFile(path, output["sha256"], source.stat().st_size, _file_oid(source), source=source))
    if projected and (release / croissant.FILE).is_file():  # the uploaded files without some columns, described
        uploaded = {f.path: f.sha256 for f in files if f.path in projected}
        columns = {w.config: w.columns for w in withheld if w.columns}
        text = croissant.hub_document((release / croissant.FILE).read_text(encoding="utf-8"), uploaded, columns)
        files.append(_planned_bytes(croissant.FILE, text.encode("utf-8")))
    files.append(_planned_bytes("manifest.json", (release / "manifest.json").read_bytes(), release / "manifest.json"))
    readme = hub_card((release / "README.md").read_text(encoding="utf-8"), manifest, manifest_sha, repo_id, withheld,
                      card)
    files.append(_planned_bytes("README.md", readme.encode("utf-8")))
    files.sort(key=lambda f: f.path)

    result = Plan(release, repo_id, revision, repo_private, benchmark.name, manifest_sha, files, withheld, remote)
    for item in files:
        sha256, oid = remote.files.get(item.path, (None, None))
        if (sha256 is not None and sha256 == item.sha256) or (oid is not None and oid == item.git_oid):
            result.unchanged.append(item.path)
        else:
            result.uploads.append(item)
    planned = {f.path for f in files}
    result.deletions = sorted(p for p in remote.files if p not in planned and p.startswith(RELEASE_FOLDERS))
    return result


def parquet_without(path: Path, columns: tuple[str, ...]) -> bytes:
    """A release parquet file without ``columns``, written as the release writes it (same bytes for the same file)."""
    import io

    import pyarrow.parquet as pq

    from culturebench.release import ROW_GROUP_ROWS

    table = pq.read_table(path)
    sink = io.BytesIO()
    pq.write_table(table.drop_columns([c for c in columns if c in table.column_names]), sink, compression="zstd",
                   row_group_size=ROW_GROUP_ROWS, write_statistics=True, store_schema=False)
    return sink.getvalue()


def _planned_bytes(path: str, data: bytes, source: Path | None = None) -> PlannedFile:
    return PlannedFile(path, hashlib.sha256(data).hexdigest(), len(data), git_blob_oid(data), source=source,
                       content=None if source else data)


def read_remote(api, repo_id: str, revision: str | None) -> Remote:
    """The remote branch's files (LFS sha256 / git blob id), visibility, head commit and card's manifest sha256."""
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    branch_exists = True
    try:
        try:
            info = api.dataset_info(repo_id, revision=revision, files_metadata=True)
        except RevisionNotFoundError:
            branch_exists = False
            info = api.dataset_info(repo_id, files_metadata=True)
    except RepositoryNotFoundError:
        return Remote(exists=False, note=" (or is not readable with this token)")
    except Exception as exc:  # connection refused, DNS, TLS, offline mode, an answer that is no Hub's: one line
        raise hub_error(exc, api.endpoint) from None
    if info.siblings is None:
        raise InputError(f"the Hub at {api.endpoint} answered for {repo_id} but listed no files (asked with "
                         "files_metadata); not publishing over a repo whose files cannot be compared")
    files = {s.rfilename: (s.lfs.sha256 if s.lfs else None, s.blob_id) for s in (info.siblings or [])}
    card_data = info.card_data.to_dict() if info.card_data is not None else {}
    meta = card_data.get("culturebench") or {}
    return Remote(exists=True, private=info.private, sha=info.sha, branch_exists=branch_exists,
                  manifest_sha256=meta.get("manifest_sha256") if isinstance(meta, dict) else None, files=files)


class HubUnreachable(InputError):
    """The Hub cannot be reached (no network, DNS, refused connection, HF_HUB_OFFLINE)."""

    def __init__(self, endpoint: str, reason: str):
        self.reason = reason
        super().__init__(f"cannot reach {endpoint}: {reason}")


def hub_error(exc: Exception, endpoint: str) -> Exception:
    """One line for a failed Hub request: its HTTP error, the Hub unreachable (``HubUnreachable``), or an answer that
    is not the Hub API's (an HTML page of a proxy or captive portal, JSON of another shape); other errors as they are."""
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(exc, InputError):
        return exc
    if isinstance(exc, HfHubHTTPError):
        return InputError(f"Hub request failed: {str(exc).splitlines()[0]}")
    if _is_connection_error(exc):
        return HubUnreachable(endpoint, f"{type(exc).__name__}: {exc}")
    if isinstance(exc, (ValueError, KeyError, TypeError, AttributeError)):
        return InputError(f"{endpoint} answered, but not as the Hugging Face Hub API does ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else 'unexpected reply'}); check HF_ENDPOINT")
    return exc


def _is_connection_error(exc: Exception) -> bool:
    """OSError (refused, DNS, TLS, huggingface_hub's OfflineModeIsEnabled) or an HTTP client's connection error."""
    return isinstance(exc, OSError) or \
        type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "requests", "urllib3")


def hub_card(readme: str, manifest: dict, manifest_sha: str, repo_id: str, withheld: list[Withheld], card) -> str:
    """The release card as uploaded: withheld configs out of the YAML, a "Withheld configs" section, the manifest
    sha256 in the YAML ``culturebench`` block, and the loading example pointed at the repo."""
    if not readme.startswith("---\n") or "\n---\n" not in readme[4:]:
        raise InputError("README.md has no YAML front matter", file="README.md")
    end = readme.index("\n---\n", 4)
    header = yaml.safe_load(readme[4:end]) or {}
    body = readme[end + len("\n---\n"):]
    gone = {w.config for w in withheld if not w.columns}
    header["configs"] = [c for c in header.get("configs", []) if c.get("config_name") not in gone]
    if "dataset_info" in header:
        header["dataset_info"] = [c for c in header["dataset_info"] if c.get("config_name") not in gone]
        dropped = {w.config: set(w.columns) for w in withheld if w.columns}
        for info in header["dataset_info"]:
            if info.get("config_name") in dropped:
                info["features"] = [f for f in info.get("features", [])
                                    if f.get("name") not in dropped[info["config_name"]]]
    header["culturebench"] = {
        "benchmark": manifest["benchmark"],
        "culturebench_version": manifest.get("culturebench_version", __version__),
        "manifest_sha256": manifest_sha,
        "withheld_configs": sorted(gone),
        "withheld_columns": {w.config: list(w.columns) for w in withheld if w.columns},
    }
    for config in header["configs"]:
        config.pop("default", None)
    if header["configs"]:  # the first uploaded config is the default (the release's may be withheld)
        first = header["configs"][0]
        header["configs"][0] = {"config_name": first["config_name"], "default": True,
                                **{k: v for k, v in first.items() if k != "config_name"}}
        split = first["data_files"][0]["split"]
        example = loading_example(repo_id, first["config_name"], split,
                                  f"Any uploaded config and split loads the same way; withheld configs load from a "
                                  f"local build (`load_dataset(\"releases/{manifest['benchmark']}\", CONFIG)`).")
    else:
        example = "Every config is withheld from this upload: build the release locally (below) and load it from there.\n"
    start, end = body.find("### Loading\n"), body.find("## Dataset Creation")
    if 0 <= start < end:
        body = body[:start] + "### Loading\n\n" + example + body[end:]
    if withheld:
        section = withheld_section(manifest, withheld, card)
        marker = "\n## Licensing Information"
        body = body.replace(marker, "\n" + section + marker, 1) if marker in body else body + "\n" + section
    return f"---\n{yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=1000)}---\n{body}"


def withheld_section(manifest: dict, withheld: list[Withheld], card) -> str:
    benchmark = manifest["benchmark"]
    rows = "\n".join(f"| `{w.config}`{f' (column {chr(44).join(w.columns)} only)' if w.columns else ''} | "
                     f"{len(w.files)} | {w.license} | {w.reason} |" for w in withheld)
    source = getattr(card, "source", "") or "the raw files listed above"
    recipe = "\n".join(rebuild_commands(benchmark, manifest.get("seed", 0), manifest.get("inputs", []),
                                        {key: manifest.get(key) for key in ORIGIN_KEYS}))
    return f"""## Withheld configs

This upload omits the files (or, where a column is named, the columns) below: their source terms forbid
redistribution, so they are not on the Hub. The
card's YAML lists only the uploaded configs; `manifest.json` still lists every file of the full release with its
sha256.

| config | files | license | why |
|---|---|---|---|
{rows}

Rebuild them from the raw files: get {source}; then, in a clone of culturebench's repository:

```bash
{recipe}
```

and load a withheld config from the local folder: `load_dataset("releases/{benchmark}", "{withheld[0].config}")`.
"""


def changes_since_remote(api, plan: Plan) -> list[str]:
    """The diff summary (``release_diff``) of the remote's current revision and the release, over what the upload
    holds (configs and columns withheld on either side are not compared); [] when the remote holds no release. A
    remote that cannot be read or verified is one line saying so (publishing replaces it)."""
    import tempfile

    from culturebench import release_diff

    remote = plan.remote
    if not (remote.exists and remote.branch_exists and "manifest.json" in remote.files):
        return []
    where = f"{plan.repo_id}@{plan.revision or 'main'}"
    with tempfile.TemporaryDirectory(prefix="culturebench-remote-") as temporary:
        try:
            folder = Path(api.snapshot_download(plan.repo_id, repo_type="dataset", revision=remote.sha,
                                                local_dir=temporary))
            old = Release.snapshot(folder, where)
        except InputError as exc:
            return [f"not compared: {exc}"]
        new = dataclasses.replace(Release.open(plan.release),
                                  withheld_configs=frozenset(w.config for w in plan.withheld if not w.columns),
                                  withheld_columns={w.config: frozenset(w.columns) for w in plan.withheld if w.columns})
        return release_diff.summary_lines(release_diff.diff(old, new))


def make_api(endpoint: str | None = None):
    from huggingface_hub import HfApi

    return HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None)


def publish(release: Path, repo_id: str, *, private: bool = False, revision: str | None = None,
            allow_restricted: tuple[str, ...] | list[str] = (), dry_run: bool = False,
            endpoint: str | None = None) -> Plan:
    """Plan and (unless ``dry_run``) send one commit with the changed files; returns the plan."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, get_token

    api = make_api(endpoint)
    try:
        with opened_once():  # the release's manifest read once, for the plan and the diff
            result = plan(release, repo_id, private=private, revision=revision, allow_restricted=allow_restricted,
                          api=api, offline_ok=dry_run)
            result.changes = changes_since_remote(api, result)
        needs_branch = bool(revision) and (not result.remote.exists or not result.remote.branch_exists)
        if dry_run or (result.up_to_date and not needs_branch):
            return result
        if not get_token():
            raise InputError("no Hugging Face token: set HF_TOKEN or log in with `hf auth login`")
        if not result.remote.exists:
            api.create_repo(repo_id, repo_type="dataset", private=result.private, exist_ok=True)
        if needs_branch:
            api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
            result.branch_created = True
        if result.up_to_date:
            return result
        operations = [CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=str(f.source) if f.source else f.content)
                      for f in result.uploads]
        operations += [CommitOperationDelete(path_in_repo=path) for path in result.deletions]
        withheld = ", ".join(f"{w.config}{' column ' + ', '.join(w.columns) if w.columns else ''} ({w.license})"
                             for w in result.withheld) or "none"
        info = api.create_commit(
            repo_id, operations, repo_type="dataset", revision=revision,
            commit_message=result.commit_message,
            commit_description=f"Withheld configs: {withheld}. Built by culturebench; see manifest.json.",
            parent_commit=result.remote.sha if result.remote.exists and result.remote.branch_exists else None,
        )
        result.commit = info.oid
        return result
    except InputError:
        raise
    except Exception as exc:  # httpx connection errors and the like: one line, no traceback, no headers
        raise hub_error(exc, api.endpoint) from None
