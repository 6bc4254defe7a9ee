"""docs/library.md's three compositions, run as the page writes them, on scripted models: MCTS as a
DecomP handler, a CoT-SC Infer inside HGOT, ThoughtSculpt with a smaller evaluator than its generator.
Each must run with one trace and one budget (issue 42: "each with one trace and one budget")."""

import json
import re

import pytest

from conftest import REPO
from thoughtloom.eval import assembly
from thoughtloom.testing import ScriptedLM

PAGE = REPO / "docs" / "library.md"


def composition(name: str) -> str:
    """The Python block the page marks ``<!-- composition: NAME -->``."""
    found = re.search(rf"<!-- composition: {re.escape(name)} -->\n```python\n(.*?)```", PAGE.read_text(), re.S)
    assert found, f"docs/library.md has no composition {name!r}"
    return found.group(1)


def reply(request) -> str:
    """A well-formed reply for each kind of request these compositions send."""
    prompt = "\n".join(m.content for m in request.messages)
    schema = json.dumps(request.json_schema or {})
    if '"correct"' in schema:  # Game of 24's check-style evaluation
        return json.dumps({"calculation": "(13 - 9) * (10 - 4) = 24", "result": 24, "feedback": "right",
                           "correct": True})
    if '"score"' in schema:
        return json.dumps({"score": 8, "feedback": "fine"})
    if "List the essential steps" in prompt:
        return "Step 1: What sport does Justin Gimelstob play?\nStep 2: What sport does Angelique Kerber play?\n" \
               "Dependencies: None"
    letter = re.findall(r'position (\d+) of "(\w+)"', prompt)
    if letter:  # a letter lookup: the letter at that position of the last word asked about
        position, word = letter[-1]
        return f"Counting the letters of {word}.\nThe answer is: {word[int(position) - 1]}"
    if "4 9 10 13" in prompt:
        return "Expression: (13 - 9) * (10 - 4)"
    return "Both play tennis [1].\nThe answer is: tennis"


@pytest.fixture
def models(monkeypatch, tmp_path):
    """Every model the page opens is a scripted one named by its spec; the opened ones by name."""
    opened: dict[str, ScriptedLM] = {}

    def open_model(spec, model=None):
        name = model or spec.model
        opened[name] = ScriptedLM(reply, model_id=name)
        return opened[name]

    monkeypatch.setattr(assembly, "open_model", open_model)
    monkeypatch.chdir(tmp_path)
    return opened


def run(name: str) -> dict:
    scope: dict = {}
    exec(compile(composition(name), f"docs/library.md:{name}", "exec"), scope)
    return scope


def one_budget(solution, models, max_calls) -> None:
    """Every call the models answered is in the one trace once, and the budget bounded them all."""
    calls = solution.trace.of_type("llm_call")
    assert sum(len(m.requests) for m in models.values()) == len(calls) == solution.calls <= max_calls


def test_mcts_as_a_decomp_handler(models):
    """The foreach step's three MCTS searches run inside the DecomP run: their tree events are in its
    trace, nested under step 2 (each input's own run id), before that step's event; the step's
    calls are the searches' calls, and the run's calls are counted once."""
    solution = run("decomp-mcts")["solution"]
    assert solution.answer == "d y e"
    events = solution.trace.events
    step2 = next(i for i, e in enumerate(events) if e["type"] == "decomp_step" and e["step"] == 2)
    tree = [(i, e) for i, e in enumerate(events) if e["type"].startswith("tree_")]
    assert {e["within"][0]["run"] for _, e in tree} == {"1.2.1", "1.2.2", "1.2.3"}
    assert all(i < step2 and e["within"] == [{"step": "decomp_handler", "run": e["within"][0]["run"],
                                              "handler": "str_position", "strategy": "sculpt-mcts"}]
               for i, e in tree)
    steps = solution.trace.of_type("decomp_step")
    assert [s["kind"] for s in steps] == ["symbolic", "strategy", "symbolic"]
    nested_calls = [e for e in solution.trace.of_type("llm_call") if e.get("within")]
    assert steps[1]["calls"] == len(nested_calls) == solution.calls > 0  # the reference program asks no decomposer
    one_budget(solution, models, 60)


def test_a_cot_sc_infer_inside_hgot(models):
    """Every Infer of the hierarchy is a cot-sc run of 3 samples: no cited thought is asked for (no
    request carries the thought schema), each hgot_infer holds cot-sc's vote, and cot-sc's sample and
    vote events sit under the Infer of their node."""
    solution = run("hgot-cot-sc")["solution"]
    assert solution.answer == "tennis"
    infers = solution.trace.of_type("hgot_infer")
    assert infers and all(e["thoughts"] == [] and e["tally"] == {"tennis": 3.0} for e in infers)
    samples = solution.trace.of_type("sample")
    assert len(samples) == 3 * len(infers)
    assert {e["within"][0]["node"] for e in samples} == {e["node"] for e in infers}
    assert all(e["within"][0]["step"] == "hgot_infer" and e["within"][0]["strategy"] == "cot-sc" for e in samples)
    assert not any(r.json_schema for m in models.values() for r in m.requests)
    one_budget(solution, models, 60)


def test_sculpt_with_a_smaller_evaluator_than_its_generator(models):
    """Every evaluation goes to the evaluator's model and every candidate to the generator's, in one
    trace under one budget."""
    solution = run("sculpt-small-evaluator")["solution"]
    big, small = models["qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"], models["embedded"]
    assert small.requests and all(r.json_schema for r in small.requests)
    assert big.requests and not any(r.json_schema for r in big.requests)
    roles = {(e.get("role"), e["model"]) for e in solution.trace.of_type("llm_call")}
    assert roles == {(None, big.model_id), ("evaluator", "embedded")}
    one_budget(solution, models, 30)
