"""Parsers of model text are bounded and fail typed (issue 11 §1): one test per broken limit."""

import asyncio
import time

import pytest

from thoughtloom.core.bounded import MAX_DEPTH, check_depth, loads_json, to_float, to_fraction, to_int
from thoughtloom.core.errors import ParseError
from thoughtloom.core.types import Request, request_hash
from thoughtloom.lm.structured import parse_json
from thoughtloom.strategies.decomp.functions import calculator
from thoughtloom.strategies.decomp.language import parse_step, parse_value, strip_fence
from thoughtloom.strategies.hgot.plan import PlanError, parse_plan
from thoughtloom.strategies.treesearch.reading import read_evaluation, read_score, salvage_holistic
from thoughtloom.tasks import get
from thoughtloom.tasks.arith import ExpressionError, check_24, parse_expression
from thoughtloom.tasks.answers import answer_statement, read_number
from thoughtloom.tasks.metrics import numbers_equal
from thoughtloom.tasks.outline import outline_items, read_judge_reply
from thoughtloom.testing import ScriptedLM

HUGE = "1" + "0" * 5000


@pytest.mark.parametrize("text", [HUGE, "[" * 2000 + "]" * 2000, "NaN", "[Infinity]", '{"a": 1e400}',
                                  "[1,", "x" * 200_001],
                         ids=["huge", "deep", "nan", "inf", "overflow", "truncated", "long"])
def test_loads_json_refuses_with_parse_error(text):
    with pytest.raises(ParseError):
        loads_json(text)


def test_loads_json_reads_ordinary_json_and_replaces_escaped_lone_surrogates():
    assert loads_json('{"a": [1, 2.5, "x"], "b": null}') == {"a": [1, 2.5, "x"], "b": None}
    value = loads_json('{"k\\ud800": ["\\ud83d", "\\ud83d\\ude00"]}')
    assert value == {"k\ufffd": ["\ufffd", "\U0001f600"]}


def test_number_helpers():
    assert to_int("42") == 42 and to_fraction("3/4") == to_fraction("0.75") and to_float("2.5") == 2.5
    for bad in (lambda: to_int(HUGE), lambda: to_fraction(HUGE), lambda: to_fraction("1e100000000"),
                lambda: to_float("1e400"), lambda: to_float("nan"), lambda: to_float(float("inf"))):
        with pytest.raises(ParseError):
            bad()
    check_depth("(" * MAX_DEPTH + ")" * MAX_DEPTH)
    with pytest.raises(ParseError):
        check_depth("(" * (MAX_DEPTH + 1))


@pytest.mark.parametrize("reply", ["[" * 1000, "{" * 1000, "9" * 5000, '{"score": ' + HUGE + "}",
                                   '{"score": NaN}', "```json\n" + "[" * 3000 + "\n```"],
                         ids=["brackets", "braces", "digits", "huge", "nan", "fenced"])
def test_parse_json_fails_typed(reply):
    with pytest.raises(ParseError):
        parse_json(reply)


def test_arithmetic_parser_bounds():
    for expr in ("(" * 500 + "1" + ")" * 500, "9" * 5000 + " * 1", " + ".join(["1"] * 1000)):
        with pytest.raises(ExpressionError):
            parse_expression(expr)
        assert check_24(expr, [1])[0] is False
    assert check_24("(4 + 4) * 3", [4, 4, 3]) == (True, "correct")
    assert calculator("-3 + 4 * (2 - 1) =") == "1"
    with pytest.raises(ValueError):  # the handler records it
        calculator("(" * 400 + "1" + ")" * 400)


def test_numbers_in_answers():
    assert read_number("The answer is 1" + "0" * 309) == "1" + "0" * 309
    assert read_number("The answer is 1" + "0" * 5000) is None  # no readable number
    assert numbers_equal("1" + "0" * 400, "5") == 0.0
    assert numbers_equal("1/0." + "0" * 400 + "1", "5") == 0.0  # exact: 1e401 overflows a float
    gsm = get("gsm8k")
    assert gsm.score("The answer is 1" + "0" * 309, "1")[gsm.primary_metric] == 0.0
    assert gsm.score("The answer is " + "9" * 5000, "1")[gsm.primary_metric] == 0.0


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 10 ** 1000, "Infinity", "1e400", "9" * 5000])
def test_non_finite_scores_are_malformed(value):
    assert read_score(value) is None
    assert read_evaluation({"score": value, "feedback": "x"}) is None


def test_scores_still_read():
    assert read_score(7) == 0.7 and read_score("8/10") == 0.8 and read_score("85") == 0.85
    assert salvage_holistic('{"score": 1e400, "feedback": "cut') is None
    assert salvage_holistic('{"score": 6, "feedback": "cut').score == 0.6
    assert read_judge_reply('{"interesting": ' + "9" * 5000) is None
    assert read_judge_reply({"interesting": float("inf")}) is None and read_judge_reply('{"interesting": "yes"}')


def test_scorers_survive_nesting_and_huge_numbers():
    assert get("commaqa").score("[" * 1000, ["a"])["em"] == 0.0
    assert parse_value("[" * 3000 + "]" * 3000) == "[" * 3000 + "]" * 3000  # not JSON we read: text
    with pytest.raises(ParseError):
        parse_step("(split) #" + "1" * 5000, {"split"}, 1)


@pytest.mark.parametrize("parse", [
    lambda t: parse_plan(t), outline_items, answer_statement, read_number, strip_fence,
    lambda t: get("crosswords").extract_answer(t), lambda t: get("gsm8k").extract_answer(t),
])
@pytest.mark.parametrize("line", ["Step 1" + " " * 100_000 + "x", "answer" + " " * 100_000,
                                  "1 " + "x" + " " * 100_000 + "y", "```" + " " * 100_000 + "x",
                                  "h1" + " " * 100_000 + "x", "*" * 100_000],
                         ids=["step", "answer", "item", "fence", "word", "stars"])
def test_long_lines_are_read_in_linear_time(parse, line):
    # the old patterns backtracked quadratically: minutes on these lines
    t0 = time.perf_counter()
    try:
        parse(line)
    except PlanError:
        pass
    assert time.perf_counter() - t0 < 5


def test_plan_still_parses():
    plan = parse_plan("**Step 1**: Who directed Jaws?  \nStep 2) When was he born?\nDependencies: Step 1 -> Step 2")
    assert plan.steps == ("Who directed Jaws?", "When was he born?") and plan.edges == ((1, 2),)
    with pytest.raises(PlanError):
        parse_plan("Step 9999999: x")


def test_lone_surrogates_hash_and_arrive_replaced():
    req = Request.of("from a data file \ud83d")
    assert len(request_hash("m", req)) == 64
    assert request_hash("m", Request.of("plain")) == request_hash("m", Request.of("plain"))
    lm = ScriptedLM(["bad \ud83d reply"])
    [c] = asyncio.run(lm.generate([Request.of("q")]))
    assert c.text == "bad \ufffd reply"
    c.text.encode("utf-8")


@pytest.mark.parametrize("parse", [
    lambda t: get("hotpotqa").extract_answer(t), lambda t: get("fever").extract_answer(t),
    lambda t: get("outline").extract_answer(t), lambda t: get("game24").extract_answer(t),
    lambda t: __import__("thoughtloom.strategies.hgot.thought", fromlist=["x"])._ANSWER.match(t),
    lambda t: __import__("thoughtloom.strategies.baselines.react", fromlist=["x"])._THOUGHT.match(t),
    lambda t: __import__("thoughtloom.strategies.baselines.react", fromlist=["x"])._ACTION.search(t),
])
@pytest.mark.parametrize("line", ["answer" + " " * 60_000, "*" + " " * 60_000 + "x", "\n" * 60_000,
                                  "Action" + " " * 60_000, "Thought" + " " * 60_000 + "\n" + " " * 60_000],
                         ids=["answer", "stars", "newlines", "action", "thought"])
def test_more_answer_readers_run_in_linear_time(parse, line):
    t0 = time.perf_counter()
    parse(line)
    assert time.perf_counter() - t0 < 5
