"""A model judge for a task that has one (``Task.judged_metrics``): the outline task's
interestingness (ThoughtSculpt §4.1, Table 1, Fig. 4).

The paper scores outlines with a fine-tuned Flan-T5 content evaluator that "Neither
ThoughtSculpt nor the baselines have access to ... during outline generation". Here an LM
stands in, clearly labelled as a MODEL JUDGE in every record (``details["judge"]``): it
answers the task's judge prompts (:meth:`Task.judge_prompts`) after the method has finished,
on the eval's shared LM outside the method's budget, so its calls are in no method's usage.
It judges the given outline (step 0 of Fig. 4), the best outline of each step of a tree
search (``details["step_best"]``) and the final answer, each distinct outline once.
"""

from __future__ import annotations

from typing import Any

from ..core.protocols import LM
from ..core.types import Request
from ..tasks.base import Task

JUDGE_MAX_TOKENS = 16  # '{"interesting": "yes"}' and a little room


async def judge_answer(task: Task, lm: LM, gold: Any, prediction: str | None,
                       details: dict[str, Any]) -> tuple[dict[str, float], dict[str, Any]]:
    """The judged metrics of one answer (no answer: 0) and the record's ``judge`` entry: the
    judge's label, the given outline's, each step's and the final score, calls and unreadable
    replies."""
    initial = "\n".join(gold.get("items", [])) if isinstance(gold, dict) else ""
    steps = [s for s in details.get("step_best", []) if isinstance(s, str)]
    outlines = list(dict.fromkeys([initial, *steps] + ([prediction] if prediction else [])))
    prompts = {o: task.judge_prompts(gold, o) for o in outlines}
    flat = [(o, p) for o in outlines for p in prompts[o]]
    schema = task.judge_schema
    replies = await lm.generate([Request.of(p, max_tokens=JUDGE_MAX_TOKENS, temperature=0.0, json_schema=schema)
                                 for _, p in flat]) if flat else []
    texts: dict[str, list[str]] = {o: [] for o in outlines}
    for (o, _), reply in zip(flat, replies):
        texts[o].append(reply.text)
    score = {o: task.read_judge(texts[o]) for o in outlines}
    unreadable = sum(1 for o in outlines for t in texts[o] if task.read_judge([t]) is None)
    final = score.get(prediction) if prediction else None
    entry = {
        "judge": f"model judge ({lm.model_id}): the task's judge prompts, not the "
                 "paper's fine-tuned evaluator",
        "initial": score.get(initial), "steps": [score.get(s) for s in steps], "final": final,
        "calls": len(flat), "unreadable": unreadable,
    }
    metrics = {name: float(final or 0.0) for name in task.judged_metrics}
    return metrics, entry
