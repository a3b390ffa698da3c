"""Response cache: one SQLite file (WAL), one row per (backend settings, messages, sampling, sample index).

Writes are committed in groups: a ``put`` commits at once when the last commit is ``commit_interval_s`` (0.1 s)
old, else within that interval (a timer commits what a burst left), so a run killed with ``kill -9`` loses only
the requests in flight and at most the last 0.1 s of answers, and the next run asks the model for the missing ones
only. One commit per answer cost more CPU than the whole HTTP client at 256 requests in flight
(bench/eval_overhead.py). Several processes may open the same file one after another (and
even at once: SQLite locks, writers wait up to ``busy_timeout``).

The table is an ordinary rowid table with a unique index on the key: rows are appended in arrival order and only the
64-character key goes into a random place of a B-tree. Before issue #28 it was a ``WITHOUT ROWID`` table, which
keeps whole rows (about 2 KB with the request JSON) in key order: each insert landed at a random place among them,
which took 2-4x the time and left pages half empty (4.7 KB on disk per answer). Files made that way are read and
written as before.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from culturebench.errors import InputError
from culturebench.chat import ChatRequest, ChatResponse

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    finish_reason TEXT,
    created_at TEXT NOT NULL
)
"""
_COLUMNS = ("key", "request", "text", "prompt_tokens", "completion_tokens", "finish_reason", "created_at")
_LOOKUP_CHUNK = 500  # keys per SELECT ... IN (...) (below SQLite's variable limit)


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(obj: object) -> str:
    """``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``: the key's material, through
    one encoder for the process (``json.dumps`` builds one per call with these options; issue #65)."""
    return _CANONICAL.encode(obj)


def key_material(cache_params: Mapping, request: ChatRequest) -> dict:
    """What a response depends on: the backend's settings, the messages, the sampling and the sample index.

    Numbers are normalised (``temperature=0`` and ``0.0`` give the same key)."""
    s = request.sampling
    sampling = {"temperature": float(s.temperature), "max_tokens": int(s.max_tokens), "top_p": float(s.top_p),
                "seed": None if s.seed is None else int(s.seed)}
    if s.stop:  # only when set, so requests without stop sequences keep their keys
        sampling["stop"] = list(s.stop)
    return {
        "backend": dict(cache_params),
        "messages": request.message_dicts(),
        "sampling": sampling,
        "sample_index": int(request.sample_index),
    }


def cache_key(cache_params: Mapping, request: ChatRequest) -> str:
    return hashlib.sha256(canonical_json(key_material(cache_params, request)).encode()).hexdigest()


class CacheWriteError(InputError):
    """The cache cannot be written (disk full, read-only file system): the run stops, saying how many answers the
    file keeps (the next run resumes from them)."""


def _write_failure(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "full" in str(exc):
        return "disk full"
    return " ".join(str(exc).split()) or type(exc).__name__


class ResponseCache:
    """``ResponseCache(path)``: ``get_many(keys)``, ``put(key, material, response)``; a context manager.

    A file that is not a culturebench response cache (another program's SQLite file, or not SQLite at all) is an
    InputError naming it, before anything is written to it; a cache that received no answer is removed when closed
    (a run that could not reach its server leaves no empty file behind)."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0, commit_interval_s: float = 0.1) -> None:
        self.path = Path(path)
        self.commit_interval_s = commit_interval_s
        self._last_commit = 0.0
        self._pending = 0  # rows written since the last commit
        self._written = 0  # rows written by this object
        self._timer: threading.Timer | None = None
        self._created = not self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None,
                                       check_same_thread=False)
            self._check_foreign()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # durable across a killed process (not a power cut)
            self._db.execute(_SCHEMA)
        except sqlite3.OperationalError as exc:  # read-only folder, disk full, locked: the file may be fine
            self._db.close()
            raise InputError(f"cannot open the response cache ({_write_failure(exc)})", file=self.path) from None
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise InputError(f"not a response cache ({' '.join(str(exc).split())}); move it away or choose another "
                             "--out", file=self.path) from None
        self._lock = threading.Lock()  # put() may come from a backend's thread

    def _check_foreign(self) -> None:
        """Refuse an SQLite file that holds other tables or a ``responses`` table of another shape."""
        tables = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return
        columns = tuple(row[1] for row in self._db.execute("PRAGMA table_info(responses)"))
        if columns != _COLUMNS:
            self._db.close()
            found = f"columns {', '.join(columns)}" if columns else f"tables {', '.join(sorted(tables))}"
            raise InputError(f"an SQLite file of another program ({found}), not a response cache; move it away or "
                             "choose another --out", file=self.path)

    # --- reading ---
    def get_many(self, keys: Iterable[str]) -> dict[str, ChatResponse]:
        """The cached responses among ``keys`` (absent keys are left out)."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, ChatResponse] = {}
        with self._lock:
            for start in range(0, len(keys), _LOOKUP_CHUNK):
                chunk = keys[start:start + _LOOKUP_CHUNK]
                rows = self._db.execute(
                    "SELECT key, text, prompt_tokens, completion_tokens, finish_reason FROM responses "
                    f"WHERE key IN ({','.join('?' * len(chunk))})", chunk).fetchall()
                for key, text, prompt_tokens, completion_tokens, finish_reason in rows:
                    found[key] = ChatResponse(text, prompt_tokens, completion_tokens, finish_reason)
        return found

    def get(self, key: str) -> ChatResponse | None:
        return self.get_many([key]).get(key)

    def __len__(self) -> int:
        with self._lock:
            self._commit()
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    # --- writing ---
    def put(self, key: str, material: Mapping | str, response: ChatResponse) -> None:
        """Store one response and commit (``material``: the key's JSON, kept for inspection)."""
        request_json = material if isinstance(material, str) else canonical_json(material)
        created_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        row = (key, request_json, response.text, int(response.prompt_tokens), int(response.completion_tokens),
               response.finish_reason, created_at)
        with self._lock:
            try:
                if not self._db.in_transaction:
                    self._db.execute("BEGIN")
                self._insert(row)
                self._pending += 1
                self._written += 1
                if time.monotonic() - self._last_commit >= self.commit_interval_s:
                    self._commit()
            except (OSError, sqlite3.OperationalError) as exc:
                raise self._write_error(exc) from None
            if self._pending and self._timer is None:
                self._timer = threading.Timer(self.commit_interval_s, self._timed_flush)
                self._timer.daemon = True
                self._timer.start()

    def _timed_flush(self) -> None:
        """The timer's commit: a failure is left for the next ``put`` or ``flush`` to report (not a thread's
        traceback)."""
        try:
            self.flush()
        except CacheWriteError:
            pass

    def _insert(self, row: tuple) -> None:
        self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)", row)

    def _write_error(self, exc: BaseException) -> CacheWriteError:
        """The error of a failed write, after committing what can still be committed; says what the file keeps."""
        try:
            self._commit()
        except (OSError, sqlite3.Error):
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            self._pending = 0
        try:
            kept = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        except sqlite3.Error:
            kept = "?"
        return CacheWriteError(f"cannot write the response cache ({_write_failure(exc)}); it keeps {kept} answers: "
                               "free space and re-run the same command to resume", file=self.path)

    def flush(self) -> None:
        """Commit what ``put`` has written."""
        with self._lock:
            try:
                self._commit()
            except (OSError, sqlite3.OperationalError) as exc:
                raise self._write_error(exc) from None

    def _commit(self) -> None:  # with the lock held
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._db.in_transaction:
            self._db.execute("COMMIT")
            self._pending = 0
        self._last_commit = time.monotonic()

    def put_request(self, cache_params: Mapping, request: ChatRequest, response: ChatResponse) -> str:
        material = key_material(cache_params, request)
        text = canonical_json(material)
        key = hashlib.sha256(text.encode()).hexdigest()
        self.put(key, text, response)
        return key

    # --- lifecycle ---
    def close(self) -> None:
        """Commit and close; a file this object created and never wrote to is removed."""
        with self._lock:
            try:
                self._commit()
            finally:
                self._db.close()
            if self._created and not self._written:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
