"""The card's optional sections (issues 35, 36, 37): Table 2's weighted Overall, Fig. 4's score by
revision step, and a grid search's chosen point, each from a small hand-written run folder."""

import json
import math

from thoughtloom import tasks
from thoughtloom.eval.reproduce import card as cards
from thoughtloom.eval.reproduce import run as runs
from thoughtloom.eval.reproduce import suites
from thoughtloom.eval.reproduce.render import outline, to_markdown

STRATIFIED = """
name = "strat"
title = "Stratified"
paper = "Nobody, 2024"
n = 6

[[datasets]]
id = "hp"
task = "hotpotqa"
data = "hp.jsonl"
metrics = ["em"]
strata = true

[[methods]]
id = "io"
strategy = "io"

[[methods]]
id = "cot"
strategy = "cot"

[[claims]]
better = "cot"
worse = "io"
statement = "CoT beats IO"
source = "nowhere"
"""


def _write(folder, records):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _slice(task, root, ids):
    sl = runs.Slice(tasks.get(task), root / "data.jsonl", [])
    sl.examples = [type("E", (), {"problem": type("P", (), {"id": i})()})() for i in ids]
    return sl


def test_the_overall_weights_the_strata_by_their_sizes_in_the_slice_not_the_plain_mean(tmp_path):
    """HGOT §6: "Table 2 reports Overall metrics as weighted averages across the Long, Medium, and
    Short categories", each weighted by its size in the slice (§4 draws 2% of HotpotQA per stratum:
    21, 21, 21 here). Ran: 4 long questions, all right (EM 1), and 2 short ones, both wrong (EM 0).
    Weighted: (21 * 1 + 21 * 0) / 42 = 0.5; the plain mean over the 6 that ran would be 4/6."""
    plan = runs.make_plan(suites.parse(STRATIFIED.encode(), "strat.toml"), tmp_path, n=6)
    sizes = {"long": 21, "medium": 21, "short": 21}
    records = [{"id": f"q{i}", "prediction": "x", "metrics": {"em": 1.0 if i < 4 else 0.0},
                "meta": {"stratum": "long" if i < 4 else "short", "strata_sizes": sizes}} for i in range(6)]
    _write(runs.Cell(plan.datasets[0], plan.suite.method("io"), 0).folder(plan.out), records)
    sl = _slice("hotpotqa", tmp_path, [f"q{i}" for i in range(6)])
    cell = cards.cell_result(plan, plan.datasets[0], plan.suite.method("io"), sl)
    assert cell.metrics["em"].mean == 4 / 6  # the results table: every example alike
    assert cell.strata["overall"].mean == 0.5 and cell.strata["overall"].n == 6
    assert (cell.strata["long"].mean, cell.strata["short"].mean) == (1.0, 0.0)
    # the same figure as the task's own report (summary.json's task_report), so the two never differ
    report = tasks.get("hotpotqa").report(records)
    assert math.isclose(report["strata"]["em"]["overall"]["mean"], cell.strata["overall"].mean)
    # each stratum is constant here, so every stratified replicate is 0.5: the interval is [0.5, 0.5]
    assert (cell.strata["overall"].ci_low, cell.strata["overall"].ci_high) == (0.5, 0.5)
    card = cards.collect(plan, {"hp": sl}, {"command": "x"})
    text = to_markdown(outline(card))
    assert "| 50.0 [50.0, 50.0] (n=6) |" in text and "weighted by each stratum's size" in text


def test_without_recorded_sizes_the_overall_weights_the_counts_that_ran(tmp_path):
    """The task's report falls back to the counts that ran when the loader recorded no sizes; the
    card does the same (then the weighted mean is the plain one)."""
    plan = runs.make_plan(suites.parse(STRATIFIED.encode(), "strat.toml"), tmp_path, n=6)
    records = [{"id": f"q{i}", "prediction": "x", "metrics": {"em": 1.0 if i < 4 else 0.0},
                "meta": {"stratum": "long" if i < 4 else "short"}} for i in range(6)]
    _write(runs.Cell(plan.datasets[0], plan.suite.method("io"), 0).folder(plan.out), records)
    cell = cards.cell_result(plan, plan.datasets[0], plan.suite.method("io"),
                             _slice("hotpotqa", tmp_path, [f"q{i}" for i in range(6)]))
    assert math.isclose(cell.strata["overall"].mean, 4 / 6)


OUTLINES = """
name = "outl"
title = "Outlines"
paper = "Nobody, 2024"
n = 3

[[datasets]]
id = "outline"
task = "outline"
data = "packaged"
metrics = ["interesting"]

[[methods]]
id = "mcts"
strategy = "sculpt-mcts"
label = "MCTS"

[[methods]]
id = "cot"
strategy = "cot"
label = "CoT"

[[claims]]
better = "mcts"
worse = "cot"
statement = "MCTS beats CoT"
source = "Table 1"
"""


def _judged(steps, final):
    return {"judge": {"judge": "model judge (toy)", "initial": steps[0] if steps else None, "steps": steps,
                      "final": final, "calls": 3, "unreadable": 0}}


def test_the_card_shows_the_judged_score_at_each_revision_step(tmp_path):
    """ThoughtSculpt Fig. 4: "Average outline interestingness at each step". Three outlines: the
    first search scores 0.2, 0.4, 0.6 at steps 0-2; the second 0.4, 0.4 and stopped at step 1 (its
    best within 2 revisions is its best within 1: 0.4 again); the third 0.0, 0.8, 0.8 with step 2's
    judgement unreadable (left out there). Step means: (0.2 + 0.4 + 0.0) / 3 = 0.2, (0.4 + 0.4 +
    0.8) / 3 = 0.533, (0.6 + 0.4) / 2 = 0.5. CoT records no steps, so it has no row."""
    plan = runs.make_plan(suites.parse(OUTLINES.encode(), "outl.toml"), tmp_path, n=3)
    mcts = [{"id": f"o{i}", "prediction": "x", "metrics": {"interesting": 0.5}, "details": _judged(s, 0.5)}
            for i, s in enumerate([[0.2, 0.4, 0.6], [0.4, 0.4], [0.0, 0.8, None]])]
    cot = [{"id": f"o{i}", "prediction": "x", "metrics": {"interesting": 0.1}, "details": _judged([], 0.1)}
           for i in range(3)]
    _write(runs.Cell(plan.datasets[0], plan.suite.method("mcts"), 0).folder(plan.out), mcts)
    _write(runs.Cell(plan.datasets[0], plan.suite.method("cot"), 0).folder(plan.out), cot)
    sl = _slice("outline", tmp_path, ["o0", "o1", "o2"])
    card = cards.collect(plan, {"outline": sl}, {"command": "x"})
    by = {c.method.id: c for c in card.cells}
    assert [round(e.mean, 3) for e in by["mcts"].steps] == [0.2, 0.533, 0.5]
    assert [e.n for e in by["mcts"].steps] == [3, 3, 2] and by["cot"].steps == ()
    text = to_markdown(outline(card))
    assert "interesting by revision step (Fig. 4)" in text
    assert "| method | step 0 (given) | step 1 | step 2 |" in text
    row = next(line for line in text.splitlines() if line.startswith("| MCTS | 20.0"))
    assert "53.3" in row and "50.0" in row and "(n=2)" in row
    assert not any(line.startswith("| CoT | ") and "step" in line for line in text.splitlines())


def test_hostile_step_scores_are_left_out_and_a_card_without_steps_has_no_section(tmp_path):
    plan = runs.make_plan(suites.parse(OUTLINES.encode(), "outl.toml"), tmp_path, n=3)
    hostile = [{"id": "o0", "prediction": "x", "metrics": {"interesting": 0.5},
                "details": {"judge": {"steps": ["high", 7, True, float("inf")] + [0.5] * 100}}},
               {"id": "o1", "prediction": "x", "metrics": {"interesting": 0.5}, "details": {"judge": "yes"}},
               {"id": "o2", "prediction": "x", "metrics": {"interesting": 0.5}, "details": {"judge": {"steps": 3}}}]
    _write(runs.Cell(plan.datasets[0], plan.suite.method("mcts"), 0).folder(plan.out), hostile)
    sl = _slice("outline", tmp_path, ["o0", "o1", "o2"])
    (cell,) = [c for c in cards.collect(plan, {"outline": sl}, {"command": "x"}).cells if c.method.id == "mcts"]
    assert len(cell.steps) == cards.MAX_STEPS and cell.steps[0].n == 0 and cell.steps[4].mean == 0.5
    plan = runs.make_plan(suites.parse(OUTLINES.encode(), "outl.toml"), tmp_path / "plain", n=3)
    _write(runs.Cell(plan.datasets[0], plan.suite.method("mcts"), 0).folder(plan.out),
           [{"id": f"o{i}", "prediction": "x", "metrics": {"interesting": 0.5}} for i in range(3)])
    text = to_markdown(outline(cards.collect(plan, {"outline": sl}, {"command": "x"})))
    assert "revision step" not in text


GRID = STRATIFIED.replace("strata = true\n", "").replace('''[[methods]]
id = "io"
strategy = "io"

[[methods]]
id = "cot"
strategy = "cot"
''', '''[[methods]]
id = "io"
strategy = "io"

[[methods]]
id = "cot"
strategy = "cot"

[[methods]]
id = "rtr-k2"
strategy = "retrieve-then-read"
label = "RtR K=2"
settings = { k = 2 }
grid = "rtr"

[[methods]]
id = "rtr-k4"
strategy = "retrieve-then-read"
label = "RtR K=4"
settings = { k = 4 }
grid = "rtr"

[[methods]]
id = "rtr-k6"
strategy = "retrieve-then-read"
label = "RtR K=6"
settings = { k = 6 }
grid = "rtr"
''')


def test_a_grid_search_names_its_best_point_on_these_questions(tmp_path):
    """DecomP Appendix A.2 picks K by a grid search on held-out questions: the point with the best
    score there. K=2 answers 1 of 4, K=4 3 of 4, K=6 3 of 4: K=4 is chosen (the first of the tied
    best, as listed), and the card's table says so; the other methods are no grid."""
    plan = runs.make_plan(suites.parse(GRID.encode(), "strat.toml"), tmp_path, n=4)
    for method, right in (("rtr-k2", 1), ("rtr-k4", 3), ("rtr-k6", 3)):
        _write(runs.Cell(plan.datasets[0], plan.suite.method(method), 0).folder(plan.out),
               [{"id": f"q{i}", "prediction": "x", "metrics": {"em": float(i < right)}} for i in range(4)])
    card = cards.collect(plan, {"hp": _slice("hotpotqa", tmp_path, [f"q{i}" for i in range(4)])}, {"command": "x"})
    (grid,) = card.grids
    assert grid.family == "rtr" and [c.method.id for c in grid.points] == ["rtr-k2", "rtr-k4", "rtr-k6"]
    assert grid.chosen.method.id == "rtr-k4"
    text = to_markdown(outline(card))
    assert "| rtr | RtR K=4 | k=4 | 75.0" in text and text.split("| rtr | RtR K=4 |")[1].split("\n")[0].endswith("chosen |")


def test_a_grid_of_one_point_is_refused():
    one = GRID.replace('grid = "rtr"\n', "", 2)
    try:
        suites.parse(one.encode(), "strat.toml")
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        assert "grid 'rtr' has one point" in str(exc) and "methods[4].grid" in str(exc)
    else:
        raise AssertionError("a one-point grid loaded")


def test_the_k_grid_suite_runs_end_to_end_on_a_linked_index_and_its_card_names_the_k(tmp_path, monkeypatch):
    """`thoughtloom reproduce decomp-odqa-k` on ScriptedLM, two NoDecomp-Ctxt points on 2 held-out
    HotpotQA questions: each cell reads the suite's title-linked pooled index (its summary and its
    run identity say so: a folder made with a plain index is not resumed with this one), and the
    card's grid table lists both points and marks one chosen."""
    from conftest import data_file
    from typer.testing import CliRunner

    from thoughtloom.cli.main import app
    from thoughtloom.eval import assembly
    from thoughtloom.lm import Cached, CompletionStore
    from thoughtloom.testing import ScriptedLM

    root = data_file("hotpotqa", "hotpot_dev_distractor_subset.jsonl").parents[1]
    monkeypatch.setattr(assembly, "open_model",
                        lambda spec: Cached(ScriptedLM(lambda req: "yes"), CompletionStore(spec.cache), spec.cache_mode))
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["reproduce", "decomp-odqa-k", "--data-root", str(root), "--out", str(out),
                                 "--cache", str(tmp_path / "c.sqlite"), "--dataset", "hotpotqa", "--method",
                                 "nodecomp-ctxt-k6", "--method", "nodecomp-ctxt-k8", "--n", "2"])
    assert r.exit_code == 0, r.output
    for k in (6, 8):
        summary = json.loads((out / "hotpotqa" / f"nodecomp-ctxt-k{k}" / "summary.json").read_text())
        assert summary["index_settings"] == {"links": {"seeds": 3}} and "pooled_corpus" in summary
        identity = json.loads((out / "hotpotqa" / f"nodecomp-ctxt-k{k}" / "run.json").read_text())
        assert identity["config"]["retriever"]["fingerprint"].startswith("temporary-settings-")
        assert identity["config"]["options"]["k"] == k
    md = (out / "card.md").read_text()
    assert "Grid search: f1 at each point, chosen on these questions" in md
    hotpot = md.split("## hotpotqa:")[1].split("## 2wiki:")[0]
    rows = [line for line in hotpot.splitlines() if line.startswith("| nodecomp-ctxt-k | NoDecomp-Ctxt K=")]
    assert [row.split(" | ")[1] for row in rows] == ["NoDecomp-Ctxt K=6", "NoDecomp-Ctxt K=8", "NoDecomp-Ctxt K=10"]
    # both ran points score alike (the scripted reader says "yes"): the first listed is chosen; K=10 did not run
    assert rows[0].endswith("(n=2) | chosen |") and rows[1].endswith("(n=2) |  |") and "not run" in rows[2]
    assert "Retrieval for every method: BM25 over the pooled paragraphs, built with links.seeds=3." in md


def test_a_stratum_of_one_example_gives_the_overall_no_interval(tmp_path):
    """With one question per stratum (the hgot-hotpotqa card at n = 3) a stratified bootstrap would
    resample each stratum's one score and report an interval of width 0; the card gives the
    weighted mean with no interval instead."""
    plan = runs.make_plan(suites.parse(STRATIFIED.encode(), "strat.toml"), tmp_path, n=3)
    sizes = {"long": 21, "medium": 21, "short": 21}
    records = [{"id": f"q{i}", "prediction": "x", "metrics": {"em": float(i == 0)},
                "meta": {"stratum": s, "strata_sizes": sizes}} for i, s in enumerate(("long", "medium", "short"))]
    _write(runs.Cell(plan.datasets[0], plan.suite.method("io"), 0).folder(plan.out), records)
    sl = _slice("hotpotqa", tmp_path, ["q0", "q1", "q2"])
    overall = cards.cell_result(plan, plan.datasets[0], plan.suite.method("io"), sl).strata["overall"]
    assert math.isclose(overall.mean, 1 / 3) and math.isnan(overall.ci_low) and math.isnan(overall.ci_high)
    text = to_markdown(outline(cards.collect(plan, {"hp": sl}, {"command": "x"})))
    assert "| 33.3 [no interval] (n=3) |" in text
