"""On-disk layout shared by every index kind.

An index folder holds::

    manifest.json     kind, settings, corpus fingerprint, source files (path, size, sha256),
                      passage count, build time, library versions
    passages.jsonl    one passage per line, in corpus order (row i = passage i)
    offsets.npy       byte offset of each line (memory-mapped: loading is instant,
                      a passage is parsed only when a search returns it)
    <kind files>      bm25/, dense/ ... written by the index itself

Loading checks the recorded sources: if a source file still exists and its
contents changed, loading refuses with a message that says to rebuild.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..core.errors import ConfigError
from ..core.types import Passage, to_json
from .sources import Corpus

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
FORMAT_VERSION = 1


class IndexMismatch(ConfigError):
    """The index was built from a corpus that is not the one given or on disk now."""


def file_sha256(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(file.relative_to(path).as_posix().encode())
            h.update(file_sha256(file).encode())
        return h.hexdigest()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def source_records(sources: Iterable[str]) -> list[dict[str, Any]]:
    out = []
    for src in sources:
        path = Path(src)
        out.append({"path": str(path.resolve()), "sha256": file_sha256(path)})
    return out


class PassageStore:
    """Read-only, memory-mapped passages of an index (row number -> Passage)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        try:
            self._offsets = np.load(folder / "offsets.npy", mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise damaged(folder, f"offsets.npy unreadable: {exc}") from None
        offsets = self._offsets
        if offsets.ndim != 1 or len(offsets) < 1 or offsets.dtype.kind not in "iu" or int(offsets[0]) != 0:
            raise damaged(folder, "offsets.npy is not a list of line offsets")
        try:
            self._fh = (folder / "passages.jsonl").open("rb")
        except OSError as exc:
            raise damaged(folder, f"passages.jsonl: {exc.strerror or exc}") from None
        size = os.fstat(self._fh.fileno()).st_size
        if int(offsets[-1]) != size or (len(offsets) > 1 and bool(np.any(np.diff(offsets) <= 0))):
            self._fh.close()
            raise damaged(folder, f"passages.jsonl has {size} bytes where offsets.npy expects {int(offsets[-1])} "
                                  "(truncated or rewritten)")
        self._mm = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ) if size else None

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def get(self, row: int) -> Passage:
        if self._mm is None or not 0 <= row < len(self):
            raise IndexError(row)
        start, end = int(self._offsets[row]), int(self._offsets[row + 1])
        try:
            rec = json.loads(self._mm[start:end])
            return Passage(id=str(rec["id"]), text=str(rec["text"]), title=str(rec.get("title", "")),
                           meta=rec.get("meta") or {})
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise damaged(self.folder, f"passages.jsonl row {row}: {exc}") from None

    def texts(self, rows: Iterable[int] | None = None) -> Iterable[str]:
        """Title + text of each row (what indexes embed or tokenize)."""
        for row in range(len(self)) if rows is None else rows:
            p = self.get(row)
            yield index_text(p)

    def close(self) -> None:
        if self._mm is not None:
            self._mm.close()
        self._fh.close()

    @staticmethod
    def write(folder: Path, passages: Sequence[Passage]) -> None:
        offsets = np.zeros(len(passages) + 1, dtype=np.int64)
        pos = 0
        with (folder / "passages.jsonl").open("wb") as fh:
            for i, p in enumerate(passages):
                line = (json.dumps({"id": p.id, "title": p.title, "text": p.text, "meta": to_json(dict(p.meta))},
                                   ensure_ascii=False) + "\n").encode("utf-8")
                fh.write(line)
                pos += len(line)
                offsets[i + 1] = pos
        np.save(folder / "offsets.npy", offsets)


def index_text(p: Passage) -> str:
    """The text an index sees for a passage: its title, then its body."""
    return f"{p.title}\n{p.text}" if p.title else p.text


def write_manifest(folder: Path, kind: str, settings: dict[str, Any], corpus: Corpus,
                   extra: dict[str, Any] | None = None) -> dict[str, Any]:
    manifest = {
        "format_version": FORMAT_VERSION,
        "kind": kind,
        "settings": settings,
        "corpus": {"fingerprint": corpus.fingerprint(), **corpus.summary(),
                   "source_files": source_records(corpus.sources)},
        **(extra or {}),
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8")
    return manifest


def read_manifest(folder: str | Path) -> dict[str, Any]:
    folder = Path(folder).expanduser()
    path = folder / MANIFEST
    if not path.is_file():
        raise ConfigError(f"{folder} is not an index (no {MANIFEST})",
                          hint="build one with `thoughtloom index build --corpus PATH --out DIR`")
    try:
        manifest = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise damaged(folder, f"{MANIFEST} is not readable JSON: {exc}") from None
    if not isinstance(manifest, dict):
        raise damaged(folder, f"{MANIFEST} is not a JSON object")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ConfigError(f"{folder}: index format {manifest.get('format_version')} is not {FORMAT_VERSION}",
                          hint="rebuild the index with this version of thoughtloom")
    corpus = manifest.get("corpus")
    if (manifest.get("kind") not in ("bm25", "dense", "hybrid") or not isinstance(manifest.get("settings"), dict)
            or not isinstance(corpus, dict) or not isinstance(corpus.get("fingerprint"), str)
            or not isinstance(corpus.get("source_files", []), list)):
        raise damaged(folder, f"{MANIFEST} lacks kind, settings or corpus fingerprint")
    return manifest


def damaged(folder: Path, why: str) -> ConfigError:
    """The one-line error for an index folder that cannot be read as built."""
    return ConfigError(f"index {folder} is damaged: {why}",
                       hint=f"rebuild it: thoughtloom index build --corpus ... --out {folder} --overwrite")


def check_corpus(folder: Path, manifest: dict[str, Any], corpus: Corpus | None = None,
                 check_sources: bool = True) -> None:
    """Refuse an index whose corpus changed since it was built.

    With ``corpus`` given, its fingerprint must equal the recorded one. Else,
    each recorded source file that still exists must hash as it did at build
    time (a missing source only logs: the index holds its own passages).
    """
    recorded = manifest["corpus"]
    rebuild = f"rebuild it: thoughtloom index build --corpus ... --out {folder}"
    if corpus is not None:
        if corpus.fingerprint() != recorded["fingerprint"]:
            raise IndexMismatch(
                f"index {folder} was built from a different corpus "
                f"({recorded['passages']} passages, fingerprint {recorded['fingerprint'][:12]}; "
                f"given {len(corpus)} passages, fingerprint {corpus.fingerprint()[:12]})", hint=rebuild)
        return
    if not check_sources:
        return
    for src in recorded.get("source_files", []):
        path = Path(src["path"])
        if not path.exists():
            log.info("index %s: source %s no longer exists; using the stored passages", folder, path)
            continue
        if file_sha256(path) != src["sha256"]:
            raise IndexMismatch(f"corpus file {path} changed since index {folder} was built", hint=rebuild)
