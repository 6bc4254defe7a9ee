"""Cache-replay speedup on a small eval.

Runs ``eval --strategy cot-sc`` on the first N GSM8K problems with an empty
cache, then the same eval into a new folder with ``--replay``, and prints
wall time, calls and new calls of each.
Usage: python benchmarks/cache_replay.py [--n 5] [--model embedded]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import DATA, thoughtloom


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--model", default="embedded")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    common = ["eval", "--strategy", "cot-sc", "--task", "gsm8k", "--data", str(DATA / "gsm8k" / "test.jsonl"),
              "--limit", str(a.n), "--model", a.model, "--cache", str(tmp / "cache.sqlite")]
    fresh, t_fresh = thoughtloom(*common, "--out", str(tmp / "fresh"))
    replay, t_replay = thoughtloom(*common, "--out", str(tmp / "replay"), "--replay")
    print(f"cache replay: cot-sc on GSM8K n={a.n}, model {fresh['model']}")
    for name, s, t in (("fresh", fresh, t_fresh), ("replay", replay, t_replay)):
        r = s["this_run"]
        print(f"  {name:<7} wall {t:7.2f} s (eval loop {r['wall_s']:.2f} s) · calls {r['calls']} · "
              f"new calls {r['new_calls']} · accuracy {s['metrics']['accuracy']:.3f}")
    print(f"  speedup: {t_fresh / t_replay:.1f}x whole command, "
          f"{fresh['this_run']['wall_s'] / max(replay['this_run']['wall_s'], 1e-9):.0f}x eval loop")


if __name__ == "__main__":
    main()
