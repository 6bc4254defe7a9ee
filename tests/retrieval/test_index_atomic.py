"""`index build` leaves no half index and names the folder on a full disk (issue 40: `[Errno 28]`
alone, and a half-written folder with no manifest that a rerun refused until --overwrite)."""

import errno
import json

import pytest

from thoughtloom.core.errors import ConfigError
from thoughtloom.retrieval import read_corpus
from thoughtloom.retrieval.bm25 import BM25Searcher
from thoughtloom.retrieval.index import build_index, open_index


def _corpus(tmp_path, words=("llamas", "camels")):
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"id": w, "text": f"{w} live here"}) + "\n" for w in words))
    return read_corpus(path)


def test_a_full_disk_mid_build_names_the_folder_and_leaves_nothing(tmp_path, monkeypatch):
    corpus = _corpus(tmp_path)

    def full(self, folder):
        (folder).mkdir(parents=True, exist_ok=True)
        (folder / "part").write_bytes(b"x")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(BM25Searcher, "save", full)
    with pytest.raises(ConfigError, match=r"no space left on device writing the index .*idx.*choose another --out"):
        build_index(corpus, "bm25", tmp_path / "idx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]  # no idx, no building folder
    monkeypatch.undo()
    build_index(corpus, "bm25", tmp_path / "idx")  # the rerun needs no --overwrite
    assert open_index(tmp_path / "idx").search_sync(["llamas"], 1)[0][0].passage.id == "llamas"


def test_an_overwrite_that_fails_keeps_the_old_index(tmp_path, monkeypatch):
    build_index(_corpus(tmp_path), "bm25", tmp_path / "idx")
    monkeypatch.setattr(BM25Searcher, "save", lambda self, folder: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        build_index(_corpus(tmp_path, ("horses",)), "bm25", tmp_path / "idx", overwrite=True)
    assert len(open_index(tmp_path / "idx", check_sources=False)) == 2  # (its corpus file was rewritten)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "idx"]
    monkeypatch.undo()
    build_index(_corpus(tmp_path, ("horses",)), "bm25", tmp_path / "idx", overwrite=True)
    assert len(open_index(tmp_path / "idx")) == 1
