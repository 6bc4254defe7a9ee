"""Persistent completion cache on SQLite (WAL).

Key: sha256 of the model identity plus the normalized request (messages,
decoding parameters and, when sampling, the seed and ``sample_index``).
Credentials never reach the key. N samples at temperature > 0 are N distinct
entries, so a sampled run replays exactly.

Modes:

``use``      read hits, call the model on misses and store them (default)
``refresh``  always call the model and overwrite the stored entries
``off``      pass through; read and write nothing
``replay``   read only; a miss raises :class:`CacheMiss` (reproduce a
             published run at zero cost, or prove that it is complete)

Many processes may share one file: WAL mode plus a busy timeout lets
concurrent writers wait for each other, and ``INSERT OR REPLACE`` makes a
duplicate write harmless. Processes on different machines (a Ray cluster's
nodes) each write a file of their own; :meth:`CompletionStore.merge` joins
them into one (``thoughtloom cache merge``).

A cache that cannot be read or written any more (a full disk, a read-only or
locked file, a damaged one) is *dropped* for the rest of the run: one warning
names the file, SQLite's own reason and what to free (:class:`CacheFailed`),
and every later call goes to the model uncached. A call the model answered is
returned (and counted by the meter above) whether or not the cache stored it;
nothing is lost but the cache entries, and a rerun with room on the disk
stores them. (Stopping the run instead would cost every example in flight.)

The store keeps what it is given: text that SQLite cannot encode (lone
surrogates from a backend that did not clean them) is stored with U+FFFD in
their place, never a crash.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Sequence

from ..core.errors import CacheMiss, ConfigError
from ..core.text import encodable
from ..core.protocols import LM
from ..core.types import Completion, Request, TokenLogprob, Usage, request_hash

log = logging.getLogger(__name__)

CacheMode = Literal["use", "refresh", "off", "replay"]
MODES: tuple[str, ...] = ("use", "refresh", "off", "replay")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    logprobs TEXT,
    latency_s REAL NOT NULL,
    created REAL NOT NULL
)
"""
_COLUMNS = "key, model, text, finish_reason, prompt_tokens, completion_tokens, logprobs, latency_s, created"


class CacheFailed(ConfigError):
    """The cache file cannot be read or written any more; says which file, why and what to do."""


#: What to do about each SQLite failure a cache meets mid-run, by its words.
_REMEDIES = (
    ("disk is full", "free space on the disk holding {folder} (`thoughtloom cache clear`, or delete files there)"),
    ("readonly", "make {path} writable, or pass --cache PATH somewhere writable"),
    ("locked", "another process holds {path} locked; wait for it or pass --cache PATH"),
    ("busy", "another process holds {path} locked; wait for it or pass --cache PATH"),
    ("malformed", "the file is damaged: move {path} aside and rerun (the cache is rebuilt)"),
)


def cache_failure(path: Path, exc: BaseException, doing: str) -> CacheFailed:
    """``exc`` (SQLite's or the OS's) as one line naming ``path``, the reason and the remedy."""
    reason = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__
    low = reason.lower()
    remedy = next((r for words, r in _REMEDIES if words in low), "check the disk holding {folder}")
    return CacheFailed(f"cannot {doing} cache {path}: {reason}",
                       hint=remedy.format(path=path, folder=path.parent) + ", or pass --no-cache")


class CompletionStore:
    """The SQLite file. Thread-safe; each operation is one short transaction."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(self.path), timeout=30.0, check_same_thread=False, isolation_level=None
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise ConfigError(
                f"cannot open cache {self.path}: {reason}", hint="pass --cache PATH or --no-cache"
            ) from None
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> dict[str, Completion]:
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        with self._lock:
            try:
                rows = self._db.execute(
                    f"SELECT key, model, text, finish_reason, prompt_tokens, completion_tokens, "
                    f"logprobs FROM completions WHERE key IN ({marks})",
                    list(keys),
                ).fetchall()
            except (sqlite3.Error, OSError) as exc:
                raise cache_failure(self.path, exc, "read") from exc
        return {row[0]: _row_to_completion(row) for row in rows}

    def model_seconds(self, keys: Sequence[str]) -> dict[str, float]:
        """The model time stored with each of ``keys`` that the cache holds (what the call took when it
        ran; a hit returns 0 s, so an estimate from a cached run reads it here)."""
        found: dict[str, float] = {}
        keys = list(dict.fromkeys(keys))
        for start in range(0, len(keys), 500):  # SQLite bounds the parameters of one statement
            chunk = keys[start:start + 500]
            with self._lock:
                rows = self._db.execute(f"SELECT key, latency_s FROM completions WHERE key IN "
                                        f"({','.join('?' * len(chunk))})", chunk).fetchall()
            found.update((k, float(v or 0.0)) for k, v in rows)
        return found

    def put_many(self, items: Sequence[tuple[str, Completion]]) -> None:
        if not items:
            return
        now = time.time()
        rows = [
            (
                key,
                encodable(c.model),
                encodable(c.text),
                encodable(c.finish_reason),
                c.usage.prompt_tokens,
                c.usage.completion_tokens,
                _dump_logprobs(c.logprobs),
                c.usage.latency_s,
                now,
            )
            for key, c in items
        ]
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO completions VALUES (?,?,?,?,?,?,?,?,?)", rows
                    )
                    self._db.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise
            except (sqlite3.Error, OSError) as exc:  # SQLite's own reason, not a failed ROLLBACK's
                raise cache_failure(self.path, exc, "write") from exc

    def _rollback(self) -> None:
        """Undo the open transaction, if SQLite has not already (it does on a full disk: a
        second ROLLBACK would hide "database or disk is full" behind "no transaction is active")."""
        if self._db.in_transaction:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.Error as exc:  # the write's error is the one to report
                log.debug("rollback of %s failed: %s", self.path, exc)

    def merge(self, source: str | Path) -> dict[str, int]:
        """Copy the entries of another cache file into this one; an entry both hold keeps this file's.

        Returns how many were ``added``, already here the ``same``, and here
        but ``differing`` (a sampled call answered twice, say by two nodes
        that both ran an example): the first file merged wins, as the first
        writer of a shared file would have.
        """
        src = Path(source).expanduser()
        if not src.is_file():
            raise ConfigError(f"cache file not found: {src}", hint="check the path")
        if src.resolve() == self.path.resolve():
            raise ConfigError(f"cannot merge {src} into itself", hint="pass --into another file")
        same_text = "s.text = m.text AND s.finish_reason = m.finish_reason AND s.logprobs IS m.logprobs"
        with self._lock:
            try:
                self._db.execute("ATTACH DATABASE ? AS src", (str(src),))
            except sqlite3.DatabaseError as exc:  # not SQLite at all
                raise ConfigError(f"cannot read cache {src}: {exc}", hint="pass thoughtloom cache files") from None
            try:
                if not self._db.execute("SELECT 1 FROM src.sqlite_master WHERE type = 'table' "
                                        "AND name = 'completions'").fetchone():
                    raise ConfigError(f"{src} is not a thoughtloom cache (it has no completions table)")
                same, differing = self._db.execute(
                    f"SELECT COALESCE(SUM({same_text}), 0), COALESCE(SUM(NOT ({same_text})), 0) "
                    "FROM src.completions s JOIN main.completions m ON s.key = m.key").fetchone()
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    added = self._db.execute(f"INSERT OR IGNORE INTO main.completions ({_COLUMNS}) "
                                             f"SELECT {_COLUMNS} FROM src.completions").rowcount
                    self._db.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise
            except sqlite3.DatabaseError as exc:  # a damaged file, or another schema
                raise ConfigError(f"cannot read cache {src}: {exc}", hint="pass thoughtloom cache files") from None
            finally:
                self._db.execute("DETACH DATABASE src")
        return {"added": added, "same": same, "differing": differing}

    def stats(self) -> dict[str, object]:
        with self._lock:
            n, saved_s, toks = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(latency_s),0), "
                "COALESCE(SUM(prompt_tokens + completion_tokens),0) FROM completions"
            ).fetchone()
            models = self._db.execute(
                "SELECT model, COUNT(*) FROM completions GROUP BY model ORDER BY 2 DESC"
            ).fetchall()
        size = sum(
            p.stat().st_size
            for p in (self.path, Path(f"{self.path}-wal"))
            if p.exists()
        )
        return {
            "path": str(self.path),
            "entries": n,
            "bytes": size,
            "tokens": toks,
            "model_seconds_stored": round(saved_s, 3),
            "by_model": dict(models),
        }

    def clear(self, model: str | None = None) -> int:
        with self._lock:
            if model is None:
                cur = self._db.execute("DELETE FROM completions")
            else:
                cur = self._db.execute("DELETE FROM completions WHERE model = ?", (model,))
            self._db.execute("VACUUM")
        return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _dump_logprobs(logprobs: tuple[TokenLogprob, ...] | None) -> str | None:
    if logprobs is None:
        return None
    return json.dumps([[encodable(t.token), t.logprob, [[encodable(a), b] for a, b in t.top]] for t in logprobs])


def _row_to_completion(row: tuple) -> Completion:
    _key, model, text, finish, pt, ct, lp = row
    logprobs = None
    if lp is not None:
        logprobs = tuple(
            TokenLogprob(tok, float(p), tuple((a, float(b)) for a, b in top))
            for tok, p, top in json.loads(lp)
        )
    return Completion(
        text=text,
        finish_reason=finish,
        usage=Usage(prompt_tokens=pt, completion_tokens=ct, cached=True, latency_s=0.0),
        logprobs=logprobs,
        model=model,
    )


@dataclass
class Cached:
    """LM wrapper that consults a :class:`CompletionStore` first.

    ``dropped``: why the store stopped working mid-run (:class:`CacheFailed`, warned once);
    from then on every call goes to ``inner`` uncached. In ``replay`` mode a store that
    cannot be read is raised instead: replay has nothing to fall back on.
    """

    inner: LM
    store: CompletionStore | None
    mode: CacheMode = "use"
    dropped: CacheFailed | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"unknown cache mode {self.mode!r}", hint=f"use one of {MODES}")
        if self.mode != "off" and self.store is None:
            raise ConfigError(f"cache mode {self.mode!r} needs a cache file", hint="pass --cache PATH")

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        requests = list(requests)
        if self.mode == "off" or self.store is None or self.dropped is not None:
            return await self.inner.generate(requests)
        keys = [request_hash(self.model_id, r) for r in requests]
        try:
            hits = self.store.get_many(keys) if self.mode != "refresh" else {}
        except CacheFailed as exc:
            if self.mode == "replay":
                raise
            self._drop(exc)
            return await self.inner.generate(requests)
        missing = [i for i, k in enumerate(keys) if k not in hits]
        if missing and self.mode == "replay":
            raise CacheMiss(
                f"{len(missing)} of {len(requests)} requests are not in the cache {self.store.path}",
                hint="replay needs the cache of the original run; drop --replay to call the model",
            )
        fresh: list[Completion] = []
        if missing:
            fresh = await self.inner.generate([requests[i] for i in missing])
            if self.dropped is None:  # another batch may have dropped it while this one waited
                try:
                    self.store.put_many([(keys[i], c) for i, c in zip(missing, fresh)])
                except CacheFailed as exc:  # the answers are paid for: returned, and counted above
                    self._drop(exc)
        out: list[Completion] = [hits[k] if k in hits else None for k in keys]  # type: ignore[misc]
        for i, c in zip(missing, fresh):
            out[i] = c
        return out

    def _drop(self, exc: CacheFailed) -> None:
        if self.dropped is None:
            self.dropped = exc
            log.warning("%s; the run goes on without the cache", exc)

    async def aclose(self) -> None:
        await self.inner.aclose()
