import pytest

from thoughtloom.tasks import get
from thoughtloom.tasks.arith import ExpressionError, check_24, parse_expression
from thoughtloom.tasks.game24 import find_expression

from conftest import data_file


@pytest.mark.parametrize("expr,nums", [
    ("8/(3-8/3)", [3, 3, 8, 8]),         # needs exact fractions: 3 - 8/3 = 1/3
    ("(13 - 9) * (10 - 4)", [4, 9, 10, 13]),
    ("(5 - 1/5) * 5", [1, 5, 5, 5]),
    ("6 × (5 − 1) ÷ 1", [1, 1, 5, 6]),   # unicode operators
])
def test_correct_solutions(expr, nums):
    assert check_24(expr, nums) == (True, "correct")


def test_float_arithmetic_would_fail_where_fractions_do_not():
    assert 8 / (3 - 8 / 3) != 24  # floating point misses it
    assert parse_expression("8/(3-8/3)").value == 24


@pytest.mark.parametrize("expr,nums,reason", [
    ("8/(3-3)*8", [3, 3, 8, 8], "division by zero"),
    ("4*6", [4, 6, 1, 1], "unused: 1 1"),
    ("(4+4)*3*1", [4, 3, 1, 2], "unused: 2; not allowed or used twice: 4"),
    ("(4+4)*3*1*2*1", [4, 4, 3, 1], "not allowed or used twice"),
    ("4*6+0", [4, 6, 1, 1], "not allowed or used twice: 0"),
    ("(13 - 9) * (10 - 5)", [4, 9, 10, 13], "unused: 4"),
    ("(1+2)*(2*4)", [1, 2, 2, 4], "correct"),
    ("1+2+3+4", [1, 2, 3, 4], "equals 10, not 24"),
    ("__import__('os')", [1, 2, 3, 4], "unexpected character"),
    ("", [1, 2, 3, 4], "no expression"),
])
def test_checker_reasons(expr, nums, reason):
    solved, why = check_24(expr, nums)
    assert reason in why
    assert solved == (reason == "correct")


@pytest.mark.parametrize("bad", ["(1+2", "1+", "2**3", "-4*6", "1 2"])
def test_parser_rejects_malformed(bad):
    with pytest.raises(ExpressionError):
        parse_expression(bad)


@pytest.mark.parametrize("text,want", [
    ("Let me think.\nExpression: (13 - 9) * (10 - 4)", "(13 - 9) * (10 - 4)"),
    ("The answer is: (6 - 3) * 2 * 4 = 24.", "(6 - 3) * 2 * 4"),
    ("```python\n(1 + 2) * (2 * 4)\n```", "(1 + 2) * (2 * 4)"),
    ("Numbers: 4 9 10 13\nI cannot do it.", None),
])
def test_find_expression(text, want):
    assert find_expression(text) == want


def test_task_scores_symbolically_and_offers_a_labelled_symbolic_score():
    t = get("game24")
    from thoughtloom.core.types import Problem

    p = Problem("x", "4 9 10 13")
    assert t.score("(13-9)*(10-4)", [4, 9, 10, 13]) == {"success": 1.0}
    assert t.score("13+9+10-4", [4, 9, 10, 13]) == {"success": 0.0}
    assert t.symbolic_score(p, "(13-9)*(10-4)") == 1.0
    assert t.symbolic_score(p, "(13-9)") == pytest.approx(0.25)  # partial: 2 of 4 numbers, halved
    assert t.symbolic_score(p, "7*3") == 0.0
    assert t.parse_candidate(p, "Expression: 24", None) is None  # a bare number is no attempt
    assert t.parse_candidate(p, "so\nExpression: (13-9)*(10-4) = 24", None) == "(13-9)*(10-4)"
    assert t.change_kind("(13 - 9)", "(13-9)*(10-4)") == "extended"
    assert t.change_kind("(13 - 9)*6", "(13-9)*(10-4)") == "revised"


def test_load_the_real_file():
    t = get("game24")
    examples = t.load(data_file("game24", "24.csv"))
    assert len(examples) > 1000
    first = examples[0]
    assert first.problem.question == "1 1 4 6" and first.gold == [1, 1, 4, 6]
    assert first.problem.id == "game24-1"
