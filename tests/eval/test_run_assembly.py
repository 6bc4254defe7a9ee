"""One run assembly (issue 42): ``thoughtloom eval``, :func:`thoughtloom.evaluate` and every ``reproduce``
cell go from a spec and a request to a finished run through :func:`assemble` alone, the strategy built
(its options checked) once per eval, and what differed between them is a field of the request."""

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import thoughtloom
from thoughtloom import strategies
from thoughtloom.cli.main import app
from thoughtloom.core import ConfigError
from thoughtloom.eval import assembly, executors
from thoughtloom.eval.assembly import AssembledEval, EvalRequest, RunSpec, assemble
from thoughtloom.eval.reproduce import run as runs
from thoughtloom.eval.reproduce import suites
from thoughtloom.eval.settings import EvalResources
from thoughtloom.tasks import get as get_task
from thoughtloom.tasks.datasets import sample_path
from thoughtloom.testing import ScriptedLM
from support.toy_suite import SUITE


@pytest.fixture
def counted(monkeypatch):
    """The evals run (assembled ones: :meth:`AssembledEval.run`) and the strategies built, by name."""
    calls = {"assemble": [], "build": []}
    real_run, real_build = AssembledEval.run, strategies.build

    async def run(self, **kwargs):
        calls["assemble"].append(self.request.strategy)
        return await real_run(self, **kwargs)

    def build(name, *args, **kwargs):
        calls["build"].append(name)
        return real_build(name, *args, **kwargs)

    monkeypatch.setattr(AssembledEval, "run", run)
    monkeypatch.setattr(strategies, "build", build)
    monkeypatch.setattr(assembly, "open_model", lambda spec, model=None: ScriptedLM(lambda r: "The answer is: 4"))
    return calls


def _cli(args):
    r = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert r.exit_code == 0, f"{args}\n{r.output[-2000:]}\n{r.exception!r}"
    return r


def test_the_cli_and_the_api_assemble_each_eval_once_and_build_its_strategy_once(counted, tmp_path):
    """``eval -S cot --set ...`` and ``evaluate("cot", ...)``: one assembly each, one strategy built each
    (the options checked once on their way to the strategy; the CLI built it twice, from two specs)."""
    _cli(["eval", "-S", "cot", "-t", "gsm8k", "--limit", "1", "--no-cache", "--set", "shots=2",
          "--out", str(tmp_path / "cli")])
    assert counted == {"assemble": ["cot"], "build": ["cot"]}
    thoughtloom.evaluate("cot", "gsm8k", limit=1, shots=2)
    assert counted == {"assemble": ["cot", "cot"], "build": ["cot", "cot"]}


def test_each_reproduce_cell_is_an_assembled_eval_with_every_evals_notes(counted, tmp_path):
    """A suite's cells go through the same assembly: each cell's summary says what every eval's says
    (cache mode, timeout, judge, index: :meth:`RunSpec.notes`) beside its suite, dataset and method, and
    its strategy keeps the suite's settings: the suite's budget is the runner's, not the methods' own
    cap (``cap_strategy=False``), so a cell's recorded config is the one the suite names."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "baskets.jsonl").write_text("".join(
        json.dumps({"question": f"How many apples are in basket {i}?", "answer": f"#### {i}"}) + "\n"
        for i in range(1, 3)))
    (tmp_path / "toy.toml").write_text(SUITE)
    _cli(["reproduce", str(tmp_path / "toy.toml"), "--data-root", str(data), "--out", str(tmp_path / "r"),
          "--n", "2", "--no-cache", "--entail", "lexical", "--max-calls", "7"])
    assert sorted(counted["assemble"]) == ["cot", "io"]
    for method in ("cot", "io"):
        summary = json.loads((tmp_path / "r" / "baskets" / method / "summary.json").read_text())
        assert (summary["suite"], summary["dataset"], summary["method"]) == ("toy", "baskets", method)
        assert (summary["cache_mode"], summary["entail"], summary["timeout_s"], summary["max_calls"]) == \
            ("off", "lexical", 300.0, 7)
        options = summary["identity"]["config"]["options"]
        assert options["max_calls"] == strategies.get(method).Config().max_calls  # not capped at 7
        assert summary["identity"]["config"]["budget"]["max_calls"] == 7


async def test_a_suite_indexes_a_datasets_pooled_paragraphs_once_for_all_its_methods(monkeypatch, tmp_path):
    """Without ``--index`` every method of a dataset with paragraphs searches one BM25 index over them,
    built once on the sitting's services (:attr:`EvalResources.pooled_indexes`), not once per cell."""
    built = []
    real = executors.pooled_retriever
    monkeypatch.setattr(executors, "pooled_retriever", lambda source, settings=None: built.append(source) or real(source, settings))
    suite = suites.parse(f"""
name = "pooled"
title = "two retrieving methods on one dataset with paragraphs"
paper = "nobody"
n = 2
[budget]
max_calls = 6
[[datasets]]
id = "hotpot"
task = "hotpotqa"
data = "{sample_path("hotpotqa").name}"
[[methods]]
id = "rtr"
strategy = "retrieve-then-read"
label = "RtR"
[[methods]]
id = "ask"
strategy = "self-ask"
label = "Self-Ask"
""".encode(), "pooled.toml")
    plan = runs.make_plan(suite, tmp_path / "out", n=2)
    slices, missing = runs.load_slices(plan, sample_path("hotpotqa").parent)
    assert not missing
    lm = ScriptedLM(lambda r: "So the final answer is: 42")
    summaries = await runs.run_cells(plan, slices, RunSpec(model=None, entail="none"), res=EvalResources(lm))
    assert len(summaries) == 2 and len(built) == 1
    assert {s["pooled_corpus"] for s in summaries.values()} == {str(sample_path("hotpotqa"))}


def test_the_request_checks_the_example_timeout_for_every_caller():
    """The example's deadline is checked in the assembly, once, for the CLI and the API alike."""
    task = get_task("gsm8k")
    for bad in (float("inf"), 0, -1.0):
        with pytest.raises(ConfigError, match="bad --example-timeout"):
            assemble(RunSpec(model=None), EvalRequest("io", task, example_timeout_s=bad))
    run = assemble(RunSpec(model=None, max_calls=9), EvalRequest("cot", task, example_timeout_s=2.5, limit=1))
    assert run.settings.example_timeout_s == 2.5 and run.settings.budget.max_calls == 9
    assert run.strategy.config.max_calls == 9  # the CLI's and the API's one meaning of max_calls
    assert run.out == assembly.default_out("gsm8k", "cot") and len(run.dataset.examples) == 1
    uncapped = assemble(RunSpec(model=None, max_calls=9), EvalRequest("cot", task, limit=1, cap_strategy=False))
    assert uncapped.strategy.config.max_calls != 9 and uncapped.settings.budget.max_calls == 9


def test_an_assembled_eval_reads_its_slice_and_tells_a_retrieving_strategy_where_it_searches(tmp_path):
    """The request's slice starts at the first example unless ``offset`` says otherwise; with no index a
    retrieving strategy is told it searches the data file's pooled paragraphs (BM25) and, where there are
    none, that it runs closed book; a strategy that does not retrieve is told neither; with an index,
    nothing. The spec and the assembled eval are frozen (one run, one set of values)."""
    hotpot, gsm = get_task("hotpotqa"), get_task("gsm8k")
    first = gsm.load(sample_path("gsm8k"))[:2]
    run = assemble(RunSpec(model=None), EvalRequest("io", gsm, limit=2))
    assert [e.problem.id for e in run.dataset.examples] == [e.problem.id for e in first]
    assert run.pooled_note is None and run.notes == ()
    assert [e.problem.id for e in assemble(RunSpec(model=None), EvalRequest("io", gsm, offset=1, limit=1))
            .dataset.examples] == [first[1].problem.id]
    pooled = assemble(RunSpec(model=None), EvalRequest("retrieve-then-read", hotpot, limit=1))
    assert pooled.pooled_note is not None and str(sample_path("hotpotqa")) in pooled.pooled_note
    assert pooled.notes == ()  # it searches the pooled paragraphs: not closed book
    assert assemble(RunSpec(model=None), EvalRequest("cot", hotpot, limit=1)).pooled_note is None
    indexed = assemble(RunSpec(model=None, index=tmp_path), EvalRequest("retrieve-then-read", hotpot, limit=1))
    assert indexed.pooled_note is None and indexed.notes == ()
    rtr = strategies.build("retrieve-then-read")
    closed = RunSpec(model=None).setup_notes(rtr, hotpot)  # no pooled paragraphs said: closed book
    assert len(closed) == 1 and "runs closed book" in closed[0]
    assert RunSpec(model=None, index=tmp_path).setup_notes(rtr, hotpot) == []
    assert RunSpec(model=None).setup_notes(strategies.build("cot"), hotpot) == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.out = tmp_path
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.spec.seed = 1


async def test_a_run_locks_its_folder_and_a_pilot_runs_the_first_examples(tmp_path):
    """:meth:`AssembledEval.run` takes the folder's lock unless told its caller holds it, and ``pilot``
    runs only the first examples (a dry run's); it returns the summary."""
    from thoughtloom.eval.lock import OutputLock, OutputLocked

    run = assemble(RunSpec(model=None), EvalRequest("io", get_task("gsm8k"), limit=3, out=tmp_path / "o"))
    lm = ScriptedLM(lambda r: "The answer is: 4")
    with OutputLock(tmp_path / "o"):
        with pytest.raises(OutputLocked):
            await run.run(lm=lm)
        summary = await run.run(lm=lm, lock=False, pilot=2)
    assert summary["n"] == 2 and len(lm.requests) == 2


def test_open_model_opens_the_spec_s_model_or_a_role_s_with_the_spec_s_cache(monkeypatch, tmp_path):
    """One place a run's LMs are opened: the spec's model (or a role's), its cache file unless the cache
    is off, its concurrency, context and timeouts."""
    opened = []
    monkeypatch.setattr(assembly, "open_lm", lambda model, **kw: opened.append((model, kw)) or model)
    spec = RunSpec(model="m.gguf", cache=Path("~/c.sqlite"), n_ctx=512, timeout_s=9.0, concurrency=3)
    assert assembly.open_model(spec) == "m.gguf"
    assert assembly.open_model(spec, "small.gguf") == "small.gguf"
    assembly.open_model(dataclasses.replace(spec, cache_mode="off"))
    (_, kw), (_, role_kw), (_, off_kw) = opened
    assert kw["cache_path"] == Path("~/c.sqlite").expanduser() and kw["cache_mode"] == "use"
    assert (kw["n_ctx"], kw["timeout_s"], kw["max_concurrent"]) == (512, 9.0, assembly.requests_at_once("m.gguf", 3))
    assert role_kw == kw
    assert off_kw["cache_path"] is None
    assembly.open_model(dataclasses.replace(spec, cache=None))
    assert opened[-1][1]["cache_path"] is None


async def test_the_request_s_fields_reach_the_run(tmp_path):
    """What each caller may set reaches the run: the data's identity when given (examples in memory),
    the roles on models of their own (a suite method's ``own_models``; all of the spec's by default),
    a refusal to resume another config's folder unless ``force``, and the defaults (no retry of errors,
    the suite folder under runs/reproduce)."""
    from thoughtloom.eval.identity import ConfigMismatch, DataSource

    gsm = get_task("gsm8k")
    spec = RunSpec(model=None)
    assert spec.strategy("cot").config.max_calls == strategies.get("cot").Config().max_calls
    assert RunSpec(model=None, max_calls=9).strategy("cot").config.max_calls == 9
    assert assembly.default_suite_out("toy") == Path("runs") / "reproduce" / "toy"
    given = DataSource(None, 0, None, sha256="abc")
    assert assemble(spec, EvalRequest("io", gsm, limit=1, source=given)).source is given
    run = assemble(spec, EvalRequest("io", gsm, limit=1, example_timeout_s=0.5, out=tmp_path / "o"))
    assert run.settings.example_timeout_s == 0.5 and run.settings.retry_errors is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.request.force = True
    lm, judge, evaluator = (ScriptedLM(lambda r: "The answer is: 4", model_id=m) for m in ("m", "j", "e"))
    res = EvalResources(lm, role_lms={"judge": judge, "evaluator": evaluator})
    summary = await run.run(res=res)
    assert summary["identity"]["config"]["role_models"] == {"evaluator": "e", "judge": "j"}
    only_judge = assemble(spec, EvalRequest("io", gsm, limit=1, roles=("judge",), out=tmp_path / "j"))
    assert (await only_judge.run(res=res))["identity"]["config"]["role_models"] == {"judge": "j"}
    other = assemble(spec, EvalRequest("io", gsm, {"shots": 1}, limit=1, out=tmp_path / "o"))
    with pytest.raises(ConfigMismatch):
        await other.run(res=res)
    forced = assemble(spec, EvalRequest("io", gsm, {"shots": 1}, limit=1, out=tmp_path / "o", force=True))
    assert (await forced.run(res=res))["n"] == 1


async def test_the_spec_opens_each_role_model_once_and_leaves_the_given_ones_alone(monkeypatch):
    """Role models (``--role-model``): one stack per distinct spec, opened and closed by the run; a role
    whose LM the caller hands in is that LM and opens nothing. The spec's checks: a timeout must be
    positive; no role models is an empty tuple; the notes' slice starts at 0 unless told."""
    made = []
    monkeypatch.setattr(assembly, "open_model",
                        lambda spec, model=None: made.append(model) or ScriptedLM(["x"], model_id=model or "main"))
    mine = ScriptedLM(["x"], model_id="mine")
    spec = RunSpec(role_models={"judge": "a.gguf", "evaluator": "a.gguf", "generator": "b.gguf"})
    async with spec.open(role_lms={"generator": mine}) as res:
        assert {r: m.model_id for r, m in res.role_lms.items()} == {"judge": "a.gguf", "evaluator": "a.gguf",
                                                                    "generator": "mine"}
        assert res.role_lms["judge"] is res.role_lms["evaluator"]
    assert made == [None, "a.gguf"]  # the run's model, then one stack for a.gguf; b.gguf never opened
    assert assembly.role_pairs(None) == () and RunSpec().role_models == ()
    with pytest.raises(ConfigError, match="--timeout"):
        RunSpec(timeout_s=0)
    assert RunSpec(timeout_s=0.5).timeout_s == 0.5
    run = assemble(RunSpec(model=None), EvalRequest("io", get_task("gsm8k"), limit=1))
    assert RunSpec(model=None).notes(run.dataset, run.settings)["offset"] == 0
