import pytest

from thoughtloom.tasks import get
from thoughtloom.tasks.crosswords import (board_metrics, cells, empty_board, grid, overwrites,
                                          parse_clues, place, word_at)

from conftest import data_file

GOLD = "AGENDWIRERAMOVERISENEXERT"  # puzzle 0 of mini0505.json


def test_cells_rows_and_columns():
    assert cells("h1") == [0, 1, 2, 3, 4]
    assert cells("h3") == [10, 11, 12, 13, 14]
    assert cells("v2") == [1, 6, 11, 16, 21]
    assert word_at(GOLD, "h2") == "WIRER" and word_at(GOLD, "v1") == "AWARE"


def test_place_writes_across_and_down_and_crossings_show():
    b = place(empty_board(), "h1", "agend")
    assert word_at(b, "v1") == "A____" and word_at(b, "v5") == "D____"
    b2 = place(b, "v1", "AWARE")
    assert word_at(b2, "h2").startswith("W") and not overwrites(b, b2)
    b3 = place(b2, "v1", "BWARE")  # changes the A of AGEND
    assert overwrites(b2, b3) and word_at(b3, "h1") == "BGEND"
    with pytest.raises(ValueError):
        place(b, "h2", "TOOLONG")
    assert grid(b).splitlines()[0] == "A G E N D"


def test_metrics_letters_words_games():
    assert board_metrics(GOLD, GOLD) == {"letters": 1.0, "words": 1.0, "game": 1.0}
    half = place(empty_board(), "h1", "AGEND")
    m = board_metrics(half, GOLD)
    assert m["letters"] == pytest.approx(5 / 25) and m["words"] == pytest.approx(0.1) and m["game"] == 0.0
    assert board_metrics(None, GOLD)["letters"] == 0.0
    wrong_one = GOLD[:-1] + "X"
    m = board_metrics(wrong_one, GOLD)
    assert m["letters"] == pytest.approx(24 / 25) and m["words"] == pytest.approx(0.8) and m["game"] == 0.0


def _problem():
    t = get("crosswords")
    return t, t.load(data_file("crosswords_mini5x5", "mini0505.json"))[0]


def test_child_applies_one_word_onto_the_parent_and_kind_is_reported():
    t, ex = _problem()
    assert ex.gold == GOLD
    parent = place(empty_board(), "h1", "AGEND")
    child = t.parse_candidate(ex.problem, "I think:\nv1. [Mindful: A____] AWARE (high)\nh2. WIRER", parent)
    assert child == place(parent, "v1", "AWARE")   # only the first word line is applied
    assert t.change_kind(parent, child) == "extended"
    revised = t.parse_candidate(ex.problem, "h1. ITEMS", parent)
    assert t.change_kind(parent, revised) == "revised"
    assert t.parse_candidate(ex.problem, "no idea", parent) is None
    assert t.parse_candidate(ex.problem, "h1. AGEND", parent) is None  # no change


def test_itemized_evaluation_items_show_letters_in_place():
    t, ex = _problem()
    board = place(empty_board(), "h1", "AGEND")
    items = t.evaluation_items(ex.problem, board)
    assert len(items) == 10
    assert items[0].endswith(": AGEND") and items[5] == "v1. Mindful; conscious: A____"
    assert "A G E N D" in t.render(ex.problem, board)


def test_question_round_trips_through_clue_lines_and_bad_input_is_named():
    t, ex = _problem()
    assert parse_clues(ex.problem.question)["v2"] == "A gadget"
    with pytest.raises(Exception, match="missing"):
        parse_clues("h1. only one clue")


def test_extract_answer_from_rows_or_word_lines():
    t = get("crosswords")
    rows = "\n".join(" ".join(GOLD[r * 5:(r + 1) * 5]) for r in range(5))
    assert t.extract_answer(f"Final board:\n{rows}") == GOLD
    b = t.extract_answer("h1. AGEND\nv1. AWARE")
    assert word_at(b, "h1") == "AGEND" and word_at(b, "v1") == "AWARE"
