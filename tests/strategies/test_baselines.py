import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import Completion, ConfigError, Problem, Trace
from thoughtloom.lm import Budget, Metered
from thoughtloom.strategies import Context, make_config
from thoughtloom.strategies.vote import weighted_vote
from thoughtloom.testing import ScriptedLM

MATH = tasks.get("gsm8k")
PROBLEM = Problem("p1", "Ann has 2 apples and buys 3 more. How many apples?")


def ctx_for(lm, task=MATH, **kw):
    trace = Trace()
    return Context(lm=Metered(lm, trace=trace, **kw), task=task, trace=trace)


async def test_io_sends_demos_as_chat_turns():
    lm = ScriptedLM(["5"])
    result = await strategies.get("io")().run(PROBLEM, ctx_for(lm))
    assert result.answer == "5" and not result.truncated
    msgs = lm.requests[0].messages
    assert [m.role for m in msgs] == ["system"] + ["user", "assistant"] * 3 + ["user"]
    assert msgs[0].content == MATH.instruction
    demo = MATH.demos()[0]
    assert msgs[1].content == f"Question: {demo.question}" and msgs[2].content == f"Answer: {demo.answer}"
    assert msgs[-1].content == f"Question: {PROBLEM.question}\nAnswer:"


async def test_io_text_layout_is_one_message():
    lm = ScriptedLM(["5"])
    io = strategies.get("io")
    await io(make_config(io, {"layout": "text"})).run(PROBLEM, ctx_for(lm))
    (msg,) = lm.requests[0].messages
    assert msg.role == "user" and PROBLEM.question in msg.content and MATH.instruction in msg.content
    assert msg.content.count("Question:") == 1 + 3  # three demos, then ours
    with pytest.raises(ConfigError, match="layout"):
        make_config(io, {"layout": "turns"})


async def test_cot_chat_and_text_layouts_carry_the_same_text():
    chat_lm, text_lm = ScriptedLM(["The answer is: 5"]), ScriptedLM(["The answer is: 5"])
    cot = strategies.get("cot")
    await cot(make_config(cot, {"layout": "chat"})).run(PROBLEM, ctx_for(chat_lm))
    await cot().run(PROBLEM, ctx_for(text_lm))  # cot's default: one message (docs/prompts.md)
    chat, (text,) = chat_lm.requests[0].messages, text_lm.requests[0].messages
    assert "step by step" in chat[0].content and chat[0].role == "system"
    assert chat[2].role == "assistant" and chat[2].content.endswith(f"The answer is: {MATH.demos()[0].answer}")
    # every turn's text appears, in order, in the single-message rendering
    pos = 0
    for m in chat:
        pos = text.content.index(m.content, pos)


async def test_a_truncated_reply_is_flagged_and_does_not_vote():
    cut = Completion("2 + 3 = 5, and then 80 + 20 + 40 = 140. The answer is 140", finish_reason="length")
    result = await strategies.get("cot")().run(PROBLEM, ctx_for(ScriptedLM([cut])))
    assert result.truncated and result.answer == "140"  # kept for inspection, scored as none by the runner
    replies = iter([cut, "The answer is: 5", cut])
    ctx = ctx_for(ScriptedLM(lambda r: next(replies)))
    sc = strategies.get("cot-sc")
    result = await sc(make_config(sc, {"n": "3"})).run(PROBLEM, ctx)
    assert result.answer == "5" and result.confidence == 1.0 and not result.truncated
    assert result.details["truncated_samples"] == 2
    assert [e["truncated"] for e in ctx.trace.of_type("sample")] == [True, False, True]
    replies = iter([cut, cut])
    result = await sc(make_config(sc, {"n": "2"})).run(PROBLEM, ctx_for(ScriptedLM(lambda r: next(replies))))
    assert result.truncated and result.answer == ""


async def test_cot_extracts_the_marked_answer():
    lm = ScriptedLM(["2 + 3 = 5 apples, 10 seeds.\nThe answer is: 5"])
    result = await strategies.get("cot")().run(PROBLEM, ctx_for(lm))
    assert result.answer == "5"
    assert "step by step" in lm.requests[0].messages[0].content
    assert lm.requests[0].temperature == 0


async def test_cot_sc_one_batch_distinct_samples_majority():
    replies = iter(["The answer is: 5", "so 4", "The answer is 5.0", "The answer is: 6", "nothing"])
    lm = ScriptedLM(lambda r: next(replies))
    ctx = ctx_for(lm)
    result = await strategies.get("cot-sc")().run(PROBLEM, ctx)
    assert len(lm.batches) == 1 and len(lm.batches[0]) == 5
    assert [r.sample_index for r in lm.requests] == [0, 1, 2, 3, 4]
    assert all(r.temperature == 0.7 for r in lm.requests)
    # "so 4" states no answer (the math reader takes only the number after "answer is"): no vote
    assert result.answer == "5" and result.confidence == pytest.approx(2 / 3)
    vote = ctx.trace.of_type("vote")[0]
    assert vote["tally"] == {"5": 2.0, "6": 1.0}
    assert len(ctx.trace.of_type("sample")) == 5


async def test_cot_sc_shrinks_to_the_budget():
    lm = ScriptedLM(lambda r: "The answer is: 1")
    result = await strategies.get("cot-sc")().run(PROBLEM, ctx_for(lm, budget=Budget(max_calls=3)))
    assert lm.calls == 3 and result.answer == "1"
    empty = await strategies.get("cot-sc")().run(
        PROBLEM, ctx_for(ScriptedLM([]), budget=Budget(max_calls=0)))
    assert empty.answer == "" and empty.stopped == "budget"


def test_weighted_vote_reduces_to_majority_and_breaks_ties_first():
    norm = str.lower
    plain = weighted_vote(["A", "b", "B", "a", None, ""], norm)
    assert plain.key == "a" and plain.tally == {"a": 2.0, "b": 2.0}
    assert weighted_vote(["A", "b", "B", "a"], norm, [1, 1, 1, 1]) == weighted_vote(["A", "b", "B", "a"], norm)
    weighted = weighted_vote(["A", "b", "B"], norm, [0.9, 0.3, 0.3])
    assert weighted.key == "a" and weighted.confidence == pytest.approx(0.6)
    assert weighted_vote([None], norm).winner is None


def test_registry_and_config():
    assert {"io", "cot", "cot-sc"} <= set(strategies.available())
    with pytest.raises(ConfigError, match="choose one of"):
        strategies.get("nope")
    cls = strategies.get("cot-sc")
    cfg = make_config(cls, {"n": "9", "temperature": "0.3"})
    assert (cfg.n, cfg.temperature) == (9, 0.3)
    with pytest.raises(ConfigError, match="no option"):
        make_config(cls, {"beams": "2"})
    with pytest.raises(ConfigError, match="bad value"):
        make_config(cls, {"n": "many"})


def test_options_given_as_python_values_are_checked_like_set():
    """``strategies.build`` takes --set strings or typed values (the Python API's keyword arguments)."""
    built = strategies.build("cot-sc", {"n": 4, "temperature": 1, "layout": "chat"})
    assert (built.config.n, built.config.temperature, built.config.layout) == (4, 1.0, "chat")
    assert isinstance(built.config.temperature, float)
    assert strategies.build("cot-sc", {"n": "4"}).config == strategies.build("cot-sc", {"n": 4}).config
    for options, message in [({"n": True}, "bad value for cot-sc option n: True"),
                             ({"n": 2.5}, "bad value for cot-sc option n: 2.5"),
                             ({"temperature": "hot"}, "bad value for cot-sc option temperature"),
                             ({"n": 0}, "must be >= 1"),
                             ({"temperature": float("nan")}, "finite"), ({"beams": 2}, "no option 'beams'"),
                             ({"layout": "turns"}, "bad value for cot-sc option layout: 'turns'"),
                             ({"max_calls": None}, "bad value for cot-sc option max_calls: None")]:
        with pytest.raises(ConfigError, match=message):
            strategies.build("cot-sc", options)


async def test_prompt_override_dir(tmp_path):
    (tmp_path / "io.txt").write_text("CUSTOM $question")
    lm = ScriptedLM(["7"])
    trace = Trace()
    ctx = Context(lm=lm, task=MATH, trace=trace, prompt_dir=tmp_path)
    await strategies.get("io")().run(PROBLEM, ctx)
    assert lm.requests[0].messages[0].content == f"CUSTOM {PROBLEM.question}"
