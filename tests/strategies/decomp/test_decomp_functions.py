"""Built-in symbolic functions and their registry (no model)."""

import pytest

from thoughtloom.strategies.decomp.functions import calculator, symbolic, symbolic_function, symbolic_names
from thoughtloom.tasks.arith import ExpressionError


@pytest.mark.parametrize("question,answer", [
    ("Compute: 3 x 4 =", "12"),
    ("Compute: 1,200 / 5", "240"),
    ("7 / 2", "3.5"),
    ("1/3", "0.333333"),
    ("-(2 - 5)", "3"),
    ("2 * -3", "-6"),
    ("3.", "3"),
])
def test_calculator_evaluates_exactly(question, answer):
    assert calculator(question) == answer


@pytest.mark.parametrize("question,answer", [
    # calculator once screened its input with its own character list ([0-9 .+-*/()] after x -> *),
    # so these were "not an arithmetic expression"; the one parser (tasks.arith) reads its synonyms
    ("3 × 4", "12"), ("8 ÷ 2", "4"), ("2 − 1", "1"), ("3 X 4", "12"), ("[1 + 2] * 3", "9"),
])
def test_calculator_reads_what_the_arithmetic_parser_reads(question, answer):
    assert calculator(question) == answer


@pytest.mark.parametrize("question,error", [
    ("What is the capital?", "unexpected character 'W'"),  # was "not an arithmetic expression: ..."
    ("What is 1,200 / 5?", "unexpected character 'W'"),  # no colon: the whole question is read
    ("", "empty expression"),
    ("1/0", "division by zero"),
    (".5", "unexpected character '.'"),
])
def test_calculator_refuses_what_is_not_an_expression(question, error):
    with pytest.raises(ExpressionError, match=error):  # a ValueError: the handler records it on the step
        calculator(question)


def test_the_registry_holds_the_built_ins_and_user_functions():
    assert {"split", "merge", "calculator", "arr_position"} <= set(symbolic_names())

    @symbolic("registry_test_upper")
    def upper(question: str) -> str:
        return question.upper()

    assert symbolic_function("registry_test_upper") is upper
    assert symbolic_function("no_such_function") is None
