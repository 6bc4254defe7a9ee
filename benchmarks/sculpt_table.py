"""Markdown table from eval run folders (summary.json + results.jsonl).

    python benchmarks/sculpt_table.py /tmp/sculpt-bench/game24_*

Per strategy: n, every task metric (mean), LLM calls, prompt / completion
tokens and wall seconds per problem (latency of the run, cached calls count
as calls but take no time), and tokens per solved case where the task has
a 0/1 metric (success, game).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def row(run: Path) -> tuple[list[str], list[str]]:
    s = json.loads((run / "summary.json").read_text())
    recs = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines() if x.strip()]
    n = len(recs)
    metrics = s["metrics"]
    per = s["usage"]["per_example"]
    head = ["strategy", "n"] + list(metrics) + ["calls/problem", "prompt tok/problem",
                                               "completion tok/problem", "wall s/problem", "tok per solved"]
    solved_key = next((k for k in ("success", "game") if k in metrics), None)
    solved = sum(r["metrics"].get(solved_key, 0) for r in recs) if solved_key else 0
    total = s["usage"]["total_tokens"]
    vals = [s["strategy"], str(n)] + [f"{v:.3f}" for v in metrics.values()] + [
        f"{per['calls']:.1f}", f"{per['prompt_tokens']:.0f}", f"{per['completion_tokens']:.0f}",
        f"{s['mean_latency_s']:.0f}", f"{total / solved:.0f}" if solved else "-"]
    return head, vals


def main() -> None:
    rows = [row(Path(p)) for p in sys.argv[1:] if (Path(p) / "summary.json").exists()]
    if not rows:
        return
    head = rows[0][0]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for _, vals in rows:
        print("| " + " | ".join(vals) + " |")


if __name__ == "__main__":
    main()
