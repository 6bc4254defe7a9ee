"""``compare_runs``: means with intervals per run, paired differences per pair, notes where runs differ."""

import json

import pytest

from thoughtloom.view.compare import compare_runs, comparison_page

from support import view_runs


@pytest.fixture(scope="module")
def cot_vs_sc(tmp_path_factory):
    root = tmp_path_factory.mktemp("cmp")
    # the same four questions: cot answers 16 on every one (wrong), cot-sc's vote says 6 (right)
    cot = view_runs.sampling_run(root / "cot", strategy="cot", answers=("16",))
    sc = view_runs.sampling_run(root / "sc", strategy="cot-sc", answers=("6", "16", "6"))
    return cot, sc


def test_each_run_gets_its_means_intervals_and_cost(cot_vs_sc):
    result = compare_runs(cot_vs_sc, replicates=500)
    cot, sc = result["runs"]
    assert (cot["strategy"], sc["strategy"]) == ("cot", "cot-sc") and cot["n"] == sc["n"] == 4
    assert cot["metrics"]["accuracy"] == {"mean": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 4, "confidence": 0.95}
    assert sc["metrics"]["accuracy"]["mean"] == 1.0 and sc["calls_per_example"] == 3.0
    assert cot["calls_per_example"] == 1.0 and cot["tokens_per_correct"] is None  # none correct: no figure
    assert sc["tokens_per_correct"] == sc["tokens_per_example"]
    json.dumps(result, allow_nan=False)  # plain JSON: no NaN


def test_each_pair_gets_the_paired_difference_on_shared_examples(cot_vs_sc):
    result = compare_runs(cot_vs_sc, replicates=500)
    [pair] = result["pairs"]
    diff = pair["differences"]["accuracy"]
    assert pair["shared"] == 4 and pair["notes"] == [] and (pair["a"], pair["b"]) == (0, 1)
    # cot-sc right and cot wrong on all four: exact McNemar on 4 discordant pairs, p = 2 * (1/2)^4 = 0.125,
    # which no test can bring under 0.05 at this n: inconclusive, with the reason (the bootstrap said "holds")
    assert diff["mean"] == 1.0 and diff["n"] == 4 and diff["p_value"] == 0.125 and diff["min_p"] == 0.125
    assert diff["test"].startswith("exact McNemar") and diff["verdict"] == "inconclusive"
    assert diff["reason"] == "n = 4: the smallest p-value possible is 0.125" and diff["family"] == 1
    assert diff["ci_high"] == 1.0 and 0 < diff["ci_low"] < 1  # Newcombe's interval: wide at n = 4
    assert diff["mde"] is None  # 4 discordant pairs: no difference is detectable at all


def test_differences_in_task_model_or_examples_are_noted(tmp_path, cot_vs_sc):
    other = view_runs.sampling_run(tmp_path / "fewer", strategy="cot", answers=("6",), n_examples=2)
    identity = json.loads((other / "run.json").read_text())  # what the runner recorded, edited
    identity["config"]["model"]["id"] = "bigger"
    identity["config"]["data"] = {"path": "elsewhere.jsonl", "sha256": "ab12"}
    (other / "run.json").write_text(json.dumps(identity))
    [pair] = compare_runs([cot_vs_sc[0], other], replicates=200)["pairs"]
    assert pair["shared"] == 2 and pair["differences"]["accuracy"]["n"] == 2
    assert any(n.startswith("different model") for n in pair["notes"])
    assert any(n.startswith("different data") for n in pair["notes"])
    assert "2 shared examples (of 4 and 2)" in pair["notes"]
    game = view_runs.tree_run(tmp_path / "game")
    [pair] = compare_runs([cot_vs_sc[0], game], replicates=200)["pairs"]
    assert pair["differences"] == {} and "different task: gsm8k vs game24" in pair["notes"]


def test_the_comparison_page_links_each_run_s_report(tmp_path, cot_vs_sc):
    from thoughtloom.view import write_report

    write_report(cot_vs_sc[0], replicates=100)
    out = tmp_path / "cmp.html"
    html = comparison_page(compare_runs(cot_vs_sc, replicates=200), out)
    assert "report.html" in html and "(p = 0.125, inconclusive: n = 4: the smallest p-value possible is 0.125)" in html
    assert html.count("<tr>") == 1 + 2 + 1 + 1  # header and 2 runs, header and 1 pair


def test_the_python_api_is_the_same_comparison_and_test(cot_vs_sc):
    import thoughtloom
    from thoughtloom.eval.inference import paired_test

    assert thoughtloom.compare(cot_vs_sc, replicates=200) == compare_runs(cot_vs_sc, replicates=200)
    assert thoughtloom.paired_test is paired_test and "compare" in dir(thoughtloom)
