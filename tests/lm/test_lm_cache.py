import asyncio
import multiprocessing as mp

import pytest

from thoughtloom.core import CacheMiss, ConfigError, Request
from thoughtloom.core.types import Completion, TokenLogprob, Usage
from thoughtloom.lm import Cached, CompletionStore
from thoughtloom.testing import ScriptedLM


def counter_lm():
    n = {"i": 0}

    def reply(req):
        n["i"] += 1
        return f"reply {n['i']}"

    return ScriptedLM(reply)


async def test_use_mode_hits_second_time(tmp_path):
    inner = counter_lm()
    lm = Cached(inner, CompletionStore(tmp_path / "c.sqlite"))
    req = Request.of("hello")
    first = (await lm.generate([req]))[0]
    second = (await lm.generate([req]))[0]
    assert inner.calls == 1
    assert first.text == second.text == "reply 1"
    assert not first.usage.cached and second.usage.cached
    assert second.usage.prompt_tokens == first.usage.prompt_tokens


async def test_samples_are_distinct_replayable_entries(tmp_path):
    inner = counter_lm()
    store = CompletionStore(tmp_path / "c.sqlite")
    reqs = [Request.of("q", temperature=0.8, sample_index=i) for i in range(4)]
    texts = [c.text for c in await Cached(inner, store).generate(reqs)]
    assert len(set(texts)) == 4 and inner.calls == 4
    replay = Cached(ScriptedLM([]), store, "replay")
    assert [c.text for c in await replay.generate(reqs)] == texts


async def test_only_misses_go_to_the_model_as_one_batch(tmp_path):
    inner = counter_lm()
    lm = Cached(inner, CompletionStore(tmp_path / "c.sqlite"))
    await lm.generate([Request.of("a")])
    out = await lm.generate([Request.of("a"), Request.of("b"), Request.of("c")])
    assert [len(b) for b in inner.batches] == [1, 2]
    assert out[0].usage.cached and not out[1].usage.cached


async def test_replay_miss_is_an_error(tmp_path):
    lm = Cached(ScriptedLM([]), CompletionStore(tmp_path / "c.sqlite"), "replay")
    with pytest.raises(CacheMiss):
        await lm.generate([Request.of("never seen")])


async def test_refresh_overwrites_and_off_bypasses(tmp_path):
    store = CompletionStore(tmp_path / "c.sqlite")
    inner = counter_lm()
    await Cached(inner, store).generate([Request.of("q")])
    refreshed = await Cached(inner, store, "refresh").generate([Request.of("q")])
    assert refreshed[0].text == "reply 2"
    assert (await Cached(inner, store).generate([Request.of("q")]))[0].text == "reply 2"
    off = await Cached(inner, None, "off").generate([Request.of("q")])
    assert off[0].text == "reply 3" and store.stats()["entries"] == 1


def test_bad_mode_and_missing_store():
    with pytest.raises(ConfigError):
        Cached(ScriptedLM([]), None, "bogus")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Cached(ScriptedLM([]), None, "use")


async def test_logprobs_round_trip(tmp_path):
    lp = (TokenLogprob("yes", -0.1, (("yes", -0.1), ("no", -2.3))),)
    inner = ScriptedLM([Completion("yes", usage=Usage(3, 1), logprobs=lp)])
    lm = Cached(inner, CompletionStore(tmp_path / "c.sqlite"))
    await lm.generate([Request.of("q", logprobs=2)])
    again = (await lm.generate([Request.of("q", logprobs=2)]))[0]
    assert again.logprobs == lp


def test_stats_and_clear(tmp_path):
    store = CompletionStore(tmp_path / "c.sqlite")
    asyncio.run(Cached(counter_lm(), store).generate([Request.of("x"), Request.of("y")]))
    stats = store.stats()
    assert stats["entries"] == 2 and stats["by_model"] == {"scripted": 2}
    assert store.clear("nope") == 0
    assert store.clear() == 2 and store.stats()["entries"] == 0


def _writer(path: str, worker: int, n: int) -> None:
    store = CompletionStore(path)
    lm = Cached(ScriptedLM(lambda r: r.messages[0].content), store)
    for i in range(n):
        asyncio.run(lm.generate([Request.of(f"w{worker}-{i}"), Request.of(f"shared-{i}")]))
    store.close()


def test_concurrent_writer_processes(tmp_path):
    path = str(tmp_path / "c.sqlite")
    CompletionStore(path).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 60)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = CompletionStore(path)
    assert store.stats()["entries"] == 4 * 60 + 60
    got = store.get_many([__import__("thoughtloom").core.request_hash("scripted", Request.of("w3-59"))])
    assert next(iter(got.values())).text == "w3-59"


async def test_a_full_cache_disk_is_one_warning_and_the_answers_still_come_back(tmp_path, caplog):
    """Issue 40: on a full disk 392 of 400 records failed with `cannot rollback - no transaction is
    active` (an explicit ROLLBACK after SQLite had rolled back, hiding "database or disk is full"), and
    the answered calls went uncounted. SQLITE_FULL is made here with a page limit on the file."""
    from thoughtloom.lm.cache import CacheFailed

    store = CompletionStore(tmp_path / "c.sqlite")
    n = {"i": 0}

    def reply(req):
        n["i"] += 1
        return f"reply {n['i']}".ljust(6000)  # more than a page each

    inner = ScriptedLM(reply)
    lm = Cached(inner, store)
    await lm.generate([Request.of("warm")])
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages}")
    big = [Request.of(f"q{i}") for i in range(3)]
    with pytest.raises(CacheFailed) as failed:
        store.put_many([(str(i), (await inner.generate([r]))[0]) for i, r in enumerate(big)])
    said = str(failed.value)
    assert "database or disk is full" in said and str(tmp_path / "c.sqlite") in said and "free space" in said
    assert "rollback" not in said.lower()
    with caplog.at_level("WARNING"):
        answers = [(await lm.generate([r]))[0] for r in big] + [(await lm.generate([r]))[0] for r in big]
    assert [a.text.strip() for a in answers] == [f"reply {i}" for i in range(5, 11)]  # answered, uncached, every call
    assert not any(a.usage.cached for a in answers)
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "database or disk is full" in warned[0] and "without the cache" in warned[0]
    assert lm.dropped is not None


async def test_replay_on_a_cache_that_cannot_be_read_stops(tmp_path):
    from thoughtloom.lm.cache import CacheFailed

    path = tmp_path / "c.sqlite"
    store = CompletionStore(path)
    store._db.execute("DROP TABLE completions")  # reads fail: "no such table"
    with pytest.raises(CacheFailed, match="cannot read cache"):
        await Cached(counter_lm(), store, "replay").generate([Request.of("q")])
    lm = Cached(counter_lm(), store)
    assert (await lm.generate([Request.of("q")]))[0].text == "reply 1" and lm.dropped is not None
