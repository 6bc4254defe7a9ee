"""One way to assemble a run (issue 28, rule 17): the same run asked for through the CLI, the
library, ``reproduce`` and a Ray worker makes one :class:`RunSpec` and opens the same services."""

import contextlib
import json
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

import thoughtloom
from thoughtloom import api
from thoughtloom.cli.main import app
from thoughtloom.core import ConfigError
from thoughtloom.eval import assembly, ray_executor
from thoughtloom.eval.assembly import RunSpec, default_out
from thoughtloom.tasks.datasets import sample_path
from thoughtloom.testing import ScriptedLM
from support.toy_suite import SUITE

MODEL = "openai:m@http://127.0.0.1:9/v1"  # never called: the model stack is a ScriptedLM under that id
KEY = "sk-test-key"


@pytest.fixture
def opened(monkeypatch):
    """Every spec a model is opened from, and every set of services :meth:`RunSpec.open` yields."""
    specs, services = [], []

    def open_model(spec):
        specs.append(spec)
        return ScriptedLM(lambda req: "The answer is: 4", model_id=spec.model)

    real_open = RunSpec.open

    @contextlib.asynccontextmanager
    async def recording_open(self, lm=None, role_lms=None):
        async with real_open(self, lm, role_lms) as res:
            services.append(res)
            yield res

    monkeypatch.setattr(assembly, "open_model", open_model)
    monkeypatch.setattr(RunSpec, "open", recording_open)
    return specs, services


class InProcessRay:
    """Stands in for :class:`~thoughtloom.eval.ray_executor.RayExecutor` without a cluster: one
    :class:`~thoughtloom.eval.ray_executor.ExampleWorker` made, as Ray makes an actor, from the
    executor's arguments pickled and unpickled."""

    shipped: list = []

    def __init__(self, spec, workers=2, address=None):
        self.spec = spec

    async def start(self, job, pooled):
        spec, job, pooled = pickle.loads(pickle.dumps((self.spec, job, pooled)))
        self.shipped.append(spec)
        self.worker = ray_executor.ExampleWorker(spec, job, pooled)
        return {"executor": "ray", "workers": 1, **await self.worker.open()}

    async def describe(self, describe):
        return await self.worker.describe(describe)

    async def run(self, examples, on_record, progress=None, breaker=None):
        for example in examples:
            on_record(*await self.worker.run(example))

    async def aclose(self):
        await self.worker.close()


@pytest.fixture
def run_files(tmp_path):
    """A BM25 index of the HotpotQA sample, an (empty) prompt folder, a cache path, a toy suite and its data."""
    index, prompts, data = tmp_path / "idx", tmp_path / "prompts", tmp_path / "data"
    built = CliRunner().invoke(app, ["index", "build", "--corpus", str(sample_path("hotpotqa")), "--out", str(index)])
    assert built.exit_code == 0, built.output
    prompts.mkdir()
    data.mkdir()
    (data / "baskets.jsonl").write_text("".join(
        json.dumps({"question": f"How many apples are in basket {i}?", "answer": f"#### {i}"}) + "\n"
        for i in range(1, 4)))
    (tmp_path / "toy.toml").write_text(SUITE)
    return {"index": index, "prompts": prompts, "cache": tmp_path / "c.sqlite", "data": data,
            "suite": tmp_path / "toy.toml"}


def _flags(files, concurrency=True):
    return ["--model", MODEL, "--cache", str(files["cache"]), "--max-calls", "7", "--max-tokens", "900",
            "--index", str(files["index"]), "--entail", "lexical", "--prompts", str(files["prompts"]),
            *(["-c", "2"] if concurrency else [])]


def _cli(args):
    r = CliRunner().invoke(app, args, env={"THOUGHTLOOM_API_KEY": KEY, "COLUMNS": "200"})
    assert r.exit_code == 0, f"{args}\n{r.output[-2000:]}\n{r.exception!r}"


def _services(res):
    """What a run's services are, as far as a run can tell them apart."""
    return (res.lm.model_id, type(res.retriever).__name__, res.retriever.fingerprint,
            getattr(res.entail, "judge_id", None), res.prompt_dir)


def _identity(summary):
    config = summary["identity"]["config"]
    return {key: config[key] for key in ("budget", "model", "prompts", "retriever", "entail")}


def test_the_cli_the_api_reproduce_and_a_ray_worker_open_one_spec(opened, run_files, tmp_path, monkeypatch):
    """``eval`` flags, ``thoughtloom.evaluate`` keywords, a ``reproduce`` invocation and the spec a Ray
    worker unpickles (``eval --executor ray``) for one run: equal specs (the API key read from
    THOUGHTLOOM_API_KEY by the CLI, given as api_key= to the API), the same model, cache and mode,
    budget, retriever and judge opened, and the same run identity recorded."""
    specs, services = opened
    files = run_files
    monkeypatch.setattr(ray_executor, "RayExecutor", InProcessRay)
    monkeypatch.setattr(ray_executor, "import_ray", lambda: None)
    InProcessRay.shipped.clear()

    _cli(["eval", "-S", "cot", "-t", "gsm8k", "--limit", "2", "--out", str(tmp_path / "cli"), *_flags(files)])
    thoughtloom.evaluate("cot", "gsm8k", limit=2, out=tmp_path / "api", model=MODEL, cache=str(files["cache"]),
                         api_key=KEY, max_calls=7, token_budget=900, index=str(files["index"]), entail="lexical",
                         prompts=str(files["prompts"]), concurrency=2)
    _cli(["reproduce", str(files["suite"]), "--data-root", str(files["data"]), "--out", str(tmp_path / "repro"),
          "--n", "2", "--method", "cot", *_flags(files)])
    _cli(["eval", "-S", "cot", "-t", "gsm8k", "--limit", "2", "--out", str(tmp_path / "ray"), "--executor", "ray",
          *_flags(files)])

    want = RunSpec(model=MODEL, api_key=KEY, cache=files["cache"], cache_mode="use", max_calls=7, max_tokens=900,
                   index=files["index"], entail="lexical", prompts=files["prompts"], concurrency=2)
    assert specs == [want] * 4  # cli, api, reproduce, the Ray worker (what it opened its model from)
    assert InProcessRay.shipped == [want] and InProcessRay.shipped[0] is not specs[0]  # it came through pickle
    assert [_services(res) for res in services] == [(MODEL, "CachedRetriever", services[0].retriever.fingerprint,
                                                      "lexical-v2", files["prompts"])] * 4
    assert all(s.budget().max_calls == 7 and s.budget().max_tokens == 900 for s in specs)

    summaries = [json.loads((tmp_path / name / "summary.json").read_text())
                 for name in ("cli", "api", "repro/baskets/cot", "ray")]
    assert all(_identity(s) == _identity(summaries[0]) for s in summaries)
    assert _identity(summaries[0])["budget"] == {"max_calls": 7, "max_tokens": 900}
    # every eval is assembled alike (issue 42): reproduce's cells say these notes too, beside their suite
    assert [(s["model"], s["cache_mode"], s["timeout_s"], s["entail"]) for s in summaries] == \
        [(MODEL, "use", 300.0, "lexical")] * 4
    # one meaning of max_calls: the runner's budget and the strategy's own cap, from the CLI and the API;
    # a suite's method keeps the settings the suite names (EvalRequest.cap_strategy)
    assert [s["identity"]["config"]["options"]["max_calls"] for s in summaries] == [7, 7, 1000, 7]


def test_run_and_solve_open_one_spec(opened, run_files):
    """``thoughtloom run`` flags and ``thoughtloom.solve`` keywords for one question: one spec (one
    question in flight), the same services."""
    specs, services = opened
    files = run_files
    r = CliRunner().invoke(app, ["run", "cot", "2 + 2?", "--task", "gsm8k", *_flags(files, concurrency=False)],
                           env={"THOUGHTLOOM_API_KEY": KEY})
    assert r.exit_code == 0, r.output
    thoughtloom.solve("cot", "2 + 2?", task="gsm8k", model=MODEL, cache=files["cache"], api_key=KEY, max_calls=7,
                      token_budget=900, index=files["index"], entail="lexical", prompts=files["prompts"])
    assert len(specs) == 2 and specs[0] == specs[1] and specs[0].concurrency == 1 and specs[0].api_key == KEY
    assert _services(services[0]) == _services(services[1])


def test_the_cli_writes_the_default_results_folder_and_the_api_keeps_its_results_in_memory(opened, tmp_path,
                                                                                            monkeypatch):
    """``eval`` without ``--out`` writes ``runs/<task>_<strategy>``; ``evaluate`` without ``out`` writes
    nothing (issue 39: a notebook's second call then met the first's folder) and ``out=`` one folder."""
    monkeypatch.chdir(tmp_path)
    assert default_out("gsm8k", "cot") == tmp_path.joinpath("runs", "gsm8k_cot").relative_to(tmp_path)
    r = CliRunner().invoke(app, ["eval", "-S", "cot", "-t", "gsm8k", "--limit", "1", "--no-cache"])
    assert r.exit_code == 0, r.output
    assert thoughtloom.evaluate("io", "gsm8k", limit=1)["n"] == 1
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["gsm8k_cot"]
    thoughtloom.evaluate("io", "gsm8k", limit=1, out=default_out("gsm8k", "io"))
    assert (tmp_path / "runs" / "gsm8k_io" / "summary.json").is_file()


class ClosableLM(ScriptedLM):
    closed = 0

    async def aclose(self):
        self.closed += 1


async def test_open_closes_the_model_it_opened_and_not_one_it_was_given(monkeypatch):
    """:meth:`RunSpec.open` closes the LM it opened from ``model`` (also when the services fail to open:
    a bad --entail); an LM handed in stays the caller's."""
    made = []
    monkeypatch.setattr(assembly, "open_model", lambda spec: made.append(ClosableLM(["x"])) or made[-1])
    async with RunSpec(entail="none").open() as res:
        assert res.lm is made[0] and res.entail is None and res.retriever is None
    assert made[0].closed == 1
    with pytest.raises(ConfigError, match="unknown --entail"):
        async with RunSpec(entail="bogus").open():
            pass
    assert made[1].closed == 1
    mine = ClosableLM(["x"])
    async with RunSpec(model=None).open(mine) as res:
        assert res.lm is mine and res.entail is not None  # the LLM judge asks the caller's model
    assert mine.closed == 0 and len(made) == 2


async def test_a_spec_without_a_model_and_without_an_lm_says_so():
    """``model=None`` is for a caller that hands its own LM to open(); without one it is a clear error."""
    with pytest.raises(ConfigError, match="no model"):
        async with RunSpec(model=None).open():
            pass


def test_the_spec_checks_its_values_and_keeps_the_key_out_of_its_repr():
    """Paths from keywords are Paths (equal runs, equal specs); a bad cache mode or timeout is one line
    naming it; the API key is in no repr (a log line, an error)."""
    assert RunSpec(cache="c.sqlite", index="i", prompts="p") == RunSpec(cache=Path("c.sqlite"), index=Path("i"),
                                                                        prompts=Path("p"))
    assert "sk-secret" not in repr(RunSpec(api_key="sk-secret"))
    with pytest.raises(ConfigError, match="cache mode 'sometimes'"):
        RunSpec(cache_mode="sometimes")
    with pytest.raises(ConfigError, match="--timeout inf"):
        RunSpec(timeout_s=float("inf"))
    with pytest.raises(ConfigError, match="--concurrency must be at least 1"):
        RunSpec(concurrency=0)
    assert RunSpec().recorded_cache_mode == "off" and RunSpec(cache=Path("c")).recorded_cache_mode == "use"
    assert RunSpec().budget().max_calls == thoughtloom.eval.DEFAULT_MAX_CALLS
    assert api.keyword_spec(token_budget=5, cache="c").budget().max_tokens == 5

