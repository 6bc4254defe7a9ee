"""Context.search: the one way a strategy retrieves, and the one retrieval event."""

import pytest

from thoughtloom.core.errors import ConfigError
from thoughtloom.core.types import Passage
from thoughtloom.strategies.context import Context
from thoughtloom.tasks.base import Task
from thoughtloom.testing import ScriptedLM, StaticRetriever

PASSAGES = [Passage("jaws", "Jaws is a 1975 film.", "Jaws"), Passage("sp", "Spielberg was born in 1946.", "")]


async def test_one_batched_call_is_one_event_with_every_hit():
    retriever = StaticRetriever(PASSAGES)
    ctx = Context(lm=ScriptedLM([]), task=Task(), retriever=retriever)
    results = await ctx.search(["Jaws film", "born 1946"], 1)
    assert [[h.passage.id for h in hits] for hits in results] == [["jaws"], ["sp"]]
    assert retriever.queries == ["Jaws film", "born 1946"]
    (event,) = ctx.trace.of_type("retrieval")
    assert event["queries"] == ["Jaws film", "born 1946"] and event["k"] == 1 and event["seconds"] >= 0
    assert event["results"] == [[{"id": "jaws", "title": "Jaws", "score": 2.0, "rank": 0}],
                                [{"id": "sp", "title": "", "score": 2.0, "rank": 0}]]


async def test_closed_book_is_empty_and_traced_unless_retrieval_is_required():
    ctx = Context(lm=ScriptedLM([]), task=Task())
    assert await ctx.search(["q1", "q2"], 3) == [[], []]
    (event,) = ctx.trace.of_type("retrieval")
    assert event["note"] == "no retriever" and event["results"] == [[], []]
    with pytest.raises(ConfigError) as info:
        await ctx.search(["q"], 3, required=True)
    assert "--index" in info.value.hint
    assert await ctx.search([], 3) == [] and len(ctx.trace.of_type("retrieval")) == 1
