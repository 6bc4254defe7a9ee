"""The general split's indexed lists (``[(A, 1), (d, 2), ...]``) as the symbolic twins read and write them.

A model writes these lists under ``handlers=lm``, so ``arr_position`` reads
hostile text too: an error here is a ValueError or IndexError (a step's
error), never a crash or a hang.
"""

import pytest

from thoughtloom.strategies.decomp.functions import an_indexed_list, arr_position, indexed, split


def test_split_writes_words_letters_and_their_positions():
    assert split('What are the words in "Alan Mathison Turing"?') == ["Alan", "Mathison", "Turing"]
    assert split('What are the letters in "Ada"?') == ["A", "d", "a"]
    assert split('What are the letters and their positions in "Ada"?') == "[(A, 1), (d, 2), (a, 3)]"
    assert split('What are the words and their positions in "Ada Byron"?') == "[(Ada, 1), (Byron, 2)]"


def test_arr_position_reads_the_indexed_list_by_its_stated_positions():
    letters = indexed(list("Nancy"))
    assert arr_position(f"What is at position 3 in {letters}?") == "n"
    assert arr_position(f"What is at the last position in {letters}?") == "y"
    assert arr_position("What is at position 1 in [(b, 2), (a, 1)]?") == "a"  # stated order wins
    assert arr_position('What is at position 2 in ["x", "y"]?') == "y"  # a JSON list still reads


@pytest.mark.parametrize("question, error", [
    ("", ValueError),
    ("What is at position 3 in nothing?", ValueError),
    ("What is at position 9 in [(a, 1), (b, 2)]?", IndexError),
    ("What is at position 999999999 in [(a, 1)]?", IndexError),
    ("What is at position 1 in [(, )]?", ValueError),
    ("What is at [(a, 1)]?", ValueError),  # no position asked
])
def test_arr_position_refuses_what_it_cannot_read(question, error):
    with pytest.raises(error):
        arr_position(question)


def test_hostile_indexed_text_is_read_or_refused_without_blowing_up():
    assert an_indexed_list("[(" * 100_000) is None  # no closing: one linear scan, nothing found
    assert an_indexed_list("[[(a, 1)]]") == ["a"]  # the innermost list
    assert an_indexed_list("[(NaN, 1), (inf, 2)]") == ["NaN", "inf"]  # items are text, never numbers
    assert arr_position("What is at position 1 in [(\ud800, 1)]?") == "\ud800"
    huge = indexed([f"w{i}" for i in range(50_000)])
    assert arr_position(f"What is at the last position in {huge}?") == "w49999"
