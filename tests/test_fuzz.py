"""Fuzz every registered strategy with hostile model replies (issue 11 §6); offline, seeded, seconds.

The harness (reply classes, the run path, what counts as a crash or a hang)
is described in ``tests/support/fuzz_harness.py``; ``benchmarks/fuzz.py`` runs the
same harness longer and prints figures. Tasks whose benchmark files are
absent (``THOUGHTLOOM_DATA``) are left out; the outline task's seeds are
built in, so every strategy family runs regardless.
"""

import faulthandler
import sys

import pytest
from conftest import data_dir, missing_data_folder
from support.fuzz_harness import CLASSES, CORPUS_CLASSES, RETRIEVAL_STRATEGIES, fuzz, plan, plan_corpora, strategy_tasks

from thoughtloom import strategies

RUNS = 300
SEED = 11


def test_plan_covers_every_strategy_and_every_reply_class():
    cells = plan(RUNS, SEED, str(data_dir()))
    if {s for s, *_ in cells} != set(strategies.available()):  # some strategy's only data sets are absent
        pytest.skip(missing_data_folder())
    assert {s for s, *_ in cells} == set(strategies.available()) == set(strategy_tasks())
    assert {focus for *_, focus, _ in cells} == set(CLASSES)
    assert plan(RUNS, SEED, str(data_dir()))[-1][-1] == cells[-1][-1]  # seeded: the same plan again


def _fuzz_failures(runs: int, **options) -> tuple[int, list[str]]:
    """Run the fuzz; how many runs it made and a line for each that crashed or hung."""
    # a hang inside C code (a regex) cannot be interrupted by the per-run alarm: dump and exit
    faulthandler.dump_traceback_later(240, exit=True, file=sys.stderr)
    try:
        report = fuzz(runs, SEED, str(data_dir()), timeout_s=30, **options)  # busy CI cores: slow is not hung
    finally:
        faulthandler.cancel_dump_traceback_later()
    bad = [f"{o.status}: {o.strategy} on {o.task} [{o.focus}, seed {o.seed}] {o.error} at {o.where}"
           for o in report.outcomes if o.status in ("crash", "hang")]
    return len(report.outcomes), bad


def test_no_hostile_reply_crashes_or_hangs_a_run():
    made, bad = _fuzz_failures(RUNS)
    assert made == RUNS
    assert not bad, "\n".join(bad)


CORPUS_RUNS = 170  # every retrieval strategy/task pair meets every corpus class


def test_corpus_plan_covers_every_retrieval_strategy_and_corpus_class():
    cells = plan_corpora(CORPUS_RUNS, SEED, str(data_dir()))
    if not cells:
        pytest.skip(missing_data_folder())
    assert {s for s, *_ in cells} == set(RETRIEVAL_STRATEGIES)
    assert {(s, t, focus) for s, t, _, focus, _ in cells} == {
        (s, t, c) for s, ts in RETRIEVAL_STRATEGIES.items() for t in ts for c in CORPUS_CLASSES}


def test_no_hostile_corpus_crashes_or_hangs_a_run_or_escapes_its_bounds():
    """Without any retrieval task's data there is no cell to run: it skips, as its siblings do (issue 39:
    on a fresh clone it asserted 0 == 170)."""
    if not plan_corpora(CORPUS_RUNS, SEED, str(data_dir())):
        pytest.skip(missing_data_folder())
    made, bad = _fuzz_failures(CORPUS_RUNS, corpora=True)
    assert made == CORPUS_RUNS
    assert not bad, "\n".join(bad)


def test_without_benchmark_data_the_data_tests_skip_naming_the_data_command(tmp_path):
    """Issue 39: on a fresh clone (no benchmark data) the corpus fuzz asserted 0 == 170 where its
    siblings skipped, and the skips named the development layout instead of `thoughtloom data`."""
    import os
    import subprocess

    from conftest import REPO

    tests = [f"tests/test_fuzz.py::{name}" for name in (
        "test_plan_covers_every_strategy_and_every_reply_class",
        "test_corpus_plan_covers_every_retrieval_strategy_and_corpus_class",
        "test_no_hostile_corpus_crashes_or_hangs_a_run_or_escapes_its_bounds")]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *tests],
                       capture_output=True, text=True, cwd=REPO, timeout=600,
                       env={**os.environ, "THOUGHTLOOM_DATA": str(tmp_path), "PYTHONPATH": str(REPO / "src")})
    assert r.returncode == 0 and "3 skipped" in r.stdout, r.stdout + r.stderr
    skips = [line for line in r.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 3 and all("`thoughtloom data list`" in s and "../shared" not in s for s in skips), skips
