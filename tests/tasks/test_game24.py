import json
import time
from pathlib import Path

import pytest

from thoughtloom.core.types import Problem
from thoughtloom.tasks import get
from thoughtloom.tasks.arith import ExpressionError, check_24, parse_expression
from thoughtloom.tasks.game24 import find_expression

from conftest import data_file

REPLIES = Path(__file__).parent / "data" / "game24_replies.jsonl"


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
        parse_expression(bad)  # "-4*6": unary minus only where the caller allows it


@pytest.mark.parametrize("expr,nums,solved", [
    ("-(1 - 5) * 6 * 1", [1, 1, 5, 6], True),   # the example: -(-4) * 6 * 1 = 24
    ("(-4) * (-6) * 1 * 1", [1, 1, 4, 6], True),
    ("-4 * 6 * 1 * 1", [1, 1, 4, 6], False),     # -24
    ("--4 * 6 * 1 * 1", [1, 1, 4, 6], True),
])
def test_unary_minus_is_arithmetic_on_the_given_numbers(expr, nums, solved):
    """ThoughtSculpt Appendix H: "Use the given four numbers and basic arithmetic operations
    (+ - * /) to obtain 24. You can use the numbers only once". Negating a number or a
    bracket is arithmetic on the given numbers, not a new number: -(1 - 5) uses 1 and 5,
    and -(1 - 5) * 6 * 1 = 4 * 6 = 24."""
    assert check_24(expr, nums)[0] is solved


def test_checker_walks_negations_and_brackets_within_their_bounds():
    assert check_24("-" * 10_000 + "24", [24, 0, 0, 0])[0] is False  # bounded, not a RecursionError
    assert "nested deeper" in check_24("(" * 70 + "1" + ")" * 70, [1, 2, 3, 4])[1]


@pytest.mark.parametrize("text,want", [
    ("Let me think.\nExpression: (13 - 9) * (10 - 4)", "(13 - 9) * (10 - 4)"),
    ("The answer is: (6 - 3) * 2 * 4 = 24.", "(6 - 3) * 2 * 4"),
    ("```python\n(1 + 2) * (2 * 4)\n```", "(1 + 2) * (2 * 4)"),
    ("Numbers: 4 9 10 13\nI cannot do it.", None),
    # the example: the marked line wins over a later line that holds numbers
    ("Expression: (6 - 3) * 2 * 4\nThis uses 2, 3, 4, 6.", "(6 - 3) * 2 * 4"),
    ("24 = (13 - 9) * (10 - 4)", "(13 - 9) * (10 - 4)"),
    ("So: 24 = (13 - 9) * (10 - 4), done", "(13 - 9) * (10 - 4)"),
    ("**Answer:** $(6 - 3) \\times 2 \\times 4 = 24$", "(6 - 3) * 2 * 4"),
    ("The final answer is **6 × (5 − 1) ÷ 1**.", "6 × (5 − 1) ÷ 1"),
    ("Answer:\n```python\n-(1 - 5) * 6 * 1\n```", "-(1 - 5) * 6 * 1"),
    ("Working: 13 - 9 = 4\n10 - 4 = 6\n```\n(13 - 9) * (10 - 4)\n```\n4 * 6 = 24", "(13 - 9) * (10 - 4)"),
    ("\\( 8 \\div (3 - \\frac{8}{3}) \\)", "8 / (3 - ((8)/(3)))"),
    ("Expression: (13-9)*(10-4)\nAnswer: 24", "(13-9)*(10-4)"),   # a bare number is no answer
    ("- (4 + 8) * (6 - 4)", "(4 + 8) * (6 - 4)"),                  # a list bullet is not a minus
    ("Expression: 24", None),
])
def test_find_expression(text, want):
    assert find_expression(text) == want


def test_without_a_marker_the_last_line_using_exactly_the_numbers_wins():
    """After marked lines and code blocks, "the last line that uses exactly the four
    numbers" (issue 23): working lines that use two of them come later but lose."""
    text = "(13 - 9) * (10 - 4) = 24\nwhere 13 - 9 = 4\nand 10 - 4 = 6"
    assert find_expression(text, [4, 9, 10, 13]) == "(13 - 9) * (10 - 4)"
    assert find_expression("13 - 9 = 4\n4 * 6 = 24", [4, 9, 10, 13]) == "4 * 6"  # none does: the last one


def _replies():
    return [json.loads(line) for line in REPLIES.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("case", _replies(), ids=lambda c: f"{c['strategy']}-{c['id']}-{c['text'][:12]}")
def test_real_replies_are_read_and_checked_as_labelled(case):
    """Real replies of the embedded model; ``expected`` and ``solved`` were checked by hand.
    The CoT arm (extract_answer, numbers unknown) and the search arms (parse_candidate,
    numbers known) read the same expression: two arms of one comparison, one reader."""
    t = get("game24")
    problem = Problem(case["id"], " ".join(map(str, case["numbers"])))
    assert t.parse_candidate(problem, case["text"], None) == case["expected"]
    assert t.extract_answer(case["text"]) == case["expected"]
    assert t.score(case["expected"], case["numbers"]) == {"success": float(case["solved"])}


def test_the_labelled_replies_are_there():
    assert len(_replies()) >= 40


@pytest.mark.parametrize("text", [
    "",
    " \n\t ",
    "Expression: " + "(" * 10_000 + "1" + ")" * 10_000,
    "(" * 10_000 + "\n" + ")" * 10_000,
    "Answer: " + "1+" * 200_000 + "1",
    "Expression: " + "9" * 5_000 + " * 1",
    "Answer: inf * 24\nExpression: nan\n1e400 * 1",
    "Expression: \ud800(1 + 2) * 8\udfff",
    "```" * 50_000,
    "**Answer:**" * 20_000,
    ("x " * 100_000) + "\n" + "= " * 100_000,
])
def test_hostile_replies_are_read_quickly_without_error(text):
    t = get("game24")
    t0 = time.perf_counter()
    expr = find_expression(text)
    assert expr is None or check_24(expr, [1, 2, 3, 4])[0] is False
    assert t.parse_candidate(Problem("p", "1 2 3 4"), text, None) == expr
    assert t.score(expr, [1, 2, 3, 4]) == {"success": 0.0}
    assert time.perf_counter() - t0 < 5


def test_an_unencodable_reply_still_gives_its_expression():
    assert find_expression("Expression: \ud800(1 + 2) * 8\udfff") == "(1 + 2) * 8"


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


@pytest.mark.parametrize("parent,child,kind", [
    ("4+9", "14+9", "revised"),        # the example: "4+9" is a substring of "14+9"
    ("4+9", "(4+9)*2", "extended"),
    ("4+9", "2*(9+4)", "extended"),    # the same numbers, reordered
    ("4+4", "(4+9)*2", "revised"),     # one 4 is not two
    ("", "13-9", "extended"),
    ("13-9", "not an expression", "revised"),
])
def test_extension_is_checked_on_the_multiset_of_numbers(parent, child, kind):
    """A ToT thought extends its parent (Yao et al.: each step combines two of the numbers
    left); a child extends a partial expression when it uses every number the parent uses,
    counted as a multiset, so "14+9" (numbers 14, 9) does not extend "4+9" (4, 9)."""
    assert get("game24").change_kind(parent, child) == kind


def test_load_the_real_file():
    t = get("game24")
    examples = t.load(data_file("game24", "24.csv"))
    assert len(examples) > 1000
    first = examples[0]
    assert first.problem.question == "1 1 4 6" and first.gold == [1, 1, 4, 6]
    assert first.problem.id == "game24-1"


def test_the_task_states_the_papers_rules():
    """ThoughtSculpt Appendix H: "Use the given four numbers and basic arithmetic operations
    (+ - * /) to obtain 24. You can use the numbers only once but you can use them in any
    order." Our wording says the same: the four numbers, each exactly once, + - * /, 24."""
    t = get("game24")
    text = t.describe(Problem("p", "4 9 10 13"))
    assert "4 9 10 13" in text and "exactly once" in text and "+ - * /" in text and "24" in text


def test_the_suite_keeps_the_papers_test_set_apart():
    """Appendix H: "We additionally experiment with our method on the game of 24 using the
    same test set provided by (Yao et al., 2023a)", which is puzzles 901-1000 of 24.csv
    (Yao et al.'s scripts/game24/bfs.sh: --task_start_index 900 --task_end_index 1000).
    The sculpt-game24 suite runs the 100 puzzles just below them, 801-900 (a deviation:
    the test set stays unseen while prompts are tuned here)."""
    from thoughtloom.eval.reproduce import suites

    suite = suites.load("sculpt-game24")
    (dataset,) = suite.datasets
    assert dataset.offset == 800 and suite.n == 100
    examples = get("game24").load(data_file("game24", "24.csv"))[dataset.offset:dataset.offset + suite.n]
    assert [e.problem.id for e in examples[:1] + examples[-1:]] == ["game24-801", "game24-900"]


def test_a_question_without_four_numbers_is_read_not_a_crash():
    """A user's `thoughtloom run` question may not hold four numbers: the search still
    reads each reply (any four numbers count as the puzzle's)."""
    t = get("game24")
    assert t.parse_candidate(Problem("p", "4 9 10"), "Expression: 4 * (10 - 9)", None) == "4 * (10 - 9)"


# -- what the tree search reads of the task, and loading (exact values) ----------------------------

def test_the_search_sees_the_numbers_and_an_expression_line():
    task, problem = get("game24"), Problem("p", "4 4 6 8")
    assert "Numbers: 4 4 6 8" in task.describe(problem)
    assert task.render(problem, "(4 + 8) * (6 - 4)") == "Expression: (4 + 8) * (6 - 4)"
    assert task.candidate_answer(problem, "(4 + 8) * (6 - 4)") == "(4 + 8) * (6 - 4)"


def test_an_answer_marker_at_the_end_of_its_line_reads_the_next_line():
    assert find_expression("The answer is:\n(1 + 2 + 3) * 4\nThat is 24.", [1, 2, 3, 4]) == "(1 + 2 + 3) * 4"


def test_unary_minus_counts_as_using_the_numbers():
    """A correct `-(1 - 5) * 6 * 1` for 1 1 5 6 (issue 23, item 5) uses each number once."""
    from collections import Counter
    from fractions import Fraction

    from thoughtloom.tasks.game24 import numbers_used

    assert numbers_used("-(1 - 5) * 6 * 1") == Counter({Fraction(1): 2, Fraction(5): 1, Fraction(6): 1})
    assert find_expression("-(1 - 5) * 6 * 1", [1, 1, 5, 6]) == "-(1 - 5) * 6 * 1"


def test_puzzle_ids_come_from_the_rank_column_else_the_row(tmp_path):
    ranked = tmp_path / "ranked.csv"
    ranked.write_text("Rank,Puzzles\n7,1 2 3 4\n9,4 4 6 8\n", encoding="utf-8")
    plain = tmp_path / "plain.csv"
    plain.write_text("Puzzles\n1 2 3 4\n4 4 6 8\n", encoding="utf-8")
    assert [e.problem.id for e in get("game24").load(ranked)] == ["game24-7", "game24-9"]
    assert [e.problem.id for e in get("game24").load(plain)] == ["game24-1", "game24-2"]


def test_the_task_surface_the_strategies_read_is_exact():
    task, problem = get("game24"), Problem("p", "1 2 3 4")
    assert len(task.demos()) >= 1 and all(d.answer for d in task.demos())
    assert task.normalize(" (1 + 2) * ( 3 + 4 ) ") == "(1+2)*(3+4)"
    assert task.evaluation_items(problem, "1 + 2") == ()  # holistic: one score per expression
    assert "1 2 3 4" in task.evaluation_guide(problem) and "24" in task.evaluation_guide(problem)
    # the puzzle's four numbers decide which expression counts; a bare "24" is no attempt
    assert task.parse_candidate(problem, "Expression: (1 + 2 + 3) * 4", None) == "(1 + 2 + 3) * 4"
    assert task.parse_candidate(problem, "24", None) is None
    # without four numbers in the question, an expression of any four numbers is a candidate
    assert task.parse_candidate(Problem("q", "make 24"), "Expression: 6 * 4 * 1 * 1", None) == "6 * 4 * 1 * 1"


def test_a_row_with_an_empty_puzzle_names_its_line(tmp_path):
    from thoughtloom.core.errors import DataError

    path = tmp_path / "p.csv"
    path.write_text("Rank,Puzzles\n1,1 2 3 4\n2,\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"p\.csv:3"):
        get("game24").load(path)


# -- the reader's order, case by case (each kills a mutant that the cases above let through) -----------

def test_without_numbers_a_line_using_four_numbers_beats_a_later_working_line():
    """find_expression's docstring: "else the last line whose expression uses exactly ``numbers``
    (any four numbers when they are not given)". Without numbers, the four-number line wins over
    the later two-number working line, which is only the last resort."""
    assert find_expression("(13 - 9) * (10 - 4) = 24\nwhere 13 - 9 = 4") == "(13 - 9) * (10 - 4)"


def test_a_marker_with_its_expression_on_the_same_line_does_not_read_the_next_line():
    """"the last marked line": the expression after "Answer:" is the answer; the line after a
    marker is read only when the marker ends its line (here the next line holds `6 - 3`)."""
    assert find_expression("Answer: (6 - 3) * 2 * 4\nCheck: 6 - 3 = 3") == "(6 - 3) * 2 * 4"


def test_a_bare_marker_reads_the_line_right_after_it_not_a_later_one():
    """"or the line after a bare marker": the first line after "Answer:", even though a later
    unmarked line also uses four numbers (the fallback would take that last one)."""
    assert find_expression("Answer:\n(6 - 3) * 2 * 4\n(13 - 9) * (10 - 4)") == "(6 - 3) * 2 * 4"


def test_the_last_marker_on_a_line_starts_the_answer():
    """Two markers on one line: the text after the LAST one is the answer ("the answer is:"),
    not the rejected attempt after the first ("Expression:")."""
    text = "Expression: 1 + 2 + 3 + 4 is wrong, so the answer is: (13 - 9) * (10 - 4)"
    assert find_expression(text) == "(13 - 9) * (10 - 4)"


def test_equally_ranked_sides_of_an_equals_sign_keep_the_side_written_first():
    """``EXPR = 24`` gives EXPR: the side written first is the model's expression and what follows
    '=' is what it equals. When both sides rank alike (an operator, two numbers, neither the
    puzzle's), the first still wins."""
    assert find_expression("3 * 8 = 4 * 6") == "3 * 8"


def test_parse_candidate_holds_expressions_to_the_puzzles_own_numbers():
    """parse_candidate passes the puzzle's four numbers: a later line using four OTHER numbers is
    not the candidate; with three numbers in the question any four numbers count (and the later
    three-number line does not)."""
    task = get("game24")
    text = "(13 - 9) * (10 - 4) = 24\nnot 1 + 2 + 3 + 4"
    assert task.parse_candidate(Problem("p", "4 9 10 13"), text, None) == "(13 - 9) * (10 - 4)"
    assert task.parse_candidate(Problem("p", "4 9 10"), "4 * (10 - 9) * 6\nthen 4 + 9 + 10", None) == "4 * (10 - 9) * 6"


@pytest.mark.parametrize("content", ["", "Rank,Numbers\n1,1 2 3 4\n"])
def test_a_csv_without_a_puzzles_column_names_line_1(tmp_path, content):
    """An empty file and a header without 'Puzzles' are both refused at line 1, naming the column."""
    from thoughtloom.core.errors import DataError

    path = tmp_path / "p.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=r"p\.csv:1: expected a CSV header .*Puzzles"):
        get("game24").load(path)


@pytest.mark.parametrize("candidate", ["(13 - 9", "13 9 10 4", "24", "", "(13-9)*(10-4)*x"])
def test_an_unparseable_candidate_is_worth_nothing_to_the_symbolic_evaluator(candidate):
    """symbolic_score: "1 if solved; else the share of the puzzle's numbers the expression uses legally".
    A candidate that does not parse uses nothing legally: 0.0, never the solved 1.0 or a partial share
    (a bare "24" is not the four numbers combined either)."""
    assert get("game24").symbolic_score(Problem("p", "4 9 10 13"), candidate) == 0.0
