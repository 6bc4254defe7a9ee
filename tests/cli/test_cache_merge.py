"""`thoughtloom cache merge SRC... --into DST`: per-node caches joined into one file a run replays from."""

import sqlite3

import pytest
from typer.testing import CliRunner

from thoughtloom.cli.main import app
from thoughtloom.core import CacheMiss, ConfigError, Request
from thoughtloom.lm import Cached, CompletionStore
from thoughtloom.testing import ScriptedLM

runner = CliRunner()


async def fill(path, prompts, reply):
    lm = Cached(ScriptedLM(lambda req: reply(req.messages[-1].content), model_id="m"), CompletionStore(path))
    await lm.generate([Request.of(p) for p in prompts])
    lm.store.close()


async def replay(path, prompts):
    lm = Cached(ScriptedLM([], model_id="m"), CompletionStore(path), "replay")
    try:
        return [c.text for c in await lm.generate([Request.of(p) for p in prompts])]
    finally:
        lm.store.close()


async def test_merged_file_replays_what_every_node_cached(tmp_path):
    await fill(tmp_path / "node1.sqlite", ["a", "b", "c"], lambda p: f"{p} from node1")
    await fill(tmp_path / "node2.sqlite", ["c", "d"], lambda p: f"{p} from node2")  # c answered twice, differently
    await fill(tmp_path / "node3.sqlite", ["a"], lambda p: f"{p} from node1")  # a answered twice, the same
    r = runner.invoke(app, ["cache", "merge", str(tmp_path / "node1.sqlite"), str(tmp_path / "node2.sqlite"),
                            str(tmp_path / "node3.sqlite"), "--into", str(tmp_path / "all.sqlite")])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].endswith("node1.sqlite: 3 added, 0 already there")
    assert lines[1].endswith("node2.sqlite: 1 added, 0 already there, 1 differing (kept the earlier answer)")
    assert lines[2].endswith("node3.sqlite: 0 added, 1 already there")
    assert lines[3].endswith("all.sqlite: 4 entries")
    assert await replay(tmp_path / "all.sqlite", ["a", "b", "c", "d"]) == [
        "a from node1", "b from node1", "c from node1", "d from node2"]
    with pytest.raises(CacheMiss):
        await replay(tmp_path / "node1.sqlite", ["d"])  # what the merge is for


async def test_merge_refuses_what_is_not_a_cache(tmp_path):
    await fill(tmp_path / "c.sqlite", ["a"], str)
    store = CompletionStore(tmp_path / "c.sqlite")
    with pytest.raises(ConfigError, match="into itself"):
        store.merge(tmp_path / "c.sqlite")
    (tmp_path / "notes.txt").write_text("not a database at all " * 100)
    with pytest.raises(ConfigError, match="cannot read cache"):
        store.merge(tmp_path / "notes.txt")
    sqlite3.connect(tmp_path / "other.sqlite").execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ConfigError, match="not a thoughtloom cache"):
        store.merge(tmp_path / "other.sqlite")
    assert store.stats()["entries"] == 1  # and it still works
    store.close()
    r = runner.invoke(app, ["cache", "merge", str(tmp_path / "absent.sqlite"), "--into", str(tmp_path / "d.sqlite")])
    assert r.exit_code != 0 and isinstance(r.exception, ConfigError) and "absent.sqlite" in str(r.exception)
    assert not (tmp_path / "d.sqlite").exists()
