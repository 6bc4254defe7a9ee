"""How big and how slow is the report of a large run?

Makes a run folder of N examples (default 500) with sculpt-mcts on
ScriptedLM (real prompts, real trace events: a tree of a few dozen nodes
and as many calls per example, messages and replies kept), then prints the
folder's size, the report's size and the time to build it; with headless
Chromium on PATH also the time to open the run page and one example page
(a browser's start-up, timed on an empty page, subtracted).

Usage: python benchmarks/view_report.py [--examples 500] [--rollouts 4] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from thoughtloom import strategies, tasks
from thoughtloom.core.types import Problem
from thoughtloom.eval.runner import EvalResources, EvalSettings, evaluate
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM
from thoughtloom.view import write_report

EXPRESSIONS = ["(4 + 9) * 10 - 13", "(13 - 9) * (10 - 4)", "4 * 9 - 10 - 13", "13 + 10 + 9 - 4 * 2",
               "(10 - 4) * (13 - 9)", "9 * 4 - (13 - 10)", "10 + 13 + 9 / 4"]


def make_run(folder: Path, examples: int, rollouts: int) -> float:
    counter = itertools.count()

    def reply(req):
        i = next(counter)
        if "JSON object" in req.messages[0].content:
            return json.dumps({"feedback": f"Step {i % 5} is off: recheck the subtraction and reuse each number "
                                           "exactly once. " * 3, "score": i % 10})
        return f"Let me try.\nExpression: {EXPRESSIONS[i % len(EXPRESSIONS)]} + {i % 3} - {i % 3}\nThe answer is: ok"

    puzzles = [Example(Problem(f"game24-{n}", f"{n % 13 + 1} {n % 7 + 2} {n % 5 + 3} {n % 11 + 1}"),
                       [n % 13 + 1, n % 7 + 2, n % 5 + 3, n % 11 + 1]) for n in range(examples)]
    cls = strategies.get("sculpt-mcts")
    strategy = cls(strategies.make_config(cls, {"rollouts": str(rollouts), "k": "3"}))
    t0 = time.perf_counter()
    asyncio.run(evaluate(strategy, tasks.get("game24"), puzzles, EvalResources(ScriptedLM(reply)), folder,
                         settings=EvalSettings(concurrency=8)))
    return time.perf_counter() - t0


def browser_seconds(url: str, profile: Path) -> float | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return None
    t0 = time.perf_counter()
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                    "--virtual-time-budget=10000", "--dump-dom", url], check=True, capture_output=True, timeout=300)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--rollouts", type=int, default=4)
    parser.add_argument("--keep", type=Path, help="make the run here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="view-bench-"))
    folder = root / "run"
    made = make_run(folder, args.examples, args.rollouts)
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    events = sum(1 for _ in (folder / "trace.jsonl").open())
    print(f"run: {args.examples} examples, {events} trace events, {size / 1e6:.1f} MB on disk (made in {made:.1f} s)")
    t0 = time.perf_counter()
    report = write_report(folder)
    built = time.perf_counter() - t0
    print(f"report: {report.stat().st_size / 1e6:.2f} MB, built in {built:.1f} s")
    blank = root / "blank.html"
    blank.write_text("<!DOCTYPE html><title>blank</title>")
    start = browser_seconds(blank.as_uri(), root / "profile")
    if start is None:
        print("browser: no chromium on PATH (apt-get install chromium) - load times not measured")
    else:
        page = browser_seconds(report.as_uri(), root / "profile")
        example = browser_seconds(report.as_uri() + "#example=game24-250", root / "profile")
        print(f"browser (headless Chromium, its {start:.1f} s start-up subtracted): run page {page - start:.2f} s, "
              f"run page and one example page {example - start:.2f} s")
    if args.keep is None:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
