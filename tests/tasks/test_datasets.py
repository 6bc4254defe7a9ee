"""The packaged samples: one for every task that reads data, loadable from the installed package,
in the wheel, small, and (where the source data is at hand) made of the source's own records."""

import csv
import fnmatch
import io
import json
import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from conftest import REPO, data_file
from thoughtloom import tasks
from thoughtloom.core import ConfigError
from thoughtloom.tasks.datasets import CATALOGUE, load_examples, sample_path

SAMPLED = sorted(name for name, info in CATALOGUE.items() if info.sample is not None)
SAMPLES = resources.files("thoughtloom.tasks").joinpath("data", "samples")


def test_every_task_is_described_and_every_benchmark_has_a_sample_or_says_why_not():
    assert sorted(CATALOGUE) == tasks.available()
    for name, info in CATALOGUE.items():
        assert info.format and info.licence and info.full_set, name
        if info.sample is None:
            assert info.note, f"{name}: no sample and no reason given"
    assert set(SAMPLED) == set(tasks.available()) - {"freeform", "qa", "multiarith"}


@pytest.mark.parametrize("name", SAMPLED)
def test_each_sample_loads_through_its_task_from_the_package(name):
    path = sample_path(name)
    assert path.exists() and path.is_relative_to(Path(str(resources.files("thoughtloom"))))
    examples = tasks.get(name).load(path)
    ids = [e.problem.id for e in examples]
    assert 5 <= len(examples) <= 50 and len(set(ids)) == len(ids)
    assert all(e.problem.question.strip() for e in examples)


def test_sources_md_names_every_sample_file_and_its_licence():
    notice = SAMPLES.joinpath("SOURCES.md").read_text(encoding="utf-8")
    for name in SAMPLED:
        info = CATALOGUE[name]
        assert f"| `{name}` |" in notice, name
        assert info.licence.split(";")[0].split(" (")[0] in notice, name
    root = Path(str(SAMPLES))
    for path in _files(root):
        rel = path.relative_to(root).as_posix()
        strata = re.sub(r"_(long|medium|short)\.csv$", "_{long,medium,short}.csv", rel)  # written once for three
        assert rel == "SOURCES.md" or f"`{rel}`" in notice or f"`{strata}`" in notice, rel


def test_the_wheel_takes_every_sample_file():
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = REPO / "src" / "thoughtloom"
    for path in _files(package / "tasks" / "data"):
        rel = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(rel, p) and rel.count("/") == p.count("/") for p in patterns["thoughtloom"]), rel


def test_the_samples_stay_small():
    total = sum(p.stat().st_size for p in _files(Path(str(SAMPLES))))
    assert total < 1_000_000, f"packaged samples are {total} bytes"


def test_load_examples_uses_the_sample_when_no_data_is_given(tmp_path):
    task = tasks.get("gsm8k")
    dataset = load_examples(task, None, offset=2, limit=3)
    assert dataset.sample and dataset.path == sample_path("gsm8k")
    assert [e.problem.id for e in dataset.examples] == ["gsm8k-2", "gsm8k-3", "gsm8k-4"]
    own = tmp_path / "mine.jsonl"
    own.write_text(json.dumps({"question": "1 + 1?", "answer": "#### 2"}) + "\n")
    dataset = load_examples(task, own)
    assert not dataset.sample and dataset.path == own and len(dataset.examples) == 1
    with pytest.raises(ConfigError, match="offset 1: .* has only 1 examples"):
        load_examples(task, own, offset=1)


def test_a_task_without_a_sample_says_how_to_get_data():
    with pytest.raises(ConfigError, match="multiarith.*no packaged sample.*licence.*--data"):
        load_examples(tasks.get("multiarith"), None)
    with pytest.raises(ConfigError, match="freeform"):
        sample_path("freeform")


# -- provenance: each sample record is a record of the source file SOURCES.md names --------------

SOURCE_FILES = {
    "gsm8k": ["gsm8k/test.jsonl"],
    "letter_cat": ["decomp_letter_cat/n3_eg100_pos2_semic.json"],
    "list_reversal": ["decomp_list_reversal/test_8_normal_words.json"],
    "commaqa": ["commaqa_e/iid_test_eg100.json"],
    "hotpotqa": ["hotpotqa/hotpot_dev_distractor_subset.jsonl"],
    "2wiki": ["2wikimultihopqa/2wiki_dev_subset.jsonl"],
    "musique": ["musique/musique_ans_dev_subset.jsonl"],
    "fever": [f"fever/hgot_test_{s}.csv" for s in ("long", "medium", "short")],
    "open_squad": [f"open_squad/hgot_test_{s}.csv" for s in ("long", "medium", "short")],
    "game24": ["game24/24.csv"],
    "crosswords": ["crosswords_mini5x5/mini0505.json"],
    "commongen": ["commongen_hard/commongen_hard.jsonl"],
}


@pytest.mark.parametrize("name", sorted(SOURCE_FILES))
def test_sample_records_are_the_sources_records_unchanged(name):
    sample = sample_path(name)
    packaged = sorted(_files(sample)) if sample.is_dir() else [sample]
    assert len(packaged) == len(SOURCE_FILES[name])
    for mine, rel in zip(packaged, sorted(SOURCE_FILES[name])):
        source = data_file(*rel.split("/"))
        assert mine.name == source.name
        records, theirs = _records(mine), _records(source)
        assert records and all(r in theirs for r in records), mine


def _records(path: Path) -> list:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if path.suffix == ".csv":
        return list(csv.DictReader(io.StringIO(text, newline="")))
    data = json.loads(text)
    if isinstance(data, list):  # crosswords: a list of puzzles
        return data
    return [(key, json.dumps(qa, sort_keys=True), block.get("passage"))  # DROP-style: key, question, facts
            for key, block in data.items() for qa in block["qa_pairs"]]


def test_outline_sample_is_the_seed_outlines():
    assert sample_path("outline").name == "outlines.txt"
    assert len(tasks.get("outline").load(sample_path("outline"))) == len(tasks.get("outline").load("seed"))


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
