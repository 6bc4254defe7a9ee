"""Run folders made by ``evaluate`` on ScriptedLM, one per strategy family, for the run inspector's tests.

Each returns the folder. The scripts are small but real: the tree search
revises and rejects, HGOT plans two dependent steps, DecomP (the task's
reference program, its prompt handlers scripted) runs a nested program per
word, cot-sc samples and votes. ``HOSTILE`` is model text that
would run script if a page inserted it as markup.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from pathlib import Path

from thoughtloom import strategies, tasks
from thoughtloom.core.types import Passage, Problem
from thoughtloom.eval.runner import EvalResources, EvalSettings, evaluate
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM, StaticRetriever

HOSTILE = ("<script>document.title='pwned'</script>"
           "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">")


def _evaluate(strategy: str, sets: dict[str, str], task: str, examples: list[Example], out: Path, lm: ScriptedLM,
              **resources) -> Path:
    cls = strategies.get(strategy)
    asyncio.run(evaluate(cls(strategies.make_config(cls, sets)), tasks.get(task), examples,
                         EvalResources(lm, **resources), out, settings=EvalSettings(seed=0)))
    return out


def tree_run(out: Path, strategy: str = "sculpt-mcts", readable: bool = True) -> Path:
    """game24 puzzles; children revise their parent, one reply is a duplicate (rejected).
    ``readable=False``: no evaluation can be read (each is re-asked once, then scored malformed)."""
    exprs = itertools.cycle(["(4 + 9) * 10 - 13", "(13 - 9) * (10 - 4)", "(13 - 9) * (10 - 4)",
                             "4 * 9 - 10 - 13", "13 + 10 + 9 - 4 * 2"])
    scores = itertools.cycle([3, 7, 5, 9, 2, 6])

    def reply(req):
        if "JSON object" in req.messages[0].content:
            if not readable:
                return "I think it is fine."
            return json.dumps({"feedback": f"check the arithmetic {HOSTILE}", "score": next(scores)})
        return f"Expression: {next(exprs)}\nThe answer is: done"

    examples = [Example(Problem("game24-a", "4 9 10 13"), [4, 9, 10, 13]),
                Example(Problem("game24-b", "1 2 3 4"), [1, 2, 3, 4])]
    sets = {"rollouts": "3", "k": "2"} if strategy == "sculpt-mcts" else {"k": "2"}
    return _evaluate(strategy, sets, "game24", examples, out, ScriptedLM(reply))


PASSAGES = [Passage("jaws", "Jaws is a 1975 film directed by Steven Spielberg.", "Jaws"),
            Passage("spielberg", "Steven Spielberg was born in 1946 in Cincinnati.", "Steven Spielberg"),
            Passage("shark", "The great white shark lives in coastal waters.", "Shark")]


class SubstringJudge:
    """Entailed iff the hypothesis' last word is in the premise."""

    async def judge(self, pairs):
        return [1.0 if h.rstrip(".").split()[-1] in p else 0.0 for p, h in pairs]


def hgot_run(out: Path) -> Path:
    """One HotpotQA-style question; its plan has two steps, the second depends on the first."""

    def reply(req):
        prompt = req.messages[-1].content
        if prompt.startswith("List the essential steps"):
            if "Question: In what year was the director of Jaws born?" in prompt:
                return ("Step 1: Who directed the film Jaws?\nStep 2: In what year was the director from Step 1 "
                        "born?\nDependencies: Step 1 -> Step 2")
            return "Step 1: " + prompt.rsplit("Question: ", 1)[1].strip()
        if prompt.startswith("Rewrite the final question"):
            return "In what year was Steven Spielberg born?"
        question = prompt.rsplit("Question: ", 1)[1]
        if "Who directed" in question:
            return "Jaws was directed by Steven Spielberg [1].\nAnswer: Steven Spielberg"
        return ["Spielberg was born in 1946 [1].\nAnswer: 1946", "It was 1975 [2].\nAnswer: 1975",
                "Spielberg was born in 1946 [1][2].\nAnswer: 1946"][req.sample_index % 3]

    examples = [Example(Problem("hotpotqa-jaws", "In what year was the director of Jaws born?",
                                meta={"stratum": "medium"}), ["1946"])]
    return _evaluate("hgot", {"samples": "3", "max_depth": "2", "thought_format": "lines"}, "hotpotqa", examples,
                     out, ScriptedLM(reply), retriever=StaticRetriever(PASSAGES), entail=SubstringJudge())


#: letter_cat's prompt handlers, by how their question starts (the task's reference program decomposes)
LETTER_HANDLERS = {
    "What are the words": lambda q: json.dumps(re.search(r'in "([^"]+)"', q).group(1).split()),
    "What are the letters": lambda q: "[" + ", ".join(
        f"({c}, {i})" for i, c in enumerate(re.search(r'"(\w+)"', q).group(1), 1)) + "]",
    "What is at position": lambda q: dict((k, c) for c, k in re.findall(r"\((\w), (\d+)\)", q))[
        re.search(r"position (\d+)", q).group(1)],
    "Concatenate": lambda q: " ".join(re.findall(r'"(\w)"', q)),
}


def decomp_reply(req):
    question = req.messages[-1].content.rsplit("Q: ", 1)[1]
    return next(answer(question) for start, answer in LETTER_HANDLERS.items() if question.startswith(start))


def decomp_run(out: Path) -> Path:
    examples = [Example(Problem("letter_cat-a", 'Take the letters at position 2 of the words in "Ada Byron Lee" '
                                                "and concatenate them using a space.", meta={"n": 3, "sep": "space"}),
                        "d y e"),
                Example(Problem("letter_cat-b", 'Take the letters at position 2 of the words in "Sam Ivy" '
                                                "and concatenate them using a space.", meta={"n": 2, "sep": "space"}),
                        "a v")]
    return _evaluate("decomp", {"decomposer": "reference"}, "letter_cat", examples, out, ScriptedLM(decomp_reply))


def sampling_run(out: Path, strategy: str = "cot-sc", answers: tuple[str, ...] = ("6", "16", "6"),
                 n_examples: int = 4) -> Path:
    """GSM8K-style questions whose gold is 6; sample i answers ``answers[i % len]`` (the first is hostile text too)."""

    def reply(req):
        answer = answers[req.sample_index % len(answers)]
        return f"Let me think. {HOSTILE if req.sample_index == 0 else ''}\nThe answer is: {answer}"

    examples = [Example(Problem(f"gsm8k-{i}", f"What is {i} + {6 - i}?"), "6") for i in range(n_examples)]
    sets = {"n": "3"} if strategy == "cot-sc" else {}
    return _evaluate(strategy, sets, "gsm8k", examples, out, ScriptedLM(reply))


def without_anytime(out: Path) -> Path:
    """The run as one recorded before trajectories were: its records without ``anytime``."""
    path = out / "results.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in records:
        r.pop("anytime", None)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return out


def with_anytime(out: Path, trajectory, *, exact: str = "every budget") -> Path:
    """The run's records given trajectories as the runner writes them: ``trajectory(record)`` lists
    (calls, tokens, accuracy) before the end point (the record's own calls, tokens and metrics), which
    is added; the first point, at 0 calls, is added when it is not given."""
    path = out / "results.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in records:
        used = r["usage"]
        points = [(c, t, {"accuracy": a}) for c, t, a in trajectory(r)]
        if not points or points[0][:2] != (0, 0):
            points.insert(0, (0, 0, {"accuracy": 0.0}))
        points.append((used["calls"], used["prompt_tokens"] + used["completion_tokens"], r["metrics"]))
        r["anytime"] = {"points": [{"calls": c, "tokens": t, "answer": "", "metrics": m} for c, t, m in points],
                        "exact": exact}
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return out
