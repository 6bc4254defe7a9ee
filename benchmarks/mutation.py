"""Mutation check: do the tests notice when the code is wrong?

Makes small mutants of one module (one AST change each: a comparison, an
arithmetic or boolean operator, ``min``/``max``, a small constant, a
``return`` value dropped), runs the given tests against each mutant in a
copy of ``src/``, and prints the share killed (a test failed or timed out)
with every survivor's line, so a reviewer can add the test that kills it or
name it equivalent.

    python benchmarks/mutation.py src/thoughtloom/eval/stats.py tests/eval/test_stats.py
    python benchmarks/mutation.py src/thoughtloom/tasks/game24.py tests/tasks/test_game24.py --sample 40

Each mutant runs pytest with ``-x -q`` under ``--timeout`` seconds (a mutant
that makes a search loop forever counts as killed, by timeout; its whole
process group is killed, so nothing it started lingers). The default timeout
is ten times the unmutated run's time, at least 20 seconds: pyproject's
per-test ``timeout = 600`` is sized for the integration tests and would let
one hung mutant stall the run for ten minutes. ``--sample N`` draws
N mutants (seeded) instead of all of them; ``--line L`` (repeatable) keeps
only the mutants on line L, to recheck a run's survivors after adding tests.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SWAPS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
    ast.And: ast.Or, ast.Or: ast.And, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
NAMES = {"min": "max", "max": "min", "any": "all", "all": "any"}


@dataclass(frozen=True)
class Mutant:
    index: int  # the node's position in ast.walk order
    line: int
    what: str


def mutants(tree: ast.AST) -> list[Mutant]:
    out = []
    for i, node in enumerate(ast.walk(tree)):
        what = _describe(node)
        if what:
            out.append(Mutant(i, getattr(node, "lineno", 0), what))
    return out


def _describe(node: ast.AST) -> str | None:
    if isinstance(node, (ast.BinOp, ast.BoolOp)) and type(node.op) in SWAPS:
        return f"{type(node.op).__name__} -> {SWAPS[type(node.op)].__name__}"
    if isinstance(node, ast.Compare) and type(node.ops[0]) in SWAPS:
        return f"{type(node.ops[0]).__name__} -> {SWAPS[type(node.ops[0])].__name__}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NAMES:
        return f"{node.func.id}() -> {NAMES[node.func.id]}()"
    if isinstance(node, ast.Constant) and type(node.value) in (int, bool) and node.value in (0, 1, True, False):
        return f"{node.value!r} -> {_flip(node.value)!r}"
    if isinstance(node, ast.Return) and node.value is not None and not isinstance(node.value, ast.Constant):
        return "return X -> return None"
    return None


def _flip(value: int | bool) -> int | bool:
    return (not value) if isinstance(value, bool) else 1 - value


def mutate(source: str, mutant: Mutant) -> str:
    tree = ast.parse(source)
    node = list(ast.walk(tree))[mutant.index]
    if isinstance(node, (ast.BinOp, ast.BoolOp)):
        node.op = SWAPS[type(node.op)]()
    elif isinstance(node, ast.Compare):
        node.ops[0] = SWAPS[type(node.ops[0])]()
    elif isinstance(node, ast.Call):
        node.func.id = NAMES[node.func.id]  # type: ignore[attr-defined]
    elif isinstance(node, ast.Constant):
        node.value = _flip(node.value)
    elif isinstance(node, ast.Return):
        node.value = ast.Constant(None)
    return ast.unparse(ast.fix_missing_locations(tree))


def killed(work: Path, module: Path, source: str, tests: list[str], timeout: float) -> str:
    (work / module).write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    # its own session, so a timeout kills the test run and anything it started (a server, a worker)
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                            cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        returncode = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "timeout"
    return "survived" if returncode == 0 else "killed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("module", help="the module to mutate, e.g. src/thoughtloom/eval/stats.py")
    ap.add_argument("tests", nargs="+", help="the test files that should kill its mutants")
    ap.add_argument("--sample", type=int, default=0, help="draw this many mutants (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--line", type=int, action="append", default=[],
                    help="only the mutants on this line (repeatable): recheck survivors after adding tests")
    ap.add_argument("--timeout", type=float, default=0.0,
                    help="seconds per mutant's test run (default: 10x the unmutated run, at least 20)")
    args = ap.parse_args()
    module = Path(args.module)
    original = (REPO / module).read_text(encoding="utf-8")
    found = mutants(ast.parse(original))
    if args.line:
        found = [m for m in found if m.line in set(args.line)]
    if args.sample and args.sample < len(found):
        found = sorted(random.Random(args.seed).sample(found, args.sample), key=lambda m: m.index)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(REPO / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(REPO / "pyproject.toml", work / "pyproject.toml")
        os.environ.setdefault("THOUGHTLOOM_DATA", str(REPO.parent / "shared" / "data"))
        t0 = time.monotonic()
        if killed(work, module, original, args.tests, args.timeout or 600.0) != "survived":
            sys.exit(f"the tests fail on the unmutated {module}: fix them first")
        timeout = args.timeout or max(20.0, 10 * (time.monotonic() - t0))
        print(f"{len(found)} mutants, {timeout:.0f} s each at most", file=sys.stderr, flush=True)
        results = {"killed": 0, "timeout": 0, "survived": 0}
        survivors = []
        for m in found:
            outcome = killed(work, module, mutate(original, m), args.tests, timeout)
            results[outcome] += 1
            print(f"  line {m.line}: {m.what}: {outcome}", file=sys.stderr, flush=True)
            if outcome == "survived":
                survivors.append(m)
        (work / module).write_text(original, encoding="utf-8")
    total = len(found)
    dead = results["killed"] + results["timeout"]
    print(f"{module}: {dead}/{total} mutants killed ({dead / total:.0%}; {results['timeout']} by timeout)"
          if total else f"{module}: no mutants")
    for m in survivors:
        print(f"  survived: line {m.line}: {m.what}")


if __name__ == "__main__":
    main()
