"""Methods on the embedded backend, decoding one sequence at a time vs batched.

Runs each command below twice with no cache, ``--parallel 1`` and the
default, and prints wall time, LLM calls and whether the two runs gave the
same answer and the same text for every greedy (temperature 0) call.

- cot-sc with n=8 samples on one GSM8K problem
- sculpt-mcts on one Game of 24 puzzle with parallel=4 (leaf-parallel rollouts)
- hgot on one HotpotQA question (5 samples per thought), BM25 over the
  question's own paragraphs, lexical entailment judge

Usage: python benchmarks/method_speed.py [--model M] [--only NAME] [--rollouts 4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import DATA

GSM8K_Q = ("Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
           "How many clips did Natalia sell altogether in April and May?")


def commands(rollouts: int, tmp: Path) -> dict[str, list[str]]:
    cmds = {
        "cot-sc": ["run", "cot-sc", GSM8K_Q, "--task", "gsm8k", "--set", "n=8"],
        "sculpt-mcts": ["run", "sculpt-mcts", "4 9 10 13", "--task", "game24", "--set", "parallel=4",
                        "--set", f"rollouts={rollouts}"],
    }
    hotpot = DATA / "hotpotqa" / "hotpot_dev_distractor_subset.jsonl"
    if hotpot.is_file():
        first = json.loads(hotpot.read_text().splitlines()[0])
        corpus = tmp / "corpus.jsonl"
        corpus.write_text("".join(json.dumps({"id": f"p{i}", "title": t, "text": " ".join(s)}) + "\n"
                                  for i, (t, s) in enumerate(first["context"])))
        subprocess.run([sys.executable, "-m", "thoughtloom", "index", "build", "--corpus", str(corpus),
                        "--kind", "bm25", "--out", str(tmp / "idx")], check=True, capture_output=True)
        cmds["hgot"] = ["run", "hgot", first["question"], "--task", "hotpotqa", "--index", str(tmp / "idx"),
                        "--entail", "lexical"]
    return cmds


def run(args: list[str], model: str, parallel: int | None, trace: Path) -> tuple[float, dict, list[dict]]:
    cmd = [sys.executable, "-m", "thoughtloom", *args, "--model", model, "--no-cache", "--json",
           "--trace", str(trace)] + (["--parallel", str(parallel)] if parallel else [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    return wall, json.loads(proc.stdout), [e for e in events if e["type"] == "llm_call"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--only", default=None)
    ap.add_argument("--rollouts", type=int, default=4)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    print(f"methods, one sequence at a time (--parallel 1) vs batched (default), model {a.model}")
    for name, args in commands(a.rollouts, tmp).items():
        if a.only and name != a.only:
            continue
        seq = run(args, a.model, 1, tmp / f"{name}-seq.jsonl")
        bat = run(args, a.model, None, tmp / f"{name}-bat.jsonl")
        greedy_seq = {e["request_hash"]: e["text"] for e in seq[2] if e["temperature"] == 0}
        greedy_bat = {e["request_hash"]: e["text"] for e in bat[2] if e["temperature"] == 0}
        greedy = [(t, greedy_bat[h]) for h, t in greedy_seq.items() if h in greedy_bat]
        same = sum(x == y for x, y in greedy)
        print(f"  {name:<12} sequential {seq[0]:7.1f} s ({len(seq[2])} calls) · batched {bat[0]:7.1f} s "
              f"({len(bat[2])} calls) · {seq[0] / bat[0]:.2f}x · answer {seq[1].get('answer')!r} vs "
              f"{bat[1].get('answer')!r} · greedy calls with the same request: {same}/{len(greedy)} same text",
              flush=True)


if __name__ == "__main__":
    main()
