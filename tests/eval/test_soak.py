"""The soak benchmark, short: a flaky server and an outage mid-run, through the CLI (benchmarks/soak.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from soak import soak  # noqa: E402

import pytest  # noqa: E402


@pytest.mark.integration  # about 20 s: an 8-second outage is part of it (issue 42: over 10 s is marked)
def test_short_soak_with_faults_and_an_outage_records_every_question_once(tmp_path):
    passes = soak(150, faults=0.15, concurrency=8, outage_at=0.3, outage_s=8.0, retry_after_s=0.0,
                  max_s=240.0, folder=tmp_path)
    first = passes[0][1]
    assert first.rc == 0, first.last_stderr
    assert first.completed == first.unique == 150  # every question recorded, none twice
    assert first.faults > 0 and first.retries >= first.faults - 4 * first.errored
    assert first.pauses >= 1 and first.paused_s > 0  # the outage paused the run, which went on
    final = passes[-1][1]
    assert final.rc == 0 and final.errored == 0 and final.unique == 150  # --retry-errors to 0
