"""Throughput of cot-sc at concurrency 1 vs 4 against a loopback OpenAI-compatible server.

Starts ``python -m llama_cpp.server`` on 127.0.0.1 with the given GGUF (the
embedded SmolLM2 by default), runs ``eval --strategy cot-sc --no-cache`` on
the first N GSM8K problems at each concurrency, and prints questions/s and
completion tokens/s.
Usage: python benchmarks/server_throughput.py [--n 8] [--gguf PATH]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import DATA, llama_server, thoughtloom

from thoughtloom.lm.llamacpp import embedded_model_path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--gguf", default=None)
    ap.add_argument("--concurrency", default="1,4")
    a = ap.parse_args()
    gguf = a.gguf or str(embedded_model_path())
    tmp = Path(tempfile.mkdtemp())
    print(f"cot-sc (n=5 samples) on GSM8K n={a.n}, llama_cpp.server on loopback, model {Path(gguf).name}")
    with llama_server(gguf) as base:
        for c in [int(x) for x in a.concurrency.split(",")]:
            s, wall = thoughtloom("eval", "--strategy", "cot-sc", "--task", "gsm8k",
                                  "--data", str(DATA / "gsm8k" / "test.jsonl"), "--limit", str(a.n),
                                  "--model", f"openai:bench@{base}", "--no-cache", "-c", str(c),
                                  "--out", str(tmp / f"c{c}"))
            r = s["this_run"]
            print(f"  concurrency {c}: eval loop {r['wall_s']:7.2f} s · {a.n / r['wall_s']:.3f} questions/s · "
                  f"{r['completion_tokens'] / r['wall_s']:.1f} completion tok/s · {r['calls']} calls")


if __name__ == "__main__":
    main()
