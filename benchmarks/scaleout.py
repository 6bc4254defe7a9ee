"""Scale-out: the local executor against Ray with 2 and 4 workers, one server against two.

A fake OpenAI-compatible server on loopback (thoughtloom.testing.fake_server)
holds every call LATENCY seconds (default 0.2) and serves at most SLOTS calls
at once (default 8), so one server can do at most SLOTS / LATENCY calls/s.
Each configuration runs ``thoughtloom eval -S cot-sc --set n=4`` (4 calls an
example) on N synthetic questions (default 400) with --no-cache, the same
number of calls in flight per server in every configuration, and prints:

- examples/s over the eval loop (summary.json's this_run.wall_s: Ray's actor
  start-up is not in it; it is printed apart, with the CLI's own start-up);
- the ratio of the ideal time, LATENCY x calls / slots, to the eval loop's;
- the executor's overhead per example: the same eval against a server that
  answers at once with no slot limit, in ms per example (on this machine's
  cores, shared with the fake server and the Ray workers).

Ray runs join one local cluster the benchmark starts (--ray-address), so
each configuration pays for its actors, not for a cluster.
Usage: python benchmarks/scaleout.py [--n 400] [--latency 0.2] [--slots 8]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from pathlib import Path

from _common import thoughtloom

from thoughtloom.eval.ray_executor import start_local_cluster
from thoughtloom.testing.fake_server import FakeOpenAIServer

CALLS_PER_EXAMPLE = 4


def answer(prompt: str) -> str:
    i = int(prompt.rsplit("Question: What is ", 1)[1].split()[0])
    return f"The answer is: {i + 1}"


def write_data(folder: Path, n: int) -> Path:
    path = folder / "questions.jsonl"
    path.write_text("".join(json.dumps({"question": f"What is {i} plus 1?", "answer": f"#### {i + 1}"}) + "\n"
                            for i in range(n)))
    return path


def run_eval(data: Path, out: Path, urls: list[str], executor: list[str], concurrency: int) -> tuple[dict, float]:
    return thoughtloom("eval", "-S", "cot-sc", "--set", f"n={CALLS_PER_EXAMPLE}", "-t", "gsm8k", "-d", str(data),
                       "--model", f"openai:bench@{','.join(urls)}", "--no-cache", "-c", str(concurrency),
                       "--out", str(out), *executor)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400, help="examples (the issue's size: 400)")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds a call takes on the fake server")
    ap.add_argument("--slots", type=int, default=8, help="calls one fake server serves at once")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="scaleout") as tmp, \
            tempfile.TemporaryDirectory(prefix="tlray", dir="/tmp") as ray_dir:  # short: Ray's socket paths
        ray = start_local_cluster(temp_dir=ray_dir)
        try:
            measure(a, Path(tmp), ray.get_runtime_context().gcs_address)
        finally:
            ray.shutdown()


def measure(a: argparse.Namespace, tmp: Path, address: str) -> None:
    data = write_data(tmp, a.n)
    calls = a.n * CALLS_PER_EXAMPLE
    s = a.slots

    def executors(servers: int) -> list[tuple[str, list[str], int]]:
        """(label, flags, --concurrency) with ``s`` calls in flight per server in all."""
        inflight = s * servers
        return [(f"local -c {inflight}", [], inflight),
                (f"ray 2 workers x -c {inflight // 2}", ["--executor", "ray", "--ray-address", address,
                                                          "--workers", "2"], inflight // 2),
                (f"ray 4 workers x -c {inflight // 4}", ["--executor", "ray", "--ray-address", address,
                                                          "--workers", "4"], inflight // 4)]

    print(f"scale-out: cot-sc (n={CALLS_PER_EXAMPLE}) on {a.n} examples = {calls} calls; fake server: "
          f"{a.latency * 1000:.0f} ms a call, {s} slots ({s / a.latency:.0f} calls/s a server)")
    print(f"  {'executor':<24} {'servers':>7} {'eval loop':>10} {'examples/s':>10} {'ideal':>8} {'ratio':>6} "
          f"{'start-up':>9}")
    for servers in (1, 2):
        with contextlib.ExitStack() as stack:
            urls = [stack.enter_context(FakeOpenAIServer(answer, latency_s=a.latency, slots=s)).base_url
                    for _ in range(servers)]
            for label, flags, c in executors(servers):
                summary, wall = run_eval(data, tmp / f"{servers}-{label}".replace(" ", "_"), urls, flags, c)
                loop = summary["this_run"]["wall_s"]
                ideal = a.latency * calls / (s * servers)
                assert summary["complete"] and summary["n_errors"] == 0, summary
                print(f"  {label:<24} {servers:>7} {loop:>9.1f}s {a.n / loop:>10.2f} {ideal:>7.1f}s "
                      f"{ideal / loop:>6.2f} {wall - loop:>8.1f}s", flush=True)
    with FakeOpenAIServer(answer) as instant:
        overheads = []
        for label, flags, c in executors(1):
            summary, _ = run_eval(data, tmp / f"instant-{label}".replace(" ", "_"), [instant.base_url], flags, c)
            overheads.append(f"{label} {1000 * summary['this_run']['wall_s'] / a.n:.1f} ms")
    print(f"per-example overhead (a server answering at once, no slot limit): {'; '.join(overheads)}")


if __name__ == "__main__":
    main()
