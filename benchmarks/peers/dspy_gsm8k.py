"""thoughtloom vs DSPy on GSM8K, on the same OpenAI-compatible server, one after the other.

Starts nothing itself: point ``--base-url`` at a running server (e.g.
``python -m llama_cpp.server --model M.gguf --port 8765 --model_alias bench``).
Runs, on the first N GSM8K test questions, at temperature 0 (samples at 0.7):

- thoughtloom ``io``, ``cot`` and ``cot-sc`` through the CLI (``thoughtloom eval``);
- DSPy ``Predict``, ``ChainOfThought`` and a majority of ``n`` ChainOfThought
  samples, with signature ``question -> answer``.

and prints one table: accuracy with a 95% Wilson interval, calls, prompt and
completion tokens, wall seconds. Both systems are scored the same way: the
GSM8K task's number extractor over the reply (thoughtloom) or DSPy's
``answer`` field, compared as exact numbers. Both run under the same token
cap: DSPy sends ``max_completion_tokens``, which llama-cpp-python's server
ignores, so ``max_tokens`` also goes in ``extra_body``.

DSPy is not a dependency of thoughtloom; install it for this script only
(``pip install dspy==3.4.1``).

Usage:
  python benchmarks/peers/dspy_gsm8k.py --base-url http://127.0.0.1:8765/v1 --n 50 \
      [--systems tl-io,tl-cot,dspy-predict,dspy-cot] [--layout chat|text] [--sc-n 5] \
      [--set shots=0] [--out DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import DATA  # noqa: E402

from thoughtloom.tasks import get as get_task  # noqa: E402

SYSTEMS = ("tl-io", "tl-cot", "tl-cot-sc", "dspy-predict", "dspy-cot", "dspy-cot-sc")
TOKEN_CAP = {"io": 64, "cot": 384}


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for k successes out of n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def load_questions(n: int) -> list[tuple[str, str]]:
    task = get_task("gsm8k")
    return [(ex.problem.question, ex.gold) for ex in task.load(DATA / "gsm8k" / "test.jsonl")[:n]]


def run_thoughtloom(strategy: str, base_url: str, n: int, out: Path, layout: str, sc_n: int,
                    extra: list[str]) -> dict:
    sets = ["--set", f"layout={layout}"] + [arg for kv in extra for arg in ("--set", kv)]
    if strategy == "cot-sc":
        sets += ["--set", f"n={sc_n}"]
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "thoughtloom", "eval", "--strategy", strategy, "--task", "gsm8k",
                    "--data", str(DATA / "gsm8k" / "test.jsonl"), "--limit", str(n),
                    "--model", f"openai:bench@{base_url}", "--no-cache", "--out", str(out), *sets],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    summary = json.loads((out / "summary.json").read_text())
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    usage = summary["usage"]
    return {"correct": sum(r["metrics"].get("accuracy", 0) == 1.0 for r in records), "n": len(records),
            "calls": usage["calls"], "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"], "wall_s": wall,
            "truncated": summary.get("n_truncated", 0)}


def run_dspy(kind: str, base_url: str, questions: list[tuple[str, str]], sc_n: int, dump: Path) -> dict:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch inside the timing
    import dspy

    cap = TOKEN_CAP["io" if kind == "predict" else "cot"]
    lm = dspy.LM("openai/bench", api_base=base_url, api_key="none", temperature=0.0, max_tokens=cap,
                 cache=False, extra_body={"max_tokens": cap})
    sample_lm = dspy.LM("openai/bench", api_base=base_url, api_key="none", temperature=0.7, max_tokens=cap,
                        cache=False, extra_body={"max_tokens": cap}, n=sc_n)
    module = dspy.Predict("question -> answer") if kind == "predict" else dspy.ChainOfThought("question -> answer")
    task = get_task("gsm8k")
    correct, replies = 0, []
    t0 = time.perf_counter()
    for question, gold in questions:
        try:
            if kind == "cot-sc":
                with dspy.context(lm=sample_lm):
                    pred = dspy.majority(module(question=question, config={"n": sc_n}))
            else:
                with dspy.context(lm=lm):
                    pred = module(question=question)
            answer = str(pred.answer)
        except Exception as exc:  # DSPy raises when it cannot parse its own fields: a wrong answer
            answer = f"(error: {type(exc).__name__})"
        value = task.extract_answer(answer)
        correct += task.score(value, gold)["accuracy"] == 1.0
        replies.append({"question": question, "gold": gold, "answer": answer})
    wall = time.perf_counter() - t0
    history = lm.history + sample_lm.history
    usage = [h.get("usage") or {} for h in history]
    dump.write_text("\n".join(json.dumps(r) for r in replies) + "\n")
    return {"correct": correct, "n": len(questions), "calls": len(history),
            "prompt_tokens": sum(u.get("prompt_tokens", 0) or 0 for u in usage),
            "completion_tokens": sum(u.get("completion_tokens", 0) or 0 for u in usage),
            "wall_s": wall, "truncated": None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-url", required=True, help="a running OpenAI-compatible server, e.g. http://127.0.0.1:8765/v1")
    ap.add_argument("--n", type=int, default=50, help="the first N GSM8K test questions")
    ap.add_argument("--systems", default="tl-io,tl-cot,dspy-predict,dspy-cot",
                    help=f"comma-separated, from: {','.join(SYSTEMS)}")
    ap.add_argument("--layout", default="chat", choices=("chat", "text"), help="thoughtloom's few-shot layout")
    ap.add_argument("--sc-n", type=int, default=5, help="samples for the self-consistency systems")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="an option for the thoughtloom strategies, repeatable (e.g. --set shots=0)")
    ap.add_argument("--out", type=Path, default=None, help="keep thoughtloom runs and DSPy answers here")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON lines too")
    a = ap.parse_args()
    systems = [s.strip() for s in a.systems.split(",") if s.strip()]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        ap.error(f"unknown system(s) {unknown}; choose from {', '.join(SYSTEMS)}")
    out = a.out or Path(tempfile.mkdtemp(prefix="peers-"))
    out.mkdir(parents=True, exist_ok=True)
    questions = load_questions(a.n)
    print(f"GSM8K test, first {len(questions)} questions · server {a.base_url} · thoughtloom layout {a.layout}")
    print("| system | accuracy (95% CI) | calls | prompt tok | completion tok | wall s | truncated |")
    print("|---|---|---|---|---|---|---|")
    for system in systems:
        owner, kind = system.split("-", 1)
        if owner == "tl":
            tag = "-".join([a.layout, *(kv.replace("=", "") for kv in a.sets)])
            row = run_thoughtloom(kind, a.base_url, len(questions), out / f"{system}-{tag}", a.layout, a.sc_n,
                                  a.sets)
            label = (f"thoughtloom `{kind}`" + (f" (n={a.sc_n})" if kind == "cot-sc" else "")
                     + (f" {a.layout} layout" if a.layout != "chat" else "")
                     + "".join(f" `{kv}`" for kv in a.sets))
        else:
            row = run_dspy(kind, a.base_url, questions, a.sc_n, out / f"{system}.jsonl")
            label = {"predict": "DSPy `Predict`", "cot": "DSPy `ChainOfThought`",
                     "cot-sc": f"DSPy majority of {a.sc_n} `ChainOfThought`"}[kind]
        lo, hi = wilson(row["correct"], row["n"])
        trunc = "-" if row["truncated"] is None else str(row["truncated"])
        print(f"| {label} | {row['correct']}/{row['n']} ({lo:.2f}–{hi:.2f}) | {row['calls']} | "
              f"{row['prompt_tokens']:,} | {row['completion_tokens']:,} | {row['wall_s']:.0f} | {trunc} |",
              flush=True)
        if a.json:
            print(json.dumps({"system": system, "layout": a.layout, **row}), flush=True)
    print(f"runs kept in {out}")


if __name__ == "__main__":
    main()
