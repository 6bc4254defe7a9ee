"""`thoughtloom reproduce` on ScriptedLM: cells, resume, the card, --replay at zero calls, --dry-run."""

import gzip
import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from thoughtloom.eval import assembly
from thoughtloom.cli.main import app
from thoughtloom.lm import Cached, CompletionStore
from thoughtloom.testing import ScriptedLM
from support.toy_suite import SUITE



def reply(request):
    """CoT counts every basket right; IO only those whose number is a multiple of 3."""
    n = int(re.findall(r"basket (\d+)", request.prompt_text())[-1])
    if "step by step" in request.prompt_text():
        return "Let me count them one by one. " * (n % 4) + f"The answer is: {n}"
    return str(n if n % 3 == 0 else n + 1)


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A suite file, its data root, and a model stack (real cache around ScriptedLM) that counts calls."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "baskets.jsonl").write_text("".join(
        json.dumps({"question": f"How many apples are in basket {i}?", "answer": f"#### {i}"}) + "\n"
        for i in range(1, 31)))
    (tmp_path / "toy.toml").write_text(SUITE)
    models = []

    def open_model(spec):
        models.append(ScriptedLM(reply))
        return Cached(models[-1], CompletionStore(spec.cache), spec.cache_mode)

    monkeypatch.setattr(assembly, "open_model", open_model)

    def invoke(*args):
        r = CliRunner().invoke(app, ["reproduce", str(tmp_path / "toy.toml"), "--data-root", str(tmp_path / "data"),
                                     "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"), *args])
        assert r.exit_code == 0, r.output
        return r.output

    invoke.out = tmp_path / "out"
    invoke.model_calls = lambda: sum(len(m.requests) for m in models)
    return invoke


def _records(folder):
    return [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]


def test_run_writes_a_card_with_cis_judged_claims_and_provenance(toy, monkeypatch):
    monkeypatch.setattr("sys.argv", ["/usr/bin/thoughtloom", "reproduce", "toy", "--n", "12"])
    toy()
    assert len(_records(toy.out / "baskets" / "cot")) == 12 and len(_records(toy.out / "baskets" / "io")) == 12
    assert all(r["stopped"] is None for r in _records(toy.out / "baskets" / "io"))
    md = (toy.out / "card.md").read_text()
    # CoT 12/12; IO right on 3, 6, 9, 12: 4/12
    assert re.search(r"\| CoT \| cot \| 90 accuracy — GPT-9, Table 1 \| 100\.0 \[100\.0, 100\.0\] \| 12 \| 0 \| 1 \| 1\.0 \|", md)
    assert re.search(r"\| IO \| io \| 40 accuracy — GPT-9, Table 1 \| 33\.3 \[\d+\.\d, \d+\.\d\] \| 12 \|", md)
    # 8 discordant pairs, all CoT's way: exact McNemar p = 2 / 2^8 = 0.0078, 0.0156 after Holm over the 2 claims;
    # Newcombe's interval [+29.9, +86.2]. Power: with 8 discordant pairs McNemar rejects only at 8-0 or 0-8
    # (7-1 gives p = 2 * 9 / 256 = 0.07), so 80% power needs pi^8 = 0.8, pi = 0.9725, a difference of
    # (2 pi - 1) * 8 / 12 = 63.0 points; the paper's 50-point difference needs (2.802^2 * 8/12) / 0.5^2 = 20.9 -> 21
    assert ("| CoT beats IO | cot > io on accuracy | Table 1 | GPT-9: 90 vs 40 | +66.7 [+29.9, +86.2] pts (n=12) | "
            "exact McNemar, 8 discordant of 12 | 0.00781 (0.0156) | holds | detects ≥ 63.0 pts at n = 12; GPT-9's "
            "+50.0 pts needs n ≈ 21 |") in md
    assert re.search(r"\| IO beats CoT \| io > cot on accuracy \| nowhere \| GPT-9: 40 vs 90 \| -66\.7 .* \| does not hold \|", md)
    # CoT and IO answer with their one call, so from 1 call on each example has its final answer:
    # along the call budget, the claimed better method is ahead (or behind) at every budget
    assert "| ahead at every budget up to 5 calls |" in md
    assert "| behind at every budget up to 5 calls |" in md
    assert "budget per example, every method alike: 5 calls" in md and "Model: scripted" in md
    assert "# this card:\nthoughtloom reproduce toy --n 12\n" in md and "A note with <b>markup</b> & | pipes" in md
    page = (toy.out / "card.html").read_text()
    assert page.startswith("<!doctype html>") and "<b>markup" not in page and "&lt;b&gt;markup&lt;/b&gt; &amp;" in page
    assert "<td>holds</td>" in page and "<td>does not hold</td>" in page
    log = json.loads((toy.out / "reproduce.json").read_text())
    assert log["suite"] == "toy" and [s["kind"] for s in log["sittings"]] == ["run"]


def test_sittings_resume_cell_by_cell_and_the_card_covers_every_cell(toy):
    toy("--method", "cot", "--n", "4")
    assert toy.model_calls() == 4
    md = (toy.out / "card.md").read_text()
    assert "| IO | io |" in md and "| not run |" in md and md.count("| not run |") == 3  # the cell and both claims
    toy("--n", "6")  # CoT resumes at example 5; IO starts
    assert toy.model_calls() == 4 + 2 + 6
    toy("--n", "6", "--seeds", "2")  # seed 1: greedy calls, all answered by the cache
    assert toy.model_calls() == 12
    assert len(_records(toy.out / "baskets" / "io-seed1")) == 6
    assert "| 6 | 0 | 2 |" in (toy.out / "card.md").read_text()


def test_replay_regenerates_the_card_with_zero_model_calls(toy):
    toy()
    before = toy.model_calls()
    card = (toy.out / "card.md").read_text()
    (toy.out / "card.md").unlink()
    toy("--replay")  # every cell complete: read from the folders
    assert toy.model_calls() == before
    (folder := toy.out / "baskets" / "io" / "results.jsonl").unlink()
    toy("--replay")  # a lost cell: answered from the completion cache alone
    assert toy.model_calls() == before and len(_records(folder.parent)) == 12

    def table(text):  # the sittings column aside: the replay answered IO's 12 examples again, from the cache
        return [re.sub(r" \| [^|]*\(\+\d+\)[^|]* \|$", " |", line) for line in text.splitlines()
                if line.startswith("| ")]

    assert table((toy.out / "card.md").read_text()) == table(card)
    assert "| 1 (+12), 3 (+12) |" in (toy.out / "card.md").read_text()  # IO: sitting 1, and the replay (3)


def test_results_recorded_before_trajectories_keep_their_verdicts_and_get_no_curve(toy):
    toy()
    before = [line.rsplit(" | ", 1)[0] for line in (toy.out / "card.md").read_text().splitlines()
              if line.startswith("| ")]
    for cell in ("cot", "io"):  # as a folder written before the runner recorded trajectories
        path = toy.out / "baskets" / cell / "results.jsonl"
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "anytime"}) + "\n"
                                for r in _records(path.parent)))
    toy("--replay")
    md = (toy.out / "card.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert [line.rsplit(" | ", 1)[0] for line in rows] == before  # every column but the last as it was
    assert md.count("| holds | detects ≥ 63.0 pts at n = 12; GPT-9's +50.0 pts needs n ≈ 21 | no curve: recorded "
                    "before anytime trajectories |") == 1
    assert md.count("| does not hold | detects ≥ 63.0 pts at n = 12; GPT-9's difference is -50.0 pts, not the "
                    "claim's way | no curve: recorded before anytime trajectories |") == 1
    assert "No curves: recorded before anytime trajectories." in (toy.out / "card.html").read_text()


def test_replay_with_a_cache_miss_is_an_error_and_still_writes_the_card(toy, tmp_path):
    toy("--method", "cot")
    r = CliRunner().invoke(app, ["reproduce", str(tmp_path / "toy.toml"), "--data-root", str(tmp_path / "data"),
                                 "--out", str(toy.out), "--cache", str(tmp_path / "c.sqlite"), "--replay"])
    assert r.exit_code != 0 and "not in the cache" in str(r.exception)
    assert toy.model_calls() == 12 and (toy.out / "card.md").exists()


def test_dry_run_pilots_into_the_real_folders_and_prints_an_estimate(toy):
    output = toy("--dry-run", "--pilot", "3", "--json", "--price-in", "1", "--price-out", "2")
    doc = json.loads(output[output.index("{"):])
    for key in ("calls", "prompt_tokens", "completion_tokens", "seconds"):
        assert doc[key]["low"] <= doc[key]["estimate"] <= doc[key]["high"]
    assert doc["calls"]["estimate"] == 18 and doc["examples_remaining"] == 18 and doc["examples_done"] == 6
    assert set(doc["cells"]) == {"baskets/cot", "baskets/io"} and doc["cost_usd"]["estimate"] > 0
    assert toy.model_calls() == 6
    toy()  # the real run resumes past the pilot
    assert toy.model_calls() == 24


def test_unknown_method_and_missing_data_root_are_one_line_errors(toy, tmp_path, monkeypatch):
    r = CliRunner().invoke(app, ["reproduce", str(tmp_path / "toy.toml"), "--method", "tot", "--data-root",
                                 str(tmp_path / "data")])
    assert "suite toy has no method 'tot'" in str(r.exception)
    monkeypatch.delenv("THOUGHTLOOM_DATA", raising=False)
    r = CliRunner().invoke(app, ["reproduce", str(tmp_path / "toy.toml")])
    assert "--data-root" in str(r.exception)
    r = CliRunner().invoke(app, ["reproduce", str(tmp_path / "toy.toml"), "--data-root", str(tmp_path / "data"),
                                 "--executor", "dask", "--out", str(tmp_path / "o")])
    assert "unknown --executor 'dask'" in str(r.exception) and not (tmp_path / "o").exists()


def test_without_a_data_root_the_packaged_samples_stand_in(tmp_path, monkeypatch):
    monkeypatch.delenv("THOUGHTLOOM_DATA", raising=False)
    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: ScriptedLM(lambda req: "The answer is: x;y;z"))
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["reproduce", "decomp-letter", "--method", "cot", "--n", "2", "--out", str(out),
                                 "--no-cache"])
    assert r.exit_code == 0, r.output
    assert "skipping dataset n4" in r.output and "not packaged" in r.output
    said = " ".join(r.output.split())  # the console wraps long lines
    assert "dataset n3 runs on the task's packaged sample n3_eg100_pos2_semic.json" in said
    assert "not decomp_letter_cat/n3_eg100_pos2_semic.json: pass --data-root DIR" in said
    assert len(_records(out / "n3" / "cot")) == 2 and not (out / "n4").exists()
    md = (out / "card.md").read_text()
    assert "## n3: task letter_cat, the packaged sample n3_eg100_pos2_semic.json, examples 1–2" in md
    assert "## n5: task letter_cat, decomp_letter_cat/n5_eg100_pos2_semic.json\n\nNo data here: dataset 'n5'" in md
    r = CliRunner().invoke(app, ["reproduce", "decomp-letter", "--dataset", "n4", "--out", str(out)])
    assert "dataset 'n4' reads decomp_letter_cat/n4_eg100_pos2_semic.json, which is not packaged" in str(r.exception)


def test_a_cell_made_with_another_config_is_refused_unless_forced(toy, tmp_path):
    toy("--method", "io", "--n", "4")
    args = ["reproduce", str(tmp_path / "toy.toml"), "--data-root", str(tmp_path / "data"), "--out", str(toy.out),
            "--cache", str(tmp_path / "c.sqlite"), "--method", "io", "--n", "6", "--max-calls", "3"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code != 0 and "budget" in str(r.exception) and "--force" in str(r.exception)
    assert len(_records(toy.out / "baskets" / "io")) == 4 and (toy.out / "card.md").exists()
    toy("--method", "io", "--n", "6", "--max-calls", "3", "--force")
    assert len(_records(toy.out / "baskets" / "io")) == 6


def test_the_card_groups_strata_by_the_tasks_own_rule(tmp_path):
    from thoughtloom.eval.reproduce import card as cards
    from thoughtloom.eval.reproduce import run as runs
    from thoughtloom.eval.reproduce import suites
    from thoughtloom.tasks import get as get_task

    suite = suites.parse(SUITE.replace('data = "baskets.jsonl"', 'data = "baskets.jsonl"\nstrata = true').encode(),
                         "toy.toml")
    plan = runs.make_plan(suite, tmp_path, n=4)

    class ByWords(type(get_task("gsm8k"))):  # a task whose rule reads another field than "stratum"
        def stratum(self, meta):
            return "long" if meta.get("words", 0) > 5 else "short"

    folder = runs.Cell(plan.datasets[0], plan.methods[0], 0).folder(tmp_path)
    folder.mkdir(parents=True)
    records = [{"id": f"q{i}", "metrics": {"accuracy": float(i % 2)}, "meta": {"words": 3 + 2 * i, "stratum": "medium"}}
               for i in range(4)]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    sl = runs.Slice(ByWords(), tmp_path / "baskets.jsonl", [])
    sl.examples = [type("E", (), {"problem": type("P", (), {"id": f"q{i}"})()})() for i in range(4)]
    result = cards.cell_result(plan, plan.datasets[0], plan.methods[0], sl)
    assert result.stratum_of == {"q0": "short", "q1": "short", "q2": "long", "q3": "long"}
    assert set(result.strata) == {"long", "short", "overall"}
    assert result.strata["long"].mean == result.strata["short"].mean == 0.5


def test_the_card_flags_examples_whose_replies_were_cut_off(toy, monkeypatch):
    import sys

    from thoughtloom.core.types import Completion

    plain = reply

    def cut(request):  # CoT is cut off at max_tokens on baskets 5 and 10
        n = int(re.findall(r"basket (\d+)", request.prompt_text())[-1])
        if "step by step" in request.prompt_text() and n % 5 == 0:
            return Completion("Let me count them one", finish_reason="length")
        return plain(request)

    monkeypatch.setattr(sys.modules[__name__], "reply", cut)
    toy("--method", "cot")
    assert re.search(r"\| CoT \| cot \|.*\| 2 truncated, 2 with a reply cut off at max_tokens \|",
                     (toy.out / "card.md").read_text())


def test_the_card_counts_each_arms_no_answer_examples(toy, monkeypatch):
    """A chain that states no answer is counted per arm as "no answer" (issue 25): CoT leaves the
    statement out for baskets 5 and 10 of 1-12, so its row says 2; IO always answers, so 0."""

    answers = reply

    def unstated(request):
        n = int(re.findall(r"basket (\d+)", request.prompt_text())[-1])
        if "step by step" in request.prompt_text() and n % 5 == 0:
            return f"I count {n} apples."
        return answers(request)

    monkeypatch.setattr(__import__(__name__), "reply", unstated)
    toy("--n", "12")
    md = (toy.out / "card.md").read_text()
    assert "| n | no answer | seeds |" in md
    assert re.search(r"\| CoT \| cot \| [^|]+ \| [^|]+ \| 12 \| 2 \| 1 \|", md)
    assert re.search(r"\| IO \| io \| [^|]+ \| [^|]+ \| 12 \| 0 \| 1 \|", md)


def test_the_card_says_where_the_rubric_limits_lowered_an_evaluation(tmp_path):
    """score_limits is a symbolic check, so the card labels the examples it touched (from each record's
    step_problems, counted from tree_eval_limited events)."""
    from thoughtloom.eval.reproduce import card as cards
    from thoughtloom.eval.reproduce import run as runs
    from thoughtloom.eval.reproduce import suites
    from thoughtloom.eval.reproduce.render import _flags
    from thoughtloom.tasks import get as get_task

    plan = runs.make_plan(suites.parse(SUITE.encode(), "toy.toml"), tmp_path, n=2)
    folder = runs.Cell(plan.datasets[0], plan.methods[0], 0).folder(tmp_path)
    folder.mkdir(parents=True)
    records = [{"id": "q0", "metrics": {"accuracy": 1.0}, "step_problems": {"limited": {"tree_evaluation": 4}}},
               {"id": "q1", "metrics": {"accuracy": 0.0}}]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    sl = runs.Slice(get_task("gsm8k"), tmp_path / "baskets.jsonl", [])
    sl.examples = [type("E", (), {"problem": type("P", (), {"id": f"q{i}"})()})() for i in range(2)]
    result = cards.cell_result(plan, plan.datasets[0], plan.methods[0], sl)
    assert result.limited == 1
    assert _flags(result) == "1 with an evaluation held to the task's rubric (score_limits)"


def test_a_packed_folder_resumes_on_a_fresh_copy_and_extends_n_without_duplicates(toy, tmp_path):
    """Issue 38: a card's run folders committed beside it (``--pack``) resume on any machine. A copy of
    the packed folder elsewhere, with an empty completion cache, runs only the examples it lacks (one
    call each for CoT and IO), keeps one record per example, and the card says which sitting added what."""
    toy("--n", "6", "--pack")
    for cell in ("cot", "io"):
        folder = toy.out / "baskets" / cell
        assert sorted(p.name for p in folder.iterdir()) == ["results.jsonl", "run.json", "summary.json",
                                                            "trace.jsonl.gz"]
        events = [json.loads(line) for line in gzip.decompress((folder / "trace.jsonl.gz").read_bytes()).splitlines()]
        assert {e.get("example") for e in events if e.get("example")} <= {r["id"] for r in _records(folder)}
    packed = json.loads((toy.out / "packed.json").read_text())
    assert packed["traces"]["baskets/cot"]["kept"] is True and packed["trace_limit"] == 2_000_000
    clone = tmp_path / "clone" / "toy"
    shutil.copytree(toy.out, clone)
    before = toy.model_calls()
    r = CliRunner().invoke(app, ["reproduce", str(tmp_path / "toy.toml"), "--data-root", str(tmp_path / "data"),
                                 "--out", str(clone), "--cache", str(tmp_path / "fresh.sqlite"), "--n", "9", "--pack"])
    assert r.exit_code == 0, r.output
    assert toy.model_calls() == before + 2 * 3  # examples 7-9 of each method, nothing of the first 6 again
    for cell in ("cot", "io"):
        ids = [rec["id"] for rec in _records(clone / "baskets" / cell)]
        assert len(ids) == len(set(ids)) == 9
        assert not (clone / "baskets" / cell / "trace.jsonl").exists()
        lines = gzip.decompress((clone / "baskets" / cell / "trace.jsonl.gz").read_bytes()).splitlines()
        assert len(lines) > len(gzip.decompress((toy.out / "baskets" / cell / "trace.jsonl.gz").read_bytes())
                                .splitlines())  # the first sitting's events and the new ones
    md = (clone / "card.md").read_text()
    assert md.count("| 1 (+6), 2 (+3) |") == 2  # each cell: sitting 1 added 6 examples, sitting 2 three
    assert "n = 9 examples per dataset" in md


def test_a_trace_over_the_limit_is_left_out_and_said(toy, tmp_path):
    r = CliRunner().invoke(app, ["reproduce", str(tmp_path / "toy.toml"), "--data-root", str(tmp_path / "data"),
                                 "--out", str(tmp_path / "small"), "--cache", str(tmp_path / "c.sqlite"), "--n", "3",
                                 "--pack", "--trace-limit", "0.0001"])  # 100 bytes: every trace is larger
    assert r.exit_code == 0, r.output
    assert "2 traces compressed, 2 left out (over 0.0001 MB compressed): baskets/cot, baskets/io" in " ".join(
        r.output.split())
    folder = tmp_path / "small" / "baskets" / "cot"
    assert not (folder / "trace.jsonl").exists() and not (folder / "trace.jsonl.gz").exists()
    assert json.loads((tmp_path / "small" / "packed.json").read_text())["traces"]["baskets/io"]["kept"] is False
    assert len(_records(folder)) == 3


def test_a_packed_folder_resumes_after_its_data_file_is_cut_past_n(toy, tmp_path):
    """Issue 38: the shared data were re-split between sittings (a file cut to its first records, those
    unchanged), which changes the file's sha256 in every cell's run.json. The committed folders resume
    without --force, run only the new examples, and each run.json records the change; a finished example
    whose text changed is refused, naming it."""
    toy("--n", "6", "--pack")
    data = tmp_path / "data" / "baskets.jsonl"
    lines = data.read_text().splitlines(keepends=True)
    data.write_text("".join(lines[:9]))  # 30 records -> the first 9, past n = 6
    before = toy.model_calls()
    toy("--n", "9", "--pack")
    assert toy.model_calls() == before + 2 * 3  # examples 7-9 of each method
    for cell in ("cot", "io"):
        folder = toy.out / "baskets" / cell
        assert len({r["id"] for r in _records(folder)}) == 9
        run_json = json.loads((folder / "run.json").read_text())
        [change] = run_json["data_changes"]
        assert change["finished_unchanged"] == 6 and run_json["forced"] == []
    second = _records(toy.out / "baskets" / "io")[1]["id"]
    data.write_text("".join(lines[:1] + [lines[1].replace("basket 2?", "basket two?")] + lines[2:12]))
    args = ["reproduce", str(tmp_path / "toy.toml"), "--data-root", str(tmp_path / "data"), "--out", str(toy.out),
            "--cache", str(tmp_path / "c.sqlite"), "--n", "12"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code != 0 and f"finished example '{second}' changed" in str(r.exception)
    assert "--force" in str(r.exception) and toy.model_calls() == before + 6
