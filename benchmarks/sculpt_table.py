"""Markdown table from eval run folders (summary.json + results.jsonl).

    python benchmarks/sculpt_table.py [--cache CACHE.sqlite] /tmp/sculpt-bench/game24_*

Per strategy: n, every task metric (mean), LLM calls, prompt / completion
tokens and model seconds per problem, and tokens per solved case where the
task has a 0/1 metric (success, game). Strategies share prompts, so many
calls of one strategy are cache hits from another; "model s/problem" is
therefore the latency each call took when it was FIRST computed (stored in
the completion cache, looked up by the trace's request hashes), not the
wall time of the (partly cached) rerun.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

CACHE: sqlite3.Connection | None = None


def model_seconds(run: Path) -> float | None:
    if CACHE is None or not (run / "trace.jsonl").exists():
        return None
    total = 0.0
    for line in (run / "trace.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e.get("type") == "llm_call":
            hit = CACHE.execute("SELECT latency_s FROM completions WHERE key = ?", (e["request_hash"],)).fetchone()
            total += hit[0] if hit else e.get("latency_s", 0.0)
    return total


def row(run: Path) -> tuple[list[str], list[str]]:
    s = json.loads((run / "summary.json").read_text())
    recs = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines() if x.strip()]
    n = len(recs)
    metrics = s["metrics"]
    per = s["usage"]["per_example"]
    head = ["strategy", "n"] + list(metrics) + ["calls/problem", "prompt tok/problem",
                                               "completion tok/problem", "model s/problem", "tok per solved"]
    solved_key = next((k for k in ("success", "game") if k in metrics), None)
    solved = sum(r["metrics"].get(solved_key, 0) for r in recs) if solved_key else 0
    total = s["usage"]["total_tokens"]
    vals = [s["strategy"], str(n)] + [f"{v:.3f}" for v in metrics.values()] + [
        f"{per['calls']:.1f}", f"{per['prompt_tokens']:.0f}", f"{per['completion_tokens']:.0f}",
        f"{ms / n:.0f}" if (ms := model_seconds(run)) is not None and n else f"{s['mean_latency_s']:.0f}",
        f"{total / solved:.0f}" if solved else "-"]
    return head, vals


def main() -> None:
    global CACHE
    args = sys.argv[1:]
    if args[:1] == ["--cache"]:
        CACHE = sqlite3.connect(args[1])
        args = args[2:]
    rows = [row(Path(p)) for p in args if (Path(p) / "summary.json").exists()]
    if not rows:
        return
    head = rows[0][0]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for _, vals in rows:
        print("| " + " | ".join(vals) + " |")


if __name__ == "__main__":
    main()
