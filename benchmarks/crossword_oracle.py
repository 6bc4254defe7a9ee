"""How far the tree searches get on 5x5 crosswords with a generator that always proposes a correct word.

The generator is scripted (no model): each reply lists the gold word of every slot not yet right
(the candidate list of App. A.2); the evaluator knows no answer (10/10 for a full slot, 2/10 for one with blanks). So
a search that fails here fails for its own reasons: depth, step counting, exploration, answer choice.
Prints, per strategy and UCB1 constant c, how many boards were solved, the mean share of words right, and
the mean depth of the answer. Everything else is the crosswords task's search settings (k = 3, 20 steps,
depth 20), unless --set says otherwise (options sculpt-dfs lacks, e.g. parallel, go to sculpt-mcts only).

    PYTHONPATH=src python benchmarks/crossword_oracle.py --puzzles 10 --seeds 3
    PYTHONPATH=src python benchmarks/crossword_oracle.py --set max_depth=3      # the old global default
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import fields

from thoughtloom import strategies, tasks
from thoughtloom.core.trace import Trace
from thoughtloom.strategies.context import Context
from thoughtloom.tasks.crosswords import SLOTS, word_at
from thoughtloom.tasks.datasets import load_examples
from thoughtloom.testing import ScriptedLM


def oracle(gold: str) -> ScriptedLM:
    def reply(req):
        prompt = req.messages[0].content
        rows = prompt.split("Current solution:\n", 1)[1].splitlines()[:5]
        board = "".join(r.replace(" ", "") for r in rows)
        if "JSON object" in prompt:
            return json.dumps({"items": [{"item": s, "feedback": "ok", "score": 2 if "_" in word_at(board, s) else 10}
                                         for s in SLOTS]})
        todo = [s for s in SLOTS if word_at(board, s) != word_at(gold, s)] or list(SLOTS)
        return "\n".join(f"{slot}. {word_at(gold, slot)} (high)" for slot in todo)  # one list per node (A.2)
    return ScriptedLM(reply)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="mini0505.json (default: the task's packaged sample)")
    ap.add_argument("--puzzles", type=int, default=10)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--c", default="1.0,0.5,0.3,0.2,0.1", help="UCB1 constants to try for sculpt-mcts")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for every strategy")
    args = ap.parse_args()
    task = tasks.get("crosswords")
    examples = load_examples(task, args.data, limit=args.puzzles).examples
    sets = dict(s.split("=", 1) for s in args.set)
    dfs_sets = {k: v for k, v in sets.items() if k in {f.name for f in fields(strategies.get("sculpt-dfs").Config)}}
    runs = [("sculpt-mcts", {**sets, "c": c}) for c in args.c.split(",")] + [("sculpt-dfs", dfs_sets)]
    print("strategy       settings                    solved   words   answer depth")
    for name, options in runs:
        solved = words = depth = 0.0
        n = 0
        for ex in examples:
            for seed in range(args.seeds):
                strategy = strategies.build(name, options, task)
                result = await strategy.run(ex.problem, Context(lm=oracle(ex.gold), task=task, trace=Trace(),
                                                                seed=seed))
                m = task.score(result.answer, ex.gold)
                solved, words, n = solved + m["game"], words + m["words"], n + 1
                depth += result.details["tree"][result.details["chosen"]]["depth"]
        shown = ", ".join(f"{k}={v}" for k, v in options.items()) or "(task settings)"
        print(f"{name:<14} {shown:<27} {int(solved):>3}/{n:<4} {words / n:6.2f}   {depth / n:6.1f}")


if __name__ == "__main__":
    asyncio.run(main())
