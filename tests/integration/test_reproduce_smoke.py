"""One suite end to end on the embedded model (n = 2): the card's structure, not its numbers."""

import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from conftest import data_dir, data_file
from thoughtloom.eval import assembly
from thoughtloom.cli.main import app

pytestmark = pytest.mark.integration


def test_decomp_letter_end_to_end_then_replay(embedded_path, tmp_path, monkeypatch):
    data_file("decomp_letter_cat", "n3_eg100_pos2_semic.json")
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    # two methods on one dataset, a small budget and both questions decoded together: short enough for CI
    args = ["reproduce", "decomp-letter", "--dataset", "n3", "--method", "decomp", "--method", "cot", "--n", "2",
            "--max-calls", "3", "-c", "2", "--data-root", str(data_dir()), "--out", str(out), "--cache", str(cache)]
    r = subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]

    md = (out / "card.md").read_text()
    assert md.startswith("# Reproduction card: decomp-letter\n") and "Model: gguf:SmolLM2-135M-Instruct" in md
    assert "n = 2 examples per dataset, seeds = 1; budget per example, every method alike: 3 calls" in md
    assert "thoughtloom reproduce decomp-letter --dataset n3" in md
    for dataset in ("n3", "n4", "n5"):
        assert f"## {dataset}: task letter_cat, decomp_letter_cat/{dataset}_eg100_pos2_semic.json, examples 1–2" in md
    cell = re.compile(r"^\| (DecomP|CoT) \| (decomp|decomp-cot) \| – \| \d+\.\d \[\d+\.\d, \d+\.\d\] \| 2 \| \d+ \| 1 \| "
                      r"\d+\.\d \| [\d,]+ \| ", re.M)
    assert len(cell.findall(md)) == 2  # the two cells run: mean [95% CI], n, seeds, calls and tokens per example
    # not run: n3's other two cells and the claims on them, then n4's and n5's four cells and three claims
    assert md.count("| not run |") == 2 + 2 + 2 * (4 + 3)
    verdicts = re.findall(r"\| decomp > cot on em \| [^|]+ \| – \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|", md)
    assert re.match(r"[+-]\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\] pts \(n=2\)", verdicts[0][0].strip())
    # the card's note: a claim holds (or does not) only where the exact paired test rejects at 0.05 after
    # Holm's correction; on 2 examples McNemar's smallest p-value is 2 * (1/2)^2 = 0.5, so whatever the
    # model answered the claim is inconclusive, and the card says why
    assert verdicts[0][1].strip().startswith("exact McNemar")
    assert re.match(r"inconclusive: n = 2(, [01] discordant)?: the smallest p-value possible is (0\.5|1)$",
                    verdicts[0][3].strip())
    page = (out / "card.html").read_text()
    assert page.startswith("<!doctype html>") and page.count("<table>") == md.count("\n|---")

    # --replay: the same tables again from the results folders, without loading or calling the model
    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: pytest.fail("replay opened a model"))
    tables = [line for line in md.splitlines() if line.startswith("| ")]
    r = CliRunner().invoke(app, [*args, "--replay"])
    assert r.exit_code == 0, r.output
    assert [line for line in (out / "card.md").read_text().splitlines() if line.startswith("| ")] == tables
