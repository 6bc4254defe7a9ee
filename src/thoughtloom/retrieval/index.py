"""Build, save and open indexes; the :class:`Index` is a batched ``Retriever``.

::

    corpus = read_corpus("docs/", "dir")
    build_index(corpus, "hybrid", "idx/")          # once
    index = open_index("idx/")                     # fast: memory-mapped
    hits = await index.search(["who wrote ..."], k=5)

``open_index`` refuses an index whose corpus changed (see ``store.check_corpus``).
A :class:`TemporaryIndex` builds itself in a temporary folder on its first
search (the eval runner's index over a task's own paragraphs).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..core.errors import ConfigError
from ..core.files import no_space_names
from ..core.types import ScoredPassage
from .bm25 import BM25Searcher, BM25Settings
from .corpus import read_corpus
from .dense import DenseSearcher, DenseSettings, Encoder
from .hybrid import FusionSettings, rrf
from .links import LinkSettings, TitleLinks, expand
from .sources import Corpus
from .store import PassageStore, check_corpus, damaged, index_text, read_manifest, write_manifest

log = logging.getLogger(__name__)

KINDS = ("bm25", "dense", "hybrid")


class Index:
    """A searchable index folder. ``search`` is async and batched; ``search_sync`` is the same, blocking."""

    def __init__(self, folder: Path, manifest: dict[str, Any], passages: PassageStore,
                 bm25: BM25Searcher | None, dense: DenseSearcher | None, fusion: FusionSettings | None,
                 links: LinkSettings | None = None) -> None:
        self.folder = folder
        self.links = links  # title-link expansion (links.seeds > 0), after the kind's own search
        self._titles: TitleLinks | None = None
        self.manifest = manifest
        self.passages = passages
        self.kind: str = manifest["kind"]
        self.bm25 = bm25
        self.dense = dense
        self.fusion = fusion
        blob = json.dumps({"corpus": manifest["corpus"]["fingerprint"], "kind": self.kind,
                           "settings": manifest["settings"]}, sort_keys=True)
        #: identifies corpus + kind + settings; the retrieval cache key starts with it.
        self.fingerprint = hashlib.sha256(blob.encode()).hexdigest()

    def __len__(self) -> int:
        return len(self.passages)

    def search_rows(self, queries: Sequence[str], k: int) -> list[list[tuple[int, float]]]:
        if k < 1:
            raise ConfigError(f"k must be >= 1, got {k}")
        if self.links is None or not self.links.seeds:
            return self._ranked(queries, k)
        if self._titles is None:
            self._titles = TitleLinks([self.passages.get(r).title for r in range(len(self.passages))])
        first = self._ranked(queries, max(k, self.links.depth))
        return expand(first, lambda r: self.passages.get(r).text, self._titles, self.links, k)

    def _ranked(self, queries: Sequence[str], k: int) -> list[list[tuple[int, float]]]:
        if self.kind == "bm25":
            assert self.bm25 is not None
            return self.bm25.search_rows(queries, k)
        if self.kind == "dense":
            assert self.dense is not None
            return self.dense.search_rows(queries, k)
        assert self.bm25 is not None and self.dense is not None and self.fusion is not None
        f = self.fusion
        depth = max(k, f.depth)
        sparse = self.bm25.search_rows(queries, depth)
        dense = self.dense.search_rows(queries, depth)
        return [rrf([[r for r, _ in s], [r for r, _ in d]], [f.bm25_weight, f.dense_weight], k, f.rrf_k)
                for s, d in zip(sparse, dense)]

    def search_sync(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]:
        return [[ScoredPassage(self.passages.get(row), score, rank) for rank, (row, score) in enumerate(hits)]
                for hits in self.search_rows(list(queries), k)]

    async def search(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]:
        return await asyncio.to_thread(self.search_sync, list(queries), k)

    def close(self) -> None:
        self.passages.close()


class TemporaryIndex:
    """An index over corpus files, built in a temporary folder on its first search.

    Costs nothing until a strategy searches; concurrent first searches build
    it once. The folder is removed with this object.
    """

    def __init__(self, paths: Sequence[str | Path], fmt: str = "auto", kind: str = "bm25",
                 settings: dict[str, Any] | None = None) -> None:
        self.paths = [Path(p) for p in paths]
        self.fmt, self.kind = fmt, kind
        self.settings = dict(settings or {})  # build_index's settings (e.g. {"links": {"seeds": 3}})
        _settings(kind, self.settings)  # a bad setting is refused here, before any search
        self._index: Index | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._lock: asyncio.Lock | None = None

    def open(self) -> Index:
        """The index, built now if it is not built yet."""
        if self._index is None:
            corpus = read_corpus(self.paths, self.fmt)
            folder = tempfile.TemporaryDirectory(prefix=f"thoughtloom-{self.paths[0].stem}-",
                                                 ignore_cleanup_errors=True)
            build_index(corpus, self.kind, folder.name, self.settings or None)
            self._folder, self._index = folder, open_index(folder.name)
        return self._index

    @property
    def fingerprint(self) -> str | None:
        """With settings, what they are (a run's identity then tells a linked index from a plain one;
        the paths are left out, as a data root moves between machines); None without any, as before."""
        if not self.settings:
            return None
        text = json.dumps({"kind": self.kind, "settings": self.settings}, sort_keys=True)
        return "temporary-settings-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def __len__(self) -> int:
        return len(self.open())

    async def search(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]:
        if self._index is None:
            self._lock = self._lock or asyncio.Lock()
            async with self._lock:
                if self._index is None:
                    await asyncio.to_thread(self.open)
        return await self.open().search(queries, k)


def spell_settings(settings: Mapping[str, Any]) -> str:
    """Build settings as ``index build --set`` keys write them: ``{"links": {"seeds": 3}}`` ->
    ``links.seeds=3`` (parts joined with ", "; "" for none)."""
    return ", ".join(f"{part}.{k}={v}" for part, kv in settings.items()
                     for k, v in (kv.items() if isinstance(kv, Mapping) else []))


def _settings(kind: str, settings: dict[str, Any]) -> tuple[BM25Settings | None, DenseSettings | None,
                                                            FusionSettings | None, LinkSettings | None]:
    """Split a flat or nested settings dict into the parts ``kind`` uses (``links`` only when given)."""
    if kind not in KINDS:
        raise ConfigError(f"unknown index kind {kind!r}", hint=f"use one of {', '.join(KINDS)}")
    bm = BM25Settings.from_dict(settings.get("bm25", {})) if kind in ("bm25", "hybrid") else None
    de = DenseSettings.from_dict(settings.get("dense", {})) if kind in ("dense", "hybrid") else None
    fu = FusionSettings.from_dict(settings.get("fusion", {})) if kind == "hybrid" else None
    li = LinkSettings.from_dict(settings["links"]) if "links" in settings else None
    return bm, de, fu, li


def build_index(corpus: Corpus, kind: str, out: str | Path, settings: dict[str, Any] | None = None, *,
                encoder: Encoder | None = None, overwrite: bool = False,
                show_progress: bool = False) -> dict[str, Any]:
    """Index ``corpus`` into folder ``out``; returns the manifest (with build timings).

    ``settings`` is ``{"bm25": {...}, "dense": {...}, "fusion": {...}}`` with
    the fields of :class:`BM25Settings`, :class:`DenseSettings` and
    :class:`FusionSettings`; missing fields take their defaults.

    The index is built in a folder beside ``out`` and renamed into place when whole, so a build
    that is interrupted or runs out of disk leaves no half index (and an ``--overwrite`` keeps the
    old one until the new one is done); a full disk is one line naming the folder.
    """
    folder = Path(out).expanduser()
    bm, de, fu, li = _settings(kind, settings or {})
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"index folder {folder} is a file", hint="choose another --out")
    replace = folder.exists() and any(folder.iterdir())
    if replace:
        if not overwrite:
            raise ConfigError(f"{folder} exists and is not empty", hint="pass --overwrite or choose another --out")
        if not ((folder / "manifest.json").is_file() or (folder / "passages.jsonl").is_file()):
            raise ConfigError(f"refusing to overwrite {folder}: it is not an index folder")
    folder.parent.mkdir(parents=True, exist_ok=True)
    building = folder.with_name(f".{folder.name}.building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    try:
        with no_space_names(f"the index {folder}", "nothing was left half-built"):
            building.mkdir()
            manifest = _build_into(building, corpus, kind, bm, de, fu, li, encoder, show_progress)
            old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
            if folder.exists():
                os.replace(folder, old)  # an empty folder, or the index --overwrite replaces
            os.replace(building, folder)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return manifest


def _build_into(folder: Path, corpus: Corpus, kind: str, bm: Any, de: Any, fu: Any, li: Any, encoder: Encoder | None,
                show_progress: bool) -> dict[str, Any]:
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    PassageStore.write(folder, corpus.passages)
    timings["passages_s"] = time.perf_counter() - t0
    texts = [index_text(p) for p in corpus.passages]
    if bm is not None:
        t0 = time.perf_counter()
        BM25Searcher.build(texts, bm, show_progress=show_progress).save(folder / "bm25")
        timings["bm25_s"] = time.perf_counter() - t0
    if de is not None:
        t0 = time.perf_counter()
        DenseSearcher.build(texts, de, encoder=encoder, show_progress=show_progress).save(folder / "dense")
        timings["dense_s"] = time.perf_counter() - t0
    resolved = {name: part.as_dict() for name, part in (("bm25", bm), ("dense", de), ("fusion", fu), ("links", li))
                if part}
    extra = {"build": {k: round(v, 3) for k, v in timings.items()}, "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                             time.gmtime())}
    return write_manifest(folder, kind, resolved, corpus, extra)


def open_index(folder: str | Path, *, corpus: Corpus | None = None, check_sources: bool = True,
               encoder: Encoder | None = None, kind: str | None = None) -> Index:
    """Open an index folder built by :func:`build_index`.

    ``kind`` opens a hybrid index as only its "bm25" or "dense" half (to
    compare them without building twice). Raises :class:`~thoughtloom.retrieval.store.IndexMismatch` when ``corpus``
    (or, without it, a recorded source file) differs from what was indexed.
    """
    folder = Path(folder).expanduser()
    manifest = read_manifest(folder)
    check_corpus(folder, manifest, corpus, check_sources)
    built = manifest["kind"]
    if kind is not None and kind != built:
        if built != "hybrid" or kind not in ("bm25", "dense"):
            raise ConfigError(f"index {folder} is a {built} index; it cannot be opened as {kind}",
                              hint="only a hybrid index opens as its bm25 or dense half")
        manifest = {**manifest, "kind": kind,
                    "settings": {kind: manifest["settings"][kind],
                                 **({"links": manifest["settings"]["links"]} if "links" in manifest["settings"] else {})}}
    try:
        bm, de, fu, li = _settings(manifest["kind"], manifest["settings"])
    except (TypeError, ValueError, KeyError) as exc:
        raise damaged(folder, f"bad settings in manifest.json: {exc}") from None
    passages = PassageStore(folder)
    try:
        bm25 = _load_part(folder, "bm25", lambda: BM25Searcher.load(folder / "bm25", bm)) if bm is not None else None
        dense = (_load_part(folder, "dense", lambda: DenseSearcher.load(folder / "dense", de, encoder=encoder))
                 if de is not None else None)
    except BaseException:
        passages.close()
        raise
    if bm25 is not None and _n_docs(bm25) != len(passages):
        passages.close()
        raise damaged(folder, f"its {len(passages)} passages and bm25/ ({_n_docs(bm25)} documents) disagree")
    return Index(folder, manifest, passages, bm25, dense, fu, li)


def _n_docs(bm25: BM25Searcher) -> int | None:
    try:
        return bm25.n_docs
    except (KeyError, TypeError, ValueError):
        return None


def _load_part(folder: Path, name: str, load: Any) -> Any:
    if not (folder / name).is_dir():
        raise damaged(folder, f"{name}/ is missing")
    try:
        return load()
    except ConfigError:
        raise
    except (OSError, ValueError, KeyError, TypeError, EOFError, IndexError) as exc:
        raise damaged(folder, f"{name}/ unreadable: {exc}") from None


def disk_size(folder: str | Path) -> int:
    """Bytes used by every file under ``folder``."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
