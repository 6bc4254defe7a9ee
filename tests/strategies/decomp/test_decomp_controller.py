"""The controller on ScriptedLM: routing, batching, limits, malformed output."""

import json
import re

import pytest

from thoughtloom import prompts
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Completion, Passage, Problem
from thoughtloom.lm.meter import Metered
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp import Program, register_program, symbolic
from thoughtloom.strategies.decomp.handlers import HandlerEnv
from thoughtloom.strategies.decomp.catalogue import DEFAULTS, PROGRAMS
from thoughtloom.strategies.decomp.controller import MAX_ANSWER_CHARS, NEXT_STEP
from thoughtloom.tasks import get as get_task
from thoughtloom.testing import ScriptedLM, StaticRetriever

LETTER_Q = 'Take the letters at position 2 of the words in "Ada Byron Lee" and concatenate them using a space.'


def program_of(prompt: str) -> tuple[str, int]:
    """(question, steps so far) of the program a decomposer prompt continues."""
    tail = prompt.split(NEXT_STEP, 1)[1]
    question = re.search(r"QC: (.*)", tail).group(1)
    return question, tail.count("\nA: ")


def letter_lm(bad_first: int = 0):
    """A scripted 'model' that plays decomposer and handlers for letter_cat."""
    seen = {"bad": 0}

    def reply(req):
        prompt = req.messages[-1].content
        if NEXT_STEP in prompt:
            question, n = program_of(prompt)
            if seen["bad"] < bad_first:
                seen["bad"] += 1
                return "Sure! Let me think about it."
            if question.startswith("Take"):
                return ['(split) "What are the words in "Ada Byron Lee"?"',
                        '(str_position) [project_values] "What is the letter at position 2 of "#1"?"',
                        '(merge) "Concatenate #2 using a space."', "[EOQ]"][n]
            word = re.search(r'"(\w+)"', question).group(1)
            return [f'(split) "What are the letters and their positions in "{word}"?"',
                    '(arr_position) "What is at position 2 in #1?"', "[EOQ]"][n]
        q = prompt.rsplit("Q: ", 1)[1]
        if q.startswith("What are the words"):
            return '["Ada", "Byron", "Lee"]'
        if q.startswith("What are the letters"):
            word = re.search(r'"(\w+)"', q).group(1)
            return "[" + ", ".join(f"({c}, {i})" for i, c in enumerate(word, 1)) + "]"
        if q.startswith("What is at position 2 in"):
            return re.search(r"\((\w), 2\)", q).group(1)
        if q.startswith("Concatenate"):
            return " ".join(re.findall(r'"(\w)"', q))
        raise AssertionError(f"unexpected prompt {q[:80]!r}")

    return reply


def ctx_for(lm, task="letter_cat", **kw):
    return Context(lm=lm, task=get_task(task), **kw)


def env_for(lm, task="letter_cat", seed=0):
    """A handler environment with no retrieval and no other handlers (a handler alone)."""

    async def no_search(queries):
        raise AssertionError("this handler should not retrieve")

    def no_resolve(name):
        raise AssertionError("this handler should not call another")

    return HandlerEnv(lm=lm, seed=seed, extract_answer=get_task(task).extract_answer,
                      search=no_search, resolve=no_resolve)


def decomp(**sets):
    cls = get("decomp")
    return cls(cls.Config(**sets))


async def test_letter_cat_runs_the_hierarchical_program_and_batches_foreach():
    lm = ScriptedLM(letter_lm())
    ctx = ctx_for(lm)
    result = await decomp().run(Problem("q", LETTER_Q), ctx)
    assert result.answer == "d y e"
    assert result.details["status"] == "ok"
    # the three nested str_position programs ask their decomposer together, each round
    nested = [b for b in lm.batches if NEXT_STEP in b[0].messages[-1].content
              and "QC: What is the letter" in b[0].messages[-1].content]
    assert [len(b) for b in nested] == [3, 3, 3]
    # and their split calls go out as one batch of three
    splits = [b for b in lm.batches if b[0].messages[-1].content.rstrip().endswith("A:")
              and "letters and their positions" in b[0].messages[-1].content.rsplit("Q: ", 1)[1]]
    assert [len(b) for b in splits] == [3]
    steps = ctx.trace.of_type("decomp_step")
    assert [s["handler"] for s in steps if s["depth"] == 0] == ["split", "str_position", "merge"]
    assert "    QS: (arr_position)" in decomp().report(result)


async def test_the_steps_own_counts_add_up_to_what_the_meter_counted():
    """A step's calls and tokens are its handlers' own counts (a handler batch serves several
    runs' steps at once, so the meter cannot split them); over a whole question they must add
    up to the LM's meter: the top run's totals, and its decomposer turns plus its steps."""
    trace = Trace()
    lm = Metered(ScriptedLM(letter_lm(bad_first=1)), trace=trace)
    ctx = ctx_for(lm, trace=trace)
    result = await decomp(max_retries=2).run(Problem("q", LETTER_Q), ctx)
    executed = result.details["executed"]
    # the top decomposer's 4 turns and 1 re-ask, split and merge; 3 nested runs of 3 turns and 2 handlers
    assert result.answer == "d y e" and lm.totals.calls == 5 + 2 + 3 * (3 + 2)
    assert (executed["calls"], executed["tokens"]) == (lm.totals.calls, lm.totals.total_tokens)
    decomposer = [c for c in trace.of_type("llm_call") if NEXT_STEP in c["messages"][-1][1]
                  and program_of(c["messages"][-1][1])[0] == LETTER_Q]
    steps = [s for s in ctx.trace.of_type("decomp_step") if s["depth"] == 0]
    assert len(decomposer) + sum(s["calls"] for s in steps) == lm.totals.calls
    assert sum(c["prompt_tokens"] + c["completion_tokens"] for c in decomposer) + sum(
        s["tokens"] for s in steps) == lm.totals.total_tokens


async def test_malformed_decomposer_output_is_traced_and_retried_with_sampling():
    lm = ScriptedLM(letter_lm(bad_first=1))
    ctx = ctx_for(lm)
    result = await decomp(max_retries=2).run(Problem("q", LETTER_Q), ctx)
    assert result.answer == "d y e"
    bad = ctx.trace.of_type("malformed")
    assert [(b["what"], b["reason"], b["attempt"]) for b in bad] == [("decomp_step", "unparseable", 0)]
    retry = [r for r in lm.requests if NEXT_STEP in r.messages[-1].content][1]
    assert retry.temperature > 0 and retry.sample_index == 1
    assert result.details["format_errors"] == 1 and result.details["resampled"] == 1


async def test_a_step_cut_off_at_max_tokens_is_malformed_and_asked_again():
    inner = letter_lm()
    cut = {"done": False}

    def reply(req):
        text = inner(req)
        if NEXT_STEP in req.messages[-1].content and not cut["done"]:
            cut["done"] = True  # the first decomposer step is cut off, though it reads as a step
            return Completion(text, finish_reason="length")
        return text

    ctx = ctx_for(ScriptedLM(reply))
    result = await decomp(max_retries=1).run(Problem("q", LETTER_Q), ctx)
    assert result.answer == "d y e"
    assert [(b["reason"], b["attempt"]) for b in ctx.trace.of_type("malformed")] == [("truncated", 0)]


async def test_a_handler_reply_cut_off_before_its_line_ends_is_an_error_not_an_answer():
    from thoughtloom.strategies.decomp.handlers import Call, PromptHandler

    handler = PromptHandler("qa", "Q: $question\nA:")
    replies = iter([Completion("Paris is the capi", finish_reason="length"),
                    Completion("Paris\nQ: and then more", finish_reason="length"), "Rome"])
    lm = ScriptedLM(lambda req: next(replies))
    calls = [Call(q, "") for q in ("a?", "b?", "c?")]
    cut, whole_line, fine = await handler.answer(calls, env_for(lm))
    assert cut.value == "" and "cut off" in cut.error
    assert whole_line.value == "Paris" and whole_line.error is None  # its first line had ended
    assert fine.value == "Rome"


async def test_persistent_garbage_ends_the_program_after_bounded_retries():
    lm = ScriptedLM(lambda req: '(nonsense) "x"')
    ctx = ctx_for(lm)
    result = await decomp(max_retries=2).run(Problem("q", LETTER_Q), ctx)
    assert result.details["status"] == "malformed" and result.answer == ""
    assert lm.calls == 3
    assert {e["reason"] for e in ctx.trace.of_type("malformed")} == {"unknown_handler"}
    # issue 13: the printed program says which step stopped it and why, not only "(stopped: malformed)"
    [end] = ctx.trace.of_type("program_end")
    assert end["reason"] == result.details["executed"]["stop_reason"]
    assert end["reason"] == "step 1 (3 tries): unknown_handler: unknown handler 'nonsense'"
    assert result.text.splitlines()[-1] == f"(stopped: malformed at {end['reason']})"


async def test_a_malformed_step_after_answered_ones_is_named_by_its_number():
    good = letter_lm()

    def reply(req):
        prompt = req.messages[-1].content
        if NEXT_STEP in prompt and program_of(prompt) == (LETTER_Q, 1):
            return "I would rather chat about the weather today, if that is fine with you." * 3
        return good(req)

    ctx = ctx_for(ScriptedLM(reply))
    result = await decomp(max_retries=0).run(Problem("q", LETTER_Q), ctx)
    top = result.details["executed"]
    assert top["status"] == "malformed" and len(top["steps"]) == 1
    assert top["stop_reason"].startswith("step 2 (1 try): unparseable: no (handler) tag in 'I would rather")
    assert len(top["stop_reason"]) < 200  # the parser quotes the reply clipped
    assert result.text.splitlines()[-1] == f"(stopped: malformed at {top['stop_reason']})"


async def test_a_budget_stop_returns_the_program_as_far_as_it_ran():
    ctx = ctx_for(ScriptedLM(letter_lm()))
    full = await decomp().run(Problem("q", LETTER_Q), ctx_for(ScriptedLM(letter_lm())))
    assert full.answer == "d y e" and full.stopped is None
    # the decomposer's 1st step, split, the 2nd step and its nested programs' (3 x 3) steps and
    # letter lists and lookups (arr_position is a model call too) fit; the 3rd step of the top program does not
    cls = get("decomp")
    stopped = await cls(cls.Config(max_calls=19)).run(Problem("q", LETTER_Q), ctx)
    assert stopped.stopped == "budget"
    top = stopped.details["executed"]
    assert top["status"] == "budget" and [s["handler"] for s in top["steps"]] == ["split", "str_position"]
    # the program as far as it ran is kept, but it never reached [EOQ]: no answer (its last
    # step's ["d", "y", "e"] answered a sub-question, not the question)
    assert top["steps"][-1]["answer"] == ["d", "y", "e"] and stopped.answer == ""
    assert stopped.text.splitlines()[-1] == "(stopped: budget)"


async def test_bad_reference_is_a_malformed_step():
    replies = iter(['(merge) "Concatenate #4 using a space."', "[EOQ]", "[EOQ]"])
    lm = ScriptedLM(lambda req: next(replies))
    ctx = ctx_for(lm)
    result = await decomp(max_retries=2).run(Problem("q", LETTER_Q), ctx)
    assert ctx.trace.of_type("malformed")[0]["reason"] == "bad_reference"
    assert result.details["status"] == "malformed"


async def test_step_limit_stops_a_decomposer_that_never_ends():
    import itertools

    n = itertools.count()  # a new question each turn (one repeated verbatim stops at its repeat)
    lm = ScriptedLM(lambda req: f'(split) "What are the words in "Ada Byron {next(n)}"?"')
    ctx = ctx_for(lm)
    result = await decomp(max_steps=3, handlers="symbolic").run(Problem("q", LETTER_Q), ctx)
    assert result.details["status"] == "step_limit"
    assert result.details["steps"] == 3
    assert lm.calls == 3  # decomposer only; split is symbolic


async def test_recursion_depth_limit_is_reported_not_raised():
    # a decomposer that always recurses on the same list
    lm = ScriptedLM(lambda req: '(reverse) "Reverse the sequence "a, b, c, d"."')
    ctx = ctx_for(lm, task="list_reversal")
    result = await decomp(max_depth=2, max_steps=1).run(
        Problem("q", 'Reverse the sequence "a, b, c, d".'), ctx)
    ends = ctx.trace.of_type("program_end")
    assert any(e["status"] == "depth_limit" and e["depth"] == 3 for e in ends)
    # the nested run that hit the limit ends every program above it so: no status ok with a cut answer
    assert result.details["status"] == "depth_limit" and result.answer == ""
    assert [e["status"] for e in ends] == ["depth_limit"] * 4
    # run ids: "1", then ".1.1" (step 1, item 1) per level; the run at depth 3 is the one that stopped
    assert ends[-1]["reason"] == "step 1: nested run 1.1.1.1.1.1.1 ended depth_limit"


@pytest.mark.parametrize("program,question,gold", [
    ("letter_cat", LETTER_Q, "d y e"),
    ("letter_cat", 'Take the letters at position 3 of the words in "Seyyed Nayak Joseph" and '
                   'concatenate them using a semi-colon.', "y;y;s"),
    ("reverse_halving", 'Reverse the sequence "a, b, c, d, e, f, g".', "g, f, e, d, c, b, a"),
    ("reverse_tail", 'Reverse the sequence "a, b c, d, e".', "e, d, b c, a"),
])
async def test_controller_check_reference_program_with_symbolic_handlers(program, question, gold):
    lm = ScriptedLM([])
    task = "letter_cat" if program == "letter_cat" else "list_reversal"
    result = await decomp(program=program, decomposer="reference", handlers="symbolic").run(
        Problem("q", question), ctx_for(lm, task=task))
    assert result.answer == gold
    assert lm.calls == 0


async def test_symbolic_errors_are_recorded_on_the_step():
    lm = ScriptedLM(['(split) "What are the letters and their positions in "Ada"?"',
                     '(arr_position) "What is at position 9 in #1?"', "[EOQ]"])
    result = await decomp(program="str_position", handlers="symbolic").run(
        Problem("q", 'What is the letter at position 9 of "Ada"?'), ctx_for(lm))
    last = result.details["executed"]["steps"][-1]
    assert last["error"].startswith("IndexError") and last["answer"] == ""


async def test_user_handlers_by_decorator_and_by_prompt_file(tmp_path):
    @symbolic("shout_test")
    def shout(question: str) -> str:
        return question.upper()

    folder = tmp_path / "decomp" / "handlers"
    folder.mkdir(parents=True)
    (folder / "echo_test.txt").write_text("Repeat.\nQ: $question\nA:", encoding="utf-8")
    script = iter(['(shout_test) "hello"', '(echo_test) "say #1"', "[EOQ]"])
    lm = ScriptedLM(lambda req: "said HELLO" if req.messages[-1].content.startswith("Repeat.")
                    else next(script))
    ctx = ctx_for(lm, prompt_dir=tmp_path)
    register_program(Program("open_test", "letter_cat"))  # any handler may be called
    result = await decomp(program="open_test").run(Problem("q", "anything"), ctx)
    assert result.answer == "said HELLO"
    echo = [r for r in lm.requests if r.messages[-1].content.startswith("Repeat.")]
    assert echo[0].messages[-1].content.endswith("Q: say HELLO\nA:")


async def test_an_answer_past_the_size_limit_is_the_steps_error_not_a_growing_answer():
    # hostile steps that double their input each time (nested programs re-escaping a list do worse)
    @symbolic("double_test")
    def double(question: str) -> str:
        return question + question

    def decomposer(req):
        _, n = program_of(req.messages[-1].content)
        return f'(double_test) "#{n}"' if n else '(double_test) "' + "x" * 1000 + '"'

    lm = ScriptedLM(decomposer)
    register_program(Program("double_prog_test", "letter_cat"))
    result = await decomp(program="double_prog_test", max_steps=10).run(Problem("q", "anything"), ctx_for(lm))
    steps = result.details["executed"]["steps"]
    assert [len(s["answer"]) for s in steps[:7]] == [2000 * 2 ** i for i in range(6)] + [0]
    assert steps[6]["error"] == f"answer too long: 128,000 characters (the limit is {MAX_ANSWER_CHARS:,})"
    assert all(len(s["answer"]) <= MAX_ANSWER_CHARS for s in steps)


def _odqa_lm(req):
    prompt = req.messages[-1].content
    if NEXT_STEP in prompt:
        _, n = program_of(prompt)
        return ['(retrieve_odqa) "Who directed Moon Garden?"',
                '(retrieve_odqa) "Where was Ida Vance born?"',
                '(multihop_titleqa) "Where was the director of Moon Garden born?"', "[EOQ]"][n]
    q = prompt.rsplit("Q: ", 1)[1]
    if "directed" in q:
        return "Ida Vance"
    if "Ida Vance born" in q:
        return "Oslo"
    return "Oslo" if "Wikipedia Title: Ida Vance" in prompt else "unknown"


PASSAGES = [Passage("p1", "Moon Garden is a 1990 film directed by Ida Vance.", "Moon Garden"),
            Passage("p2", "Ida Vance was born in Oslo in 1950.", "Ida Vance"),
            Passage("p3", "The Tower is a film.", "The Tower")]


async def test_decomp_ctxt_retrieves_in_batches_and_reads_the_collected_titles():
    lm, retriever = ScriptedLM(_odqa_lm), StaticRetriever(PASSAGES)
    ctx = ctx_for(lm, task="hotpotqa", retriever=retriever)
    result = await decomp(k=1).run(Problem("q", "Where was the director of Moon Garden born?"), ctx)
    assert result.answer == "Oslo"
    assert retriever.queries == ["Who directed Moon Garden?", "Where was Ida Vance born?"]
    final = [r for r in lm.requests if r.messages[-1].content.endswith(
        "Q: Where was the director of Moon Garden born?\nA:")][0].messages[-1].content
    assert "Wikipedia Title: Moon Garden" in final and "Wikipedia Title: Ida Vance" in final
    assert [e["queries"] for e in ctx.trace.of_type("retrieval")] == [["Who directed Moon Garden?"],
                                                                      ["Where was Ida Vance born?"]]


async def test_nodecomp_ctxt_is_one_retrieval_then_one_answer():
    lm, retriever = ScriptedLM(_odqa_lm), StaticRetriever(PASSAGES)
    ctx = ctx_for(lm, task="musique", retriever=retriever)
    cls = get("decomp-nodecomp-ctxt")
    result = await cls(cls.Config(k=2)).run(Problem("q", "Where was Ida Vance born?"), ctx)
    assert result.answer == "Oslo" and lm.calls == 1 and len(retriever.queries) == 1


async def test_retrieval_without_a_retriever_names_the_flag():
    lm = ScriptedLM(_odqa_lm)
    with pytest.raises(ConfigError) as info:
        await decomp().run(Problem("q", "Where was the director of Moon Garden born?"),
                           ctx_for(lm, task="2wiki"))
    assert "--index" in str(info.value.hint if hasattr(info.value, "hint") else info.value)


async def test_a_chain_of_thought_cut_off_at_max_tokens_is_traced_and_flags_the_empty_answer():
    from thoughtloom.core.events import count_step_problems

    lm = ScriptedLM(lambda req: Completion("Step 1: there are 6 bags. Step 2: each", finish_reason="length"))
    ctx = ctx_for(lm, task="gsm8k")
    result = await get("decomp-cot")().run(Problem("q", "6 bags of 7 apples?"), ctx)
    assert result.answer == "" and result.truncated and result.details["cut_off"] == 1
    assert count_step_problems(ctx.trace.events) == {"cut_off": {"decomp_handler": 1}}
    [event] = ctx.trace.of_type("malformed")
    assert event["raw"].startswith("Step 1") and event["step"] == 1 and event["run"] == "1"
    # an answer a later step still gives (here the extraction prompt's) is counted, not flagged
    replies = iter([Completion("6 * 7 = 42 apples in tot", finish_reason="length"), "42"])
    lm = ScriptedLM(lambda req: next(replies))
    result = await decomp().run(Problem("q", "6 bags of 7 apples?"), ctx_for(lm, task="gsm8k"))
    assert result.answer == "42" and not result.truncated and result.details["cut_off"] == 1


async def test_math_extract_runs_cot_then_a_separate_extraction_prompt():
    def reply(req):
        p = req.messages[-1].content
        return "6 * 7 = 42 apples in total, 7 per bag." if p.startswith("Solve") else "42"

    lm = ScriptedLM(reply)
    result = await decomp().run(Problem("q", "6 bags of 7 apples?"), ctx_for(lm, task="gsm8k"))
    assert result.answer == "42" and lm.calls == 2
    assert "Solution: 6 * 7 = 42 apples" in lm.requests[1].messages[-1].content
    base = get("decomp-cot")
    lm2 = ScriptedLM(reply)
    # the pattern arm reads the number after "answer is" only: this chain states none, so no answer
    assert (await base().run(Problem("q", "6 bags of 7 apples?"), ctx_for(lm2, task="gsm8k"))).answer == ""


def test_no_program_shadows_a_handler_prompt_and_every_default_exists():
    # a program named like a handler would call itself instead of the prompt
    assert not set(PROGRAMS) & prompts.names("decomp/handlers")
    assert {p for d in DEFAULTS.values() for p in d.values()} <= set(PROGRAMS)


async def test_structured_steps_carry_a_schema_and_are_checked_like_lines():
    from thoughtloom.strategies.decomp.controller import MAX_ANSWER_CHARS, NEXT_STEP_JSON
    replies = iter(['{"handler": "split", "operator": "select", "question": "What are the letters of \\"Ada\\"?"}',
                    'not json',
                    '{"handler": "arr_position", "operator": "select", "question": "What is the item at position 2 of #1?"}',
                    '{"handler": "EOQ", "operator": "select", "question": ""}'])
    lm = ScriptedLM(lambda req: next(replies))
    ctx = ctx_for(lm)
    result = await decomp(program="str_position", handlers="symbolic", structured=True, max_retries=1).run(
        Problem("q", 'What is the letter at position 2 of "Ada"?'), ctx)
    assert result.answer == "d"
    first = lm.requests[0]
    assert NEXT_STEP_JSON in first.messages[-1].content
    assert "arr_position" in first.json_schema["properties"]["handler"]["enum"]
    assert "EOQ" not in first.json_schema["properties"]["handler"]["enum"]
    assert [e["reason"] for e in ctx.trace.of_type("malformed")] == ["unparseable"]


async def test_prompt_handler_keeps_the_first_nonempty_line_without_an_echoed_label():
    from thoughtloom.strategies.decomp.handlers import Call, PromptHandler
    handler = PromptHandler("t", "Q: $question\nA:")
    lm = ScriptedLM(["A:\n 126\nmore", '["a", "b"]', "The final numeric answer is \\(\\boxed{86}\\).",
                     "To solve this we add 3 and 4"])
    out = await handler.answer([Call("x"), Call("y"), Call("z"), Call("w")], env_for(lm))
    # a LaTeX box is read as its content; a reply with no box is kept as it is
    assert [o.value for o in out] == ["126", ["a", "b"], "86", "To solve this we add 3 and 4"]
    assert lm.requests[0].stop == ("\n\n", "\nQ:")


async def test_a_decomposer_that_keeps_calling_its_own_program_ends_at_the_first_depth_limit():
    # issue 11: reverse_halving calls itself as (reverse); with max_steps=10 and max_depth=12 that
    # was up to 10**12 calls. A nested run that hits the depth limit ends every program above it
    # (issue 25), so the recursion stops at once: one decomposer call per level, depths 0-12.
    lm = ScriptedLM(lambda req: '(reverse) "a b c d"' if NEXT_STEP in req.messages[-1].content else "a")
    strategy = get("decomp")()
    assert strategy.config.max_calls == 300 and strategy.config.max_depth == 12
    result = await strategy.run(Problem("q", 'Reverse the sequence "a, b, c, d".'),
                                Context(lm=lm, task=get_task("list_reversal")))
    assert result.stopped is None and result.answer == "" and result.details["status"] == "depth_limit"
    assert result.details["program"] == "reverse_halving" and len(result.details["executed"]["steps"]) == 1
    deepest = "1" + ".1.1" * 13  # the run at depth 13, past max_depth
    assert result.text.endswith(f"(stopped: depth_limit at step 1: nested run {deepest} ended depth_limit)")
    assert lm.calls == 13


async def test_max_calls_is_set_per_run():
    lm = ScriptedLM(lambda req: '(reverse) "a b c d"' if NEXT_STEP in req.messages[-1].content else "a")
    strategy = get("decomp")(get("decomp").Config(max_calls=20))
    await strategy.run(Problem("q", 'Reverse the sequence "a, b, c, d".'), Context(lm=lm, task=get_task("list_reversal")))
    assert lm.calls <= 20


async def test_handlers_compose_through_their_environment_alone():
    # retrieve_odqa needs search and another handler; it gets both from the env, not the controller
    from thoughtloom.strategies.decomp.handlers import Call, PromptHandler, resolve
    searched = []

    async def search(queries):
        searched.append(list(queries))
        return [[PASSAGES[1]] for _ in queries]

    reader = PromptHandler("reader", "$evidence\nQ: $question\nA:")
    lm = ScriptedLM(lambda req: "Oslo" if "Wikipedia Title: Ida Vance" in req.messages[-1].content else "?")
    env = HandlerEnv(lm=lm, seed=7, extract_answer=lambda text: None, search=search,
                     resolve={"singlehop_titleqa": reader}.__getitem__)
    handler = resolve("retrieve_odqa", prefer_symbolic=False, prompt_dir=None)
    out = await handler.answer([Call("Where was Ida Vance born?")], env)
    assert [o.value for o in out] == ["Oslo"] and out[0].evidence == (PASSAGES[1],)
    assert searched == [["Where was Ida Vance born?"]] and lm.requests[0].seed == 7
    extract = resolve("extract", prefer_symbolic=False, prompt_dir=None)
    assert [o.value for o in await extract.answer([Call("The answer is: 42")], env_for(lm, "gsm8k"))] == ["42"]


async def test_the_executed_program_keeps_its_json_format():
    # Result.details["executed"] is read from results files: keys, order and nesting are the format
    result = await decomp(decomposer="reference", handlers="symbolic").run(Problem("q", LETTER_Q),
                                                                           ctx_for(ScriptedLM([])))
    executed = result.details["executed"]
    assert list(executed) == ["program", "question", "depth", "status", "steps", "answer", "tokens",
                              "calls", "format_errors", "stop_reason"]
    assert executed["stop_reason"] is None
    split, foreach, merge = executed["steps"]
    assert list(split) == ["line", "handler", "operator", "inputs", "answer", "tokens", "calls", "error",
                           "children"]
    assert split == {"line": '(split) "What are the words in "Ada Byron Lee"?"', "handler": "split",
                     "operator": "select", "inputs": ['What are the words in "Ada Byron Lee"?'],
                     "answer": ["Ada", "Byron", "Lee"], "tokens": 0, "calls": 0, "error": None,
                     "children": []}
    assert [c["question"] for c in foreach["children"]] == [
        'What is the letter at position 2 of "Ada"?', 'What is the letter at position 2 of "Byron"?',
        'What is the letter at position 2 of "Lee"?']
    assert foreach["children"][0]["steps"][1]["answer"] == "d" and merge["answer"] == "d y e"
    assert json.loads(json.dumps(executed)) == executed


@pytest.mark.parametrize("reply,line", [
    ('{"handler": "split", "operator": "select", "question": "words of \\"a b\\""}', '(split) [select] "words of "a b""'),
    # read with lm.structured.parse_json: a step wrapped in prose or a fence is still read
    # (before, only a reply that was the bare object was; these were malformed)
    ('Here is the next step: {"handler": "merge", "operator": "select", "question": "join #1"}',
     '(merge) [select] "join #1"'),
    ('```json\n{"handler": "EOQ", "operator": "select", "question": ""}\n```', "[EOQ]"),
])
def test_a_structured_step_is_the_first_json_object_in_the_reply(reply, line):
    from thoughtloom.strategies.decomp.controller import json_step_line
    assert json_step_line(reply) == line


@pytest.mark.parametrize("reply,error", [
    ("QS: (split) \"x\"", "step is not JSON: no JSON object found in the reply"),
    ('["split"]', "step JSON needs a handler"),
    ('{"handler": "split", "operator":', "step is not JSON: invalid JSON: Expecting value at char 32"),
])
def test_a_structured_reply_without_a_step_object_is_unparseable(reply, error):
    from thoughtloom.strategies.decomp.controller import json_step_line
    from thoughtloom.strategies.decomp.language import StepError
    with pytest.raises(StepError) as info:
        json_step_line(reply)
    assert info.value.kind == "unparseable" and str(info.value) == error
