"""Fuzz every registered strategy with hostile model replies; print runs, crashes and hangs.

    PYTHONPATH=src python benchmarks/fuzz.py --runs 2000 --seed 0
    PYTHONPATH=src python benchmarks/fuzz.py --corpora --runs 1000   # hostile corpora, retrieval strategies

Offline (ScriptedLM), no model. The harness, the reply classes and what
counts as a crash are described in ``tests/support/fuzz_harness.py``; the short,
seeded version of the same harness is ``tests/test_fuzz.py``. Data comes
from ``$THOUGHTLOOM_DATA`` (default ``../shared/data``); tasks whose files
are absent are left out (the outline task's seeds are built in).

Prints the number of runs (per status: ok, recorded per-example error,
crash, hang), the unreadable replies the strategies traced (``malformed``
events by ``what``), crashes grouped by exception class and innermost thoughtloom
frame, the hangs, and the slowest runs. Exit status 1 if any run crashed
or hung.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from support.fuzz_harness import fuzz  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per run before it counts as a hang")
    ap.add_argument("--data", default=os.environ.get("THOUGHTLOOM_DATA", str(ROOT.parent / "shared" / "data")))
    ap.add_argument("-v", "--verbose", action="store_true", help="print every crash as it happens")
    ap.add_argument("--corpora", action="store_true",
                    help="hostile corpora (instructions, 10 MB, invalid UTF-8, NUL, one passage repeated) "
                         "against every retrieval strategy, instead of hostile replies")
    args = ap.parse_args()

    t0 = time.perf_counter()

    def show(o) -> None:
        if args.verbose and o.status in ("crash", "hang"):
            print(f"{o.status}: {o.strategy} on {o.task} [{o.focus}, seed {o.seed}] {o.error} at {o.where}",
                  flush=True)

    report = fuzz(args.runs, args.seed, args.data, timeout_s=args.timeout, on_outcome=show, corpora=args.corpora)
    wall = time.perf_counter() - t0
    outcomes = report.outcomes
    status = Counter(o.status for o in outcomes)
    pairs = {(o.strategy, o.task) for o in outcomes}
    print(f"runs: {len(outcomes)} over {len({o.strategy for o in outcomes})} strategies and "
          f"{len(pairs)} strategy/task pairs, seed {args.seed}, {wall:.1f} s")
    print(f"ok: {status['ok']}  recorded per-example errors: {status['recorded']}  "
          f"crashes: {status['crash']}  hangs: {status['hang']}")
    print(f"model calls: {sum(o.calls for o in outcomes)} (max {max((o.calls for o in outcomes), default=0)} in one run)")
    malformed = sum((o.malformed for o in outcomes), Counter())
    if malformed:
        print("malformed replies traced, by step: " + ", ".join(f"{k} {v}" for k, v in malformed.most_common()))
    recorded = Counter(o.error.split(":")[0] for o in report.of("recorded"))
    if recorded:
        print("recorded errors by class: " + ", ".join(f"{k} {v}" for k, v in recorded.most_common()))
    crashes = report.crashes_by_class()
    if crashes:
        print("crashes by class and location:")
        for (cls, where), n in crashes.most_common():
            example = next(o for o in report.of("crash") if o.error.startswith(cls) and o.where == where)
            print(f"  {n:5d}  {cls} at {where}  e.g. {example.strategy} on {example.task} "
                  f"[{example.focus}, seed {example.seed}]: {example.error[:120]}")
    for o in report.of("hang"):
        print(f"hang: {o.strategy} on {o.task} [{o.focus}, seed {o.seed}] {o.error} at {o.where}")
    slow = sorted(outcomes, key=lambda o: -o.seconds)[:5]
    print("slowest: " + ", ".join(f"{o.strategy}/{o.task}/{o.focus} {o.seconds:.2f} s" for o in slow))
    return 1 if status["crash"] or status["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
