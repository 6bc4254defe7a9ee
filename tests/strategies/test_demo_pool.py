"""One pool of 7 training demonstrations for every method (strategies.demo_pool)."""

import asyncio
import csv
import random

import pytest

from thoughtloom import strategies
from thoughtloom.core.errors import ConfigError, DataError
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Passage, Problem
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.demo_pool import POOL_SEED, POOL_SIZE, read_pool
from thoughtloom.tasks import get
from thoughtloom.testing import ScriptedLM, StaticRetriever


def train_csv(tmp_path, n=20, name="train.csv"):
    path = tmp_path / name
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Question", "Answer", "Question Length"])
        for i in range(n):
            w.writerow([f"Training question number {i}?", f"['answer {i}', 'alias {i}']" if i % 2 else f"answer {i}", 4])
    return path


def test_the_pool_is_seven_training_examples_drawn_under_one_seed(tmp_path):
    """The authors give each baseline ``dsp.sample(train, k=7)``: 7 training examples drawn at
    random under a fixed seed, the same for every question and method."""
    path = train_csv(tmp_path)
    pool = read_pool(str(path))
    expected = random.Random(POOL_SEED).sample(range(20), 7)
    assert POOL_SIZE == 7 and [d.question for d in pool] == [f"Training question number {i}?" for i in expected]
    assert all(d.answer == f"answer {i}" for d, i in zip(pool, expected))  # a list literal gives its first
    assert read_pool(str(train_csv(tmp_path, 5, "small.csv"))) == read_pool(str(tmp_path / "small.csv"))
    assert len(read_pool(str(tmp_path / "small.csv"))) == 5
    two = read_pool(f"{path},{tmp_path / 'small.csv'}")  # several files: one training set
    assert len(two) == 7
    (tmp_path / "bad.csv").write_text("Q,A\nx,y\n")
    with pytest.raises(DataError, match=r"bad.csv:1"):
        read_pool(str(tmp_path / "bad.csv"))
    with pytest.raises(ConfigError, match="not found"):
        read_pool(str(tmp_path / "missing.csv"))


def test_every_baseline_is_shown_the_same_seven(tmp_path):
    """Retrieve-then-Read and the Vanilla LM are prompted with the pool's 7 demos and DSP's
    Demonstrate starts from the same 7 (the authors' ``train_sel_func(train, k=7)``), so no arm
    of a comparison sees other demonstrations than another."""
    path = str(train_csv(tmp_path))
    pool = {d.question for d in read_pool(path)}
    task = get("hotpotqa")

    def run(name, **cfg):
        lm = ScriptedLM(lambda req: "Answer: x")
        ctx = Context(lm=lm, task=task, trace=Trace(),
                      retriever=StaticRetriever([Passage("p", "A passage about answer 3.", "P")]))
        strat = strategies.build(name, {**cfg, "demo_file": path})
        asyncio.run(strat.run(Problem("q", "What is asked here?"), ctx))
        return [r.messages for r in lm.requests]

    def shown(messages):
        text = "\n".join(m.content for m in messages)
        return {q for q in (f"Training question number {i}?" for i in range(20)) if q in text}

    rtr = run("retrieve-then-read", n=20, temperature=0.7, k=5, shots=7)
    assert len(rtr) == 20 and all(shown(m) == pool for m in rtr)
    io = run("io", shots=7)
    assert shown(io[0]) == pool
    dsp = run("dsp", n=20, shots=7)
    attempted = {q for m in dsp for q in pool if f"Question: {q}" in m[-1].content.rsplit("\n\n", 1)[-1]}
    assert attempted == pool  # Demonstrate ran each of the 7


def test_without_a_file_a_strategy_uses_its_tasks_demos():
    task = get("hotpotqa")
    lm = ScriptedLM(lambda req: "Answer: x")
    ctx = Context(lm=lm, task=task, trace=Trace(), retriever=StaticRetriever([Passage("p", "text", "P")]))
    asyncio.run(strategies.build("retrieve-then-read", {"n": 1}).run(Problem("q", "What?"), ctx))
    assert task.demos()[0].question in lm.requests[0].messages[-1].content
