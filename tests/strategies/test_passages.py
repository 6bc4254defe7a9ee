"""The one passage formatter that HGOT and the retrieval baselines share."""

from thoughtloom.core.types import Passage
from thoughtloom.strategies.passages import dedupe, format_passages, numbered, passage_text

JAWS = Passage("jaws", "Jaws is a 1975 film directed by Steven Spielberg.", "Jaws")
BARE = Passage("bare", "Untitled text.", "")


def test_passages_are_numbered_titled_and_clipped():
    assert format_passages([JAWS, BARE]) == (
        "[1] Jaws | Jaws is a 1975 film directed by Steven Spielberg.\n[2] Untitled text.")
    assert passage_text(JAWS, 3) == "Jaws | Jaws is a ..."
    assert passage_text(BARE, 2) == "Untitled text."  # not longer than the clip: unchanged


def test_no_passages_say_so():
    assert format_passages([]) == "(no passages)" and numbered([], empty="(none)") == "(none)"
    assert [p.id for p in dedupe([JAWS, BARE, JAWS])] == ["jaws", "bare"]


def test_a_passage_is_bounded_where_it_enters_and_an_ordinary_one_is_untouched():
    from thoughtloom.core.types import Passage
    from thoughtloom.strategies.passages import MAX_PASSAGE_CHARS, MAX_TITLE_CHARS, bounded

    ordinary = Passage("p", "Jaws is a 1975 film.\nIt was directed by Steven Spielberg.", "Jaws (film)")
    assert bounded(ordinary) is ordinary  # byte for byte: prompts and cache keys unchanged
    huge = bounded(Passage("h", "word " * 2_000_000, "T" * 10_000))
    assert len(huge.text) == MAX_PASSAGE_CHARS + 4 and huge.text.endswith(" ...")
    assert len(huge.title) == MAX_TITLE_CHARS + 4
    dirty = bounded(Passage("d", "Paris\x00 is \x1b[31mthe capital\udcff\tof France", "Par\x00is"))
    assert dirty.text == "Paris is [31mthe capital\ufffd\tof France" and dirty.title == "Paris"
    dirty.text.encode("utf-8")


async def test_ctx_search_hands_strategies_bounded_passages():
    from thoughtloom.core.trace import Trace
    from thoughtloom.core.types import Passage
    from thoughtloom.strategies.context import Context
    from thoughtloom.tasks.base import Task
    from thoughtloom.testing import ScriptedLM, StaticRetriever

    ctx = Context(lm=ScriptedLM([]), task=Task(), trace=Trace(),
                  retriever=StaticRetriever([Passage("n", "Paris\x00 " * 3000)]))
    [[hit]] = await ctx.search(["Paris"], 1)
    assert "\x00" not in hit.passage.text and hit.passage.id == "n" and hit.rank == 0
