import pytest

from thoughtloom.core.errors import DataError
from thoughtloom.tasks import get
from thoughtloom.tasks.factqa import FEVER

from conftest import data_file


def test_fever_label_extraction_and_score():
    t = FEVER()
    assert t.extract_answer("Answer: SUPPORTS") == "SUPPORTS"
    assert t.extract_answer("The passages refute it. Answer: not enough info") == "NOT ENOUGH INFO"
    assert t.extract_answer("Answer: supported") == "SUPPORTS"
    assert t.extract_answer("no idea") is None
    assert t.score("REFUTES", "REFUTES") == {"em": 1.0}


def test_open_squad_gold_is_a_literal_list(tmp_path):
    f = tmp_path / "hgot_test_short.csv"
    f.write_text('Question,Answer\nWho?,"[\'Denver Broncos\', \'Broncos\']"\nBad?,"[1, 2]"\n')
    with pytest.raises(DataError, match=r"hgot_test_short.csv:3"):
        get("open_squad").load(f)
    f.write_text('Question,Answer\nWho?,"[\'Denver Broncos\', \'Broncos\']"\n')
    (ex,) = get("open_squad").load(f)
    assert ex.gold == ["Denver Broncos", "Broncos"] and ex.problem.meta["stratum"] == "short"
    assert get("open_squad").score("broncos", ex.gold) == {"em": 1.0, "f1": 1.0}


def test_report_weights_strata_by_size():
    t = get("hotpotqa")
    recs = [{"meta": {"stratum": s}, "metrics": {"em": v, "f1": v}}
            for s, v in [("long", 1.0), ("long", 0.0), ("medium", 1.0), ("short", 0.0)]]
    rep = t.report(recs)["strata"]["em"]
    assert rep["long"]["mean"] == 0.5 and rep["overall"]["mean"] == 0.5 and rep["overall"]["n"] == 4


def test_paper_folder_interleaves_strata():
    exs = get("fever").load(data_file("fever"))
    assert [e.problem.meta["stratum"] for e in exs[:6]] == ["long", "medium", "short"] * 2
    assert len(exs) == 413


def test_hotpot_dev_jsonl_strata_by_percentile():
    exs = get("hotpotqa").load(data_file("hotpotqa", "hotpot_dev_distractor_subset.jsonl"))
    strata = [e.problem.meta["stratum"] for e in exs]
    assert 0 < strata.count("long") < 0.05 * len(exs)
    assert exs[0].gold["support"]
