"""Print the DecomP results table for a folder of eval runs (one sub-folder per run).

Reads each run's results.jsonl (so runs cut short by a timeout still count)
and prints: run, n, metrics, LLM calls/question, tokens/question, seconds/
question, decomposer format errors per 100 questions, program end states.

    python benchmarks/decomp_table.py runs/decomp/embedded
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def row(folder: Path) -> str | None:
    path = folder / "results.jsonl"
    if not path.is_file():
        return None
    recs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            recs[r["id"]] = r
    recs = list(recs.values())
    n = len(recs)
    if not n:
        return None
    names = sorted({k for r in recs for k in r["metrics"]})
    metrics = " ".join(f"{k}={sum(r['metrics'].get(k, 0) for r in recs) / n:.3f}" for k in names)
    calls = sum(r["usage"]["calls"] for r in recs) / n
    tokens = sum(r["usage"]["total_tokens"] for r in recs) / n
    secs = sum(r["latency_s"] for r in recs) / n
    fmt = 100 * sum(r.get("details", {}).get("format_errors", 0) for r in recs) / n
    states = Counter(r.get("details", {}).get("status", "error" if r.get("error") else "?") for r in recs)
    errors = sum(1 for r in recs if r.get("error"))
    st = ",".join(f"{k}:{v}" for k, v in sorted(states.items()))
    return (f"| {folder.name} | {n} | {metrics} | {calls:.1f} | {tokens:.0f} | {secs:.1f} | "
            f"{fmt:.0f} | {st}{f' errors:{errors}' if errors else ''} |")


def main(root: str) -> None:
    print("| run | n | metrics | LLM calls/q | tokens/q | s/q | format errors/100q | end states |")
    print("|---|---|---|---|---|---|---|---|")
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        line = row(folder)
        if line:
            print(line)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/decomp")
