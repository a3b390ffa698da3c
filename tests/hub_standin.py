"""A small stand-in for the Hugging Face Hub HTTP API on 127.0.0.1, for tests without network.

It implements the few endpoints huggingface_hub (2.x) uses to create a dataset repo and commit to it, and records
every request (method, path, headers, body) so that a test can assert on exactly what was sent:

    POST /api/repos/create                                   create_repo
    GET  /api/datasets/ORG/NAME[/revision/REV]?blobs=True    dataset_info (siblings with blobId / lfs.sha256, cardData)
    GET  /api/datasets/ORG/NAME/tree/REV                     list_repo_tree (snapshot_download)
    GET  /datasets/ORG/NAME/resolve/REV/PATH (and HEAD)       a file's bytes (hf_hub_download, snapshot_download)
    POST /api/datasets/ORG/NAME/branch/BRANCH                create_branch (from main)
    POST /api/validate-yaml                                  README.md metadata check
    POST /api/datasets/ORG/NAME/preupload/REV                upload mode per file: lfs for .parquet, else regular
    POST /datasets/ORG/NAME.git/info/lfs/objects/batch       LFS batch (basic transfer)
    PUT  /lfs-upload/OID                                     the LFS object itself (sha256 checked)
    POST /api/datasets/ORG/NAME/commit/REV                   NDJSON: header, file, lfsFile, deletedFile lines

Xet uploads are not implemented: tests set ``huggingface_hub.constants.HF_HUB_DISABLE_XET``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import yaml


@dataclass
class Request:
    method: str
    path: str
    query: dict
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)

    def ndjson(self) -> list[dict]:
        return [json.loads(line) for line in self.body.splitlines() if line.strip()]


@dataclass
class Repo:
    private: bool
    branches: dict[str, dict[str, bytes]] = field(default_factory=lambda: {"main": {}})
    heads: dict[str, str] = field(default_factory=dict)
    commits: list[dict] = field(default_factory=list)


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubStandIn:
    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def __enter__(self) -> "HubStandIn":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- helpers for tests -----------------------------------------------------------------------------------------
    def files(self, repo_id: str, branch: str = "main") -> dict[str, bytes]:
        return dict(self.repos[repo_id].branches[branch])

    def commits(self, repo_id: str) -> list[dict]:
        return self.repos[repo_id].commits

    def materialize(self, repo_id: str, folder: Path, branch: str = "main") -> Path:
        """Write a branch's files into ``folder`` (what a clone would give)."""
        for path, data in self.files(repo_id, branch).items():
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return folder

    def writes(self) -> list[Request]:
        return [r for r in self.requests if r.method not in ("GET", "HEAD")]

    # -- server ----------------------------------------------------------------------------------------------------
    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request(self.command, unquote(parts.path), parse_qs(parts.query), dict(self.headers.items()), body)
                with hub._lock:
                    hub.requests.append(request)
                    status, payload, headers = hub._route(request)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":  # a HEAD answer has the GET's headers and no body
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_HEAD = _serve

        return Handler

    def _route(self, r: Request):
        p = r.path
        if r.method == "POST" and p == "/api/repos/create":
            return self._create(r.json())
        if r.method == "POST" and p == "/api/validate-yaml":
            return 200, {"errors": [], "warnings": []}, {}
        if r.method == "PUT" and p.startswith("/lfs-upload/"):
            oid = p.rsplit("/", 1)[1]
            if hashlib.sha256(r.body).hexdigest() != oid:
                return 400, {"error": "sha256 mismatch"}, {}
            self.lfs[oid] = r.body
            return 200, {}, {}
        if p.startswith("/datasets/") and p.endswith(".git/info/lfs/objects/batch"):
            repo_id = p[len("/datasets/"):-len(".git/info/lfs/objects/batch")]
            if repo_id not in self.repos:
                return self._not_found()
            objects = [{"oid": o["oid"], "size": o["size"], **({} if o["oid"] in self.lfs else
                        {"actions": {"upload": {"href": f"{self.endpoint}/lfs-upload/{o['oid']}"}}})}
                       for o in r.json()["objects"]]
            return 200, {"transfer": "basic", "objects": objects}, {}
        if r.method in ("GET", "HEAD") and p.startswith("/datasets/") and "/resolve/" in p:
            return self._resolve(p)
        if p.startswith("/api/datasets/"):
            rest = p[len("/api/datasets/"):].split("/")
            repo_id, tail = "/".join(rest[:2]), rest[2:]
            repo = self.repos.get(repo_id)
            if repo is None:
                return self._not_found()
            if r.method == "GET" and not tail:
                return self._info(repo_id, repo, "main")
            if r.method == "GET" and tail[0] == "revision":
                return self._info(repo_id, repo, "/".join(tail[1:]))
            if r.method == "GET" and tail[0] == "tree":
                return self._tree(repo, "/".join(tail[1:]))
            if r.method == "POST" and tail[0] == "branch":
                branch = "/".join(tail[1:])
                if branch in repo.branches:
                    return 409, {"error": "branch exists"}, {}
                repo.branches[branch] = dict(repo.branches["main"])
                repo.heads[branch] = repo.heads["main"]
                return 200, {}, {}
            if r.method == "POST" and tail[0] == "preupload":
                return self._preupload(repo, "/".join(tail[1:]), r.json())
            if r.method == "POST" and tail[0] == "commit":
                return self._commit(repo_id, repo, "/".join(tail[1:]), r)
        return 404, {"error": f"stand-in has no route {r.method} {p}"}, {}

    @staticmethod
    def _not_found():
        return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}

    def _create(self, payload: dict):
        repo_id = f"{payload['organization']}/{payload['name']}"
        if payload.get("type") != "dataset":
            return 400, {"error": "stand-in only hosts datasets"}, {}
        if repo_id in self.repos:
            return 409, {"error": "You already created this dataset repo", "url": f"{self.endpoint}/datasets/{repo_id}"}, {}
        private = payload.get("visibility") == "private" or bool(payload.get("private"))
        repo = Repo(private=private)
        repo.branches["main"] = {".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"}
        repo.heads["main"] = hashlib.sha1(repo_id.encode()).hexdigest()
        self.repos[repo_id] = repo
        return 200, {"url": f"{self.endpoint}/datasets/{repo_id}"}, {}

    def _info(self, repo_id: str, repo: Repo, branch: str):
        if branch not in repo.branches:
            return 404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"}
        files = repo.branches[branch]
        siblings = []
        for path, data in sorted(files.items()):
            entry = {"rfilename": path, "size": len(data)}
            if path.endswith(".parquet"):
                pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{hashlib.sha256(data).hexdigest()}\nsize {len(data)}\n".encode()
                entry["blobId"] = git_blob_oid(pointer)
                entry["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": len(pointer)}
            else:
                entry["blobId"] = git_blob_oid(data)
            siblings.append(entry)
        card = {}
        readme = files.get("README.md", b"").decode()
        if readme.startswith("---\n"):
            card = yaml.safe_load(readme[4:readme.index("\n---\n", 4)]) or {}
        return 200, {"id": repo_id, "private": repo.private, "sha": repo.heads[branch], "siblings": siblings,
                     "cardData": card, "tags": []}, {}

    def _tree(self, repo: Repo, revision: str):
        """GET /api/datasets/ORG/NAME/tree/REV?recursive=true (list_repo_tree, snapshot_download): every file."""
        branch = next((b for b, head in repo.heads.items() if revision in (b, head)), None)
        if branch is None:
            return 404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"}
        entries = []
        for path, data in sorted(repo.branches[branch].items()):
            entry = {"type": "file", "path": path, "size": len(data), "oid": git_blob_oid(data)}
            if path.endswith(".parquet"):
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            entries.append(entry)
        return 200, entries, {}

    def _resolve(self, p: str):
        """GET/HEAD /datasets/ORG/NAME/resolve/REV/PATH (hf_hub_download, snapshot_download): REV a branch or a
        branch's head commit."""
        repo_id, rest = p[len("/datasets/"):].split("/resolve/", 1)
        repo = self.repos.get(repo_id)
        if repo is None:
            return self._not_found()
        for branch, head in repo.heads.items():
            if rest.startswith(f"{branch}/") or rest.startswith(f"{head}/"):
                path = rest.split("/", len(branch.split("/")) if rest.startswith(f"{branch}/") else 1)[-1]
                data = repo.branches[branch].get(path)
                if data is None:
                    return 404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"}
                etag = hashlib.sha256(data).hexdigest() if path.endswith(".parquet") else git_blob_oid(data)
                return 200, data, {"X-Repo-Commit": head, "ETag": f'"{etag}"'}
        return 404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"}

    def _preupload(self, repo: Repo, branch: str, payload: dict):
        files = repo.branches.get(branch, repo.branches["main"])
        out = []
        for f in payload["files"]:
            lfs = f["path"].endswith(".parquet")
            existing = files.get(f["path"])
            oid = None if existing is None else (hashlib.sha256(existing).hexdigest() if lfs else hashlib.sha1(existing).hexdigest())
            out.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": oid})
        return 200, {"files": out}, {}

    def _commit(self, repo_id: str, repo: Repo, branch: str, r: Request):
        if branch not in repo.branches:
            return 404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"}
        lines = r.ndjson()
        header = lines[0]
        assert header["key"] == "header", header
        parent = header["value"].get("parentCommit")
        if parent is not None and parent != repo.heads[branch]:
            return 412, {"error": "parent commit is not the head"}, {}
        files = dict(repo.branches[branch])
        for line in lines[1:]:
            key, value = line["key"], line["value"]
            if key == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "lfsFile":
                if value["oid"] not in self.lfs:
                    return 422, {"error": f"LFS object {value['oid']} was not uploaded"}, {}
                files[value["path"]] = self.lfs[value["oid"]]
            elif key == "deletedFile":
                if value["path"] not in files:
                    return 404, {"error": "A file with this name doesn't exist"}, {"X-Error-Code": "EntryNotFound"}
                del files[value["path"]]
            elif key == "deletedFolder":
                files = {k: v for k, v in files.items() if not k.startswith(value["path"].rstrip("/") + "/")}
            else:
                return 400, {"error": f"unknown key {key}"}, {}
        oid = hashlib.sha1(f"{repo.heads[branch]}{len(repo.commits)}{r.body!r}".encode()).hexdigest()
        repo.branches[branch] = files
        repo.heads[branch] = oid
        repo.commits.append({"branch": branch, "oid": oid, "summary": header["value"]["summary"],
                             "description": header["value"].get("description", ""),
                             "operations": [(l["key"], l["value"]["path"]) for l in lines[1:]]})
        return 200, {"commitUrl": f"{self.endpoint}/datasets/{repo_id}/commit/{oid}", "commitOid": oid,
                     "pullRequestUrl": None}, {}
