"""HGOT+KNN and HGOT+Sampling from the package alone: demos annotated on the fly (appendix D)."""

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.types import Message, Request
from thoughtloom.strategies import Result, Strategy
from thoughtloom.strategies.interface import DemoAnnotation
from thoughtloom.eval import EvalResources, evaluate
from thoughtloom.strategies.hgot.demos import Annotated, balanced_select
from thoughtloom.tasks.datasets import sample_path
from thoughtloom.testing import ScriptedLM

TASK = tasks.get("hotpotqa")
GOLD = {json.loads(line)["question"].strip(): json.loads(line)["answer"]
        for line in sample_path("hotpotqa").read_text(encoding="utf-8").splitlines() if line.strip()}


def asked(prompt):
    return prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0].strip()


def oracle(req):
    """Test scaffolding: a model that plans one question-shaped step and answers from the sample's gold."""
    prompt = req.messages[-1].content
    if prompt.startswith("List the essential steps"):
        return f"Step 1: {asked(prompt)}\nDependencies: None"
    answer = GOLD.get(asked(prompt), "unknown")
    return f"It is said so [1].\nAnswer: {answer}"


def train_file(tmp_path, examples):
    """A training CSV of 10 sample questions the eval does not ask (test scaffolding)."""
    asked_qs = {e.problem.question.strip() for e in examples}
    rows = [(q, a) for q, a in GOLD.items() if q not in asked_qs][:10]
    path = tmp_path / "train.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Question", "Answer"])
        w.writerows(rows)
    return path


@pytest.mark.parametrize("variant", ["knn", "sampling"])
async def test_the_demo_variants_run_from_the_package_sample_alone(tmp_path, variant):
    """Appendix D: "Demonstrations extend DSP ... by qualifying examples whose predictions match
    correct answers, filtering overlong sub-queries with IQR, and selecting examples by balanced
    sampling or KNN". With no demo file, the eval annotates training questions -- the pool of 7
    every baseline is shown (``train_file``), minus the questions it asks -- with the same
    model, keeps the correct runs, and shows them as demos."""
    from thoughtloom.strategies.demo_pool import read_pool

    examples = TASK.load(sample_path("hotpotqa"))[:2]
    train = train_file(tmp_path, examples)
    lm = ScriptedLM(oracle)
    hgot = strategies.build("hgot", {"demos": variant, "knn_encoder": "bow", "annotate_n": "4", "samples": "2",
                                     "thought_format": "lines", "n_demos": "2", "train_file": str(train)})
    out = tmp_path / "out"
    summary = await evaluate(hgot, TASK, examples, EvalResources(lm), out)
    assert summary["n"] == 2
    with (out / "annotate" / "demos.csv").open(encoding="utf-8", newline="") as fh:
        demos = list(csv.DictReader(fh))
    assert json.loads((out / "annotate" / "summary.json").read_text()) == {
        "questions": 4, "kept": len(demos), "source": str(train)}
    demo_questions = {d["Question"] for d in demos}
    assert demos and not demo_questions & {e.problem.question for e in examples}
    assert demo_questions <= {d.question for d in read_pool(str(train))[:4]}  # the baselines' pool
    tmp_path = out
    for e in examples:  # every Infer of an evaluated question shows two annotated demos
        infers = [r.messages[-1].content for r in lm.requests if "Rationale:" in r.messages[-1].content
                  and asked(r.messages[-1].content) == e.problem.question.strip()]
        assert infers and all(sum(f"Question: {q}\n" in p for q in demo_questions) == 2 for p in infers)
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["config"]["options"]["demo_file"] == str(tmp_path / "annotate" / "demos.csv")
    calls = len(lm.requests)  # a resumed eval reuses the annotation and the results
    await evaluate(hgot, TASK, examples, EvalResources(lm), tmp_path)
    assert len(lm.requests) == calls


def test_annotation_never_draws_from_the_test_files():
    """The demos are annotated from training examples, not from the benchmark's test files: with
    no ``train_file`` the task's own demos stand in (for HotpotQA, its two written ones), and a
    question the eval asks is never one of them."""
    from thoughtloom.eval.annotate import annotation_questions

    examples = TASK.load(sample_path("hotpotqa"))[:3]
    got = annotation_questions(TASK, examples, 8)
    assert [e.problem.question for e in got] == [d.question for d in TASK.demos()]
    assert not {e.problem.question for e in got} & set(GOLD)  # none of the packaged (test) sample
    assert annotation_questions(TASK, [type(examples[0])(got[0].problem, "x")], 8)[0].problem.question == \
        TASK.demos()[1].question


def test_sampling_is_random_under_the_seed_for_free_form_answers():
    """Appendix D: "balanced sampling preserves an even answer-class distribution"; with free-form
    answers every answer is its own class, so the k demos are a random draw, which the seed
    decides (it picked the alphabetically first answers whatever the seed)."""
    demos = [Annotated(f"Question {i}?", answer=a) for i, a in enumerate("Zeta Alpha Mu Beta Omega Kappa".split())]
    picks = {seed: tuple(d.answer for d in balanced_select(demos, 2, seed)) for seed in range(10)}
    assert len(set(picks.values())) > 2
    assert picks[3] == tuple(d.answer for d in balanced_select(demos, 2, 3))  # same seed, same draw
    assert all(len(set(p)) == 2 for p in picks.values())
    # three classes and k = 3: one of each, whatever the seed
    labels = [Annotated(f"Claim {i}.", answer=a) for i, a in enumerate(["SUPPORTS"] * 4 + ["REFUTES"] * 3 + ["NOT ENOUGH INFO"])]
    assert all(sorted(d.answer for d in balanced_select(labels, 3, s)) == ["NOT ENOUGH INFO", "REFUTES", "SUPPORTS"]
               for s in range(5))


@dataclass(frozen=True)
class LooksLikeHGOTConfig:
    demos: str = "knn"
    demo_file: str | None = None


class AnswersItsQuestion(Strategy):
    """Test scaffolding: answers with the question's first word, one model call, its details saying so."""

    name = "answers-its-question"
    Config = LooksLikeHGOTConfig

    async def solve(self, problem, ctx):
        reply = await ctx.lm.generate([Request([Message("user", problem.question)])])
        return Result(problem.question.split()[0], details={"said": reply[0].text, "file": self.config.demo_file})


@dataclass(frozen=True)
class KeepsEveryRun(DemoAnnotation):
    """Test scaffolding: a step that keeps the runs the task judges right, one CSV line each."""

    seen: list = field(default_factory=list)

    def qualified(self, runs, correct):
        self.seen.extend(runs)
        return [{"Question": r.question} for r in runs if correct(r.question.split()[0], r.gold)]

    def write(self, rows, path):
        Path(path).write_text("".join(r["Question"] + "\n" for r in rows), encoding="utf-8")

    def annotated(self, path):
        return AnswersItsQuestion(LooksLikeHGOTConfig(demos="knn", demo_file=path))


class DeclaresItsDemos(AnswersItsQuestion):
    name = "declares-its-demos"
    seen: list = []  # the runs its steps were handed (test scaffolding)

    def demo_annotation(self):
        if self.config.demo_file:
            return None
        return KeepsEveryRun(plain=AnswersItsQuestion(LooksLikeHGOTConfig(demos="none")), n=2, train_file=None,
                             label="test demos", seen=self.seen)


async def test_the_eval_runs_the_step_a_strategy_declares_and_never_reads_its_config(tmp_path):
    """Issue 42: HGOT's demo annotation is a step the strategy declares
    (:meth:`Strategy.demo_annotation`), not something the runner detects in a config. A strategy whose
    config merely has ``demos="knn"`` and no ``demo_file`` is run as it is (the runner used to annotate
    it, as if it were HGOT); one that declares a step gets it: its ``plain`` strategy run on the task's
    training demos (with their gold answers), its ``qualified`` rows written, its ``annotated``
    strategy evaluated."""
    task = tasks.get("gsm8k")
    examples = task.load(sample_path("gsm8k"))[:2]
    lm = ScriptedLM(lambda req: "fine")
    summary = await evaluate(AnswersItsQuestion(), task, examples, EvalResources(lm), tmp_path / "plain")
    assert summary["n"] == 2 and not (tmp_path / "plain" / "annotate").exists()
    assert len(lm.requests) == 2

    declares = DeclaresItsDemos()
    declares.seen = []
    await evaluate(declares, task, examples, EvalResources(lm), tmp_path / "declared")
    demos = task.demos()[:2]
    assert [r.question for r in declares.seen] == [d.question for d in demos]
    assert [r.gold for r in declares.seen] == [d.answer for d in demos]  # gold: read here, in the eval layer
    csv_path = tmp_path / "declared" / "annotate" / "demos.csv"
    assert csv_path.is_file() and len(lm.requests) == 2 + 2 + 2  # plain, annotation runs, then the eval
    records = [json.loads(line) for line in (tmp_path / "declared" / "results.jsonl").read_text().splitlines()]
    assert {r["details"]["file"] for r in records} == {str(csv_path)}  # the annotated strategy answered


def test_hgot_declares_the_step_only_when_it_shows_demos_and_has_no_file_of_them():
    """Appendix D's annotation is HGOT+KNN's and HGOT+Sampling's (``demos`` other than ``none``); a
    ``demo_file`` of annotated demos (the authors' CSVs) needs none. The step runs HGOT itself without
    demos on ``annotate_n`` questions of ``train_file``'s pool, and then shows the file it wrote."""
    assert strategies.build("hgot").demo_annotation() is None
    assert strategies.build("hgot", {"demos": "knn", "demo_file": "mine.csv"}).demo_annotation() is None
    step = strategies.build("hgot", {"demos": "sampling", "annotate_n": "3", "train_file": "t.csv"}).demo_annotation()
    assert (step.plain.name, step.plain.config.demos, step.n, step.train_file) == ("hgot", "none", 3, "t.csv")
    shown = step.annotated("a.csv")
    assert (shown.config.demos, shown.config.demo_file, shown.config.annotate_n) == ("sampling", "a.csv", 3)
