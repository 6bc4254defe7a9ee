"""Soak: a long eval against a flaky loopback server; print what survived, what it cost, and memory.

    PYTHONPATH=src python benchmarks/soak.py --n 20000 --faults 0.10
    PYTHONPATH=src python benchmarks/soak.py --n 20000 --faults 0.10 --outage-at 0.5 --outage-s 30

Writes N synthetic questions ("What is A plus B?", gold A + B) as a GSM8K
file and runs ``thoughtloom eval --strategy cot -c C --no-cache`` on them in
a subprocess, against :class:`thoughtloom.testing.fake_server.FakeOpenAIServer`
on 127.0.0.1 in this process: it answers each call at once with the right
sum, except that ``--faults`` of the calls get one fault of ``--kinds``
(HTTP 429 with ``Retry-After``, 500, 503, a body cut off half-way, a closed
connection). ``--outage-at F --outage-s S``: once F of the questions are
recorded the server goes down (connections refused) for S seconds. Then,
if any record has an error, the same command with ``--retry-errors``.

Prints, per pass: exit status, records completed / unique ids / errored,
requests the server saw, faults sent, retries (requests beyond the calls
the records count), the eval process's RSS at 10% of the questions and at
the end (its last reading, 0.2 s or less before the process exits: the final
summary included), and the wall time. The eval's memory should not grow
with its records: the runner keeps their sums (``eval.tally``), not them. Loopback only; each pass is bounded by
``--max-s`` seconds (then killed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from thoughtloom.testing.fake_server import FAULT_KINDS, FakeOpenAIServer, Faults  # noqa: E402

QUESTION = re.compile(r"What is (\d+) plus (\d+)\?")


def answer(prompt: str) -> str:
    found = QUESTION.search(prompt)
    return f"Adding them. The answer is: {int(found[1]) + int(found[2])}" if found else "The answer is: 0"


def write_questions(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            a, b = i, (i * 7919) % 1000
            fh.write(json.dumps({"question": f"What is {a} plus {b}?", "answer": f"#### {a + b}"}) + "\n")


def rss_mb(pid: int) -> float | None:
    """Resident memory of process ``pid`` in MB (Linux /proc), or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def read_records(path: Path) -> list[dict]:
    """The records of a results file, in file order (every line, superseded ones included)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def count_lines(path: Path) -> int:
    try:
        with path.open("rb") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return 0


@dataclass
class Pass:
    rc: int
    completed: int
    unique: int
    errored: int
    requests: int
    faults: int
    retries: int
    rss_10_mb: float | None
    rss_end_mb: float | None
    wall_s: float
    pauses: int | None  # times the circuit breaker paused the eval (summary.json's this_run)
    paused_s: float | None
    last_stderr: str

    def line(self, name: str) -> str:
        at_10 = f"{self.rss_10_mb:.0f} MB at 10% -> " if self.rss_10_mb is not None else ""
        mem = f"RSS {at_10}{self.rss_end_mb:.0f} MB at the end" if self.rss_end_mb is not None else "RSS n/a"
        return (f"{name}: exit {self.rc} · completed {self.completed} · unique {self.unique} · "
                f"errored {self.errored} · requests {self.requests} · faults {self.faults} · "
                f"retries {self.retries} · paused {self.pauses} times, {self.paused_s} s · {mem} · "
                f"wall {self.wall_s:.1f} s")


def run_pass(server: FakeOpenAIServer, command: list[str], out: Path, n: int, *, max_s: float,
             outage_at: float | None = None, outage_s: float = 0.0) -> Pass:
    """One eval subprocess, watched: RSS at 10% and at the end, the outage when due."""
    requests0, faults0 = server.calls, sum(server.faulted.values())
    results = out / "results.jsonl"
    kept = [r for r in read_records(results) if "--retry-errors" not in command or not r["error"]]
    calls_before = sum(r["usage"]["calls"] for r in kept)
    before = count_lines(results)  # a --retry-errors pass first drops the errored lines: RSS at 10% is the first pass's
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    rss_10 = rss_end = None
    outage_due = outage_at is not None
    back_at: float | None = None
    while proc.poll() is None and time.perf_counter() - t0 < max_s:  # bounded in time
        done = count_lines(results) - before
        rss = rss_mb(proc.pid)
        if rss is not None:
            rss_end = rss
            if rss_10 is None and done >= n / 10:
                rss_10 = rss
        if outage_due and done >= n * outage_at:
            server.down()
            back_at, outage_due = time.perf_counter() + outage_s, False
        if back_at is not None and time.perf_counter() >= back_at:
            server.up()
            back_at = None
        time.sleep(0.2)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    server.up()
    reader.join(timeout=5)
    wall = time.perf_counter() - t0
    records = read_records(results)
    try:
        this_run = json.loads((out / "summary.json").read_text(encoding="utf-8"))["this_run"]
    except (OSError, ValueError, KeyError):
        this_run = {}
    calls = sum(r["usage"]["calls"] for r in records) - calls_before
    requests = server.calls - requests0
    return Pass(rc=proc.returncode, completed=len(records), unique=len({r["id"] for r in records}),
                errored=sum(bool(r["error"]) for r in records), requests=requests,
                faults=sum(server.faulted.values()) - faults0, retries=requests - calls,
                rss_10_mb=rss_10, rss_end_mb=rss_end, wall_s=wall, pauses=this_run.get("server_pauses"),
                paused_s=this_run.get("server_paused_s"),
                last_stderr=(stderr[-1].strip() if stderr else ""))


def soak(n: int, *, faults: float, kinds: tuple[str, ...] = FAULT_KINDS, concurrency: int = 16,
         outage_at: float | None = None, outage_s: float = 30.0, seed: int = 0, max_s: float = 3600.0,
         retry_after_s: float = 1.0, extra: tuple[str, ...] = (), folder: Path | None = None) -> list[tuple[str, Pass]]:
    """The soak's passes: the eval, then (if it left errors) its ``--retry-errors`` rerun."""
    work = Path(folder or tempfile.mkdtemp(prefix="soak-"))
    data, out = work / "questions.jsonl", work / "out"
    write_questions(data, n)
    with FakeOpenAIServer(answer, faults=Faults(rate=faults, kinds=kinds, seed=seed,
                                                retry_after_s=retry_after_s)) as server:
        command = [sys.executable, "-m", "thoughtloom", "eval", "-S", "cot", "-t", "gsm8k", "-d", str(data),
                   "-c", str(concurrency), "--no-cache", "--model", f"openai:fake@{server.base_url}",
                   "--out", str(out), *extra]
        passes = [("eval", run_pass(server, command, out, n, max_s=max_s, outage_at=outage_at, outage_s=outage_s))]
        if passes[0][1].errored:
            passes.append(("--retry-errors", run_pass(server, [*command, "--retry-errors"], out,
                                                      passes[0][1].errored, max_s=max_s)))
    return passes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--faults", type=float, default=0.10, help="share of calls that get a fault")
    ap.add_argument("--kinds", default=",".join(FAULT_KINDS), help=f"faults to draw from: {','.join(FAULT_KINDS)}")
    ap.add_argument("--concurrency", "-c", type=int, default=16)
    ap.add_argument("--outage-at", type=float, default=None, help="share of questions recorded when the server goes down")
    ap.add_argument("--outage-s", type=float, default=30.0, help="how long it stays down")
    ap.add_argument("--retry-after", type=float, default=1.0, help="what a 429 says in Retry-After (s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-s", type=float, default=3600.0, help="seconds one pass may take before it is killed")
    args = ap.parse_args()
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    outage = f", server down {args.outage_s:g} s at {args.outage_at:.0%}" if args.outage_at is not None else ""
    print(f"soak: {args.n} questions, cot -c {args.concurrency}, {args.faults:.0%} faults ({','.join(kinds)}){outage}",
          flush=True)
    passes = soak(args.n, faults=args.faults, kinds=kinds, concurrency=args.concurrency, outage_at=args.outage_at,
                  outage_s=args.outage_s, seed=args.seed, max_s=args.max_s, retry_after_s=args.retry_after)
    for name, p in passes:
        print(p.line(name))
        if p.rc:
            print(f"  last stderr line: {p.last_stderr}")
    final = passes[-1][1]
    return 0 if final.rc == 0 and final.errored == 0 and final.unique == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
