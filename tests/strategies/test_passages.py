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
