"""Where each task's data comes from: the file ``--data`` takes, the packaged sample, the full set.

Every benchmark task ships a sample of a few dozen examples inside the
package (``tasks/data/samples/``; origins, licences and the records taken
are in its ``SOURCES.md``), so that an eval runs with no data of one's own:
without ``--data`` (``data=None`` in :func:`thoughtloom.evaluate`) the
task's sample is used and the run's summary says so (``data_sample``).
A sample keeps its source file's name, format and records, so the same task
loader reads it and the full set.

:data:`CATALOGUE` describes, per task, the format a data file must have,
the sample and where the full set comes from (``thoughtloom data list``).
:func:`load_examples` is the one way the CLI and the Python API turn a task
and an optional ``--data`` into the examples to run.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Sequence

from ..core.errors import ConfigError
from .base import Example, Task, check_sizes

#: Raw files on GitHub, pinned at the commits the samples were taken from.
_DECOMP = "https://raw.githubusercontent.com/allenai/DecomP/8b157f6fe9ff5676ae51bd054f1df7b015adf278/datasets"
_TOT = "https://raw.githubusercontent.com/princeton-nlp/tree-of-thought-llm/ab400345c5ea39d28ea6d7d3be0e417b11113c87/src/tot/data"
_HGOT = "https://raw.githubusercontent.com/fangyihao/hgot/43c6810b4cb6a8d19ee5f5f4d8abf255d7509f75/data"
#: The official HotpotQA and 2Wiki files are one JSON list; the loaders read one record per line.
_TO_JSONL = ("python -c \"import json,sys; [print(json.dumps(r)) for r in json.load(open(sys.argv[1]))]\" "
             "{src} > {dst}")


@dataclass(frozen=True)
class TaskData:
    """What one task reads and where to get it."""

    task: str
    format: str  # the file (or folder) --data takes, with its fields
    sample: str | None  # the packaged sample, relative to tasks/data/; None when none is shipped
    licence: str  # of the sample, and of the full set it comes from
    full_set: str  # what the full set is and where it lives
    get: tuple[str, ...]  # shell commands that fetch it and point --data at it
    note: str = ""  # e.g. why no sample is shipped


_CSV_STRATA = ("a CSV with columns Question, Answer[, Question Length] (one of the HGOT paper's "
               "hgot_{split}_{short,medium,long}.csv), or a folder holding the three hgot_test_*.csv files")

CATALOGUE: dict[str, TaskData] = {d.task: d for d in (
    TaskData("freeform", "none: the question is given to `thoughtloom run`", None, "-", "no data set", (),
             note="a task for single questions, with no data file"),
    TaskData("qa", "JSONL, a JSON list or CSV/TSV with a header: the question in --input-field (default "
                   "question), the gold answer in --gold-field (default answer; in JSON a list of acceptable "
                   "answers too), an optional id; scored by --metric (em, f1, contains, numeric, choice or "
                   "MODULE:FUNCTION)", None, "yours", "your own data set",
             ("thoughtloom eval --task qa --data my.jsonl --metric contains ...",),
             note="a task for your own data: it ships no sample"),
    TaskData(
        "gsm8k", "JSONL: question, answer (a worked solution whose last line is '#### N')",
        "samples/gsm8k/test.jsonl", "MIT",
        "GSM8K test, 1,319 problems: github.com/openai/grade-school-math (Hugging Face: openai/gsm8k)",
        ("curl -LO https://raw.githubusercontent.com/openai/grade-school-math/"
         "3101c7d5072418e28b9008a6636bde82a006892c/grade_school_math/data/test.jsonl",
         "thoughtloom eval --task gsm8k --data test.jsonl ...")),
    TaskData(
        "multiarith", "JSON list of objects: sQuestion, lSolutions (numbers); iIndex optional", None,
        "none stated",
        "MultiArith, 600 problems (Roy & Roth 2015), as shipped by github.com/kojima-takeshi188/zero_shot_cot",
        ("curl -LO https://raw.githubusercontent.com/kojima-takeshi188/zero_shot_cot/"
         "5ef330fcdeec0cd26aee27943504f91f8ec1c33c/dataset/MultiArith/MultiArith.json",
         "thoughtloom eval --task multiarith --data MultiArith.json ..."),
        note="its source states no licence, so none is redistributed; check its terms before use"),
    TaskData(
        "letter_cat", "DecomP's DROP-style JSON: {key: {qa_pairs: [{question, answer: {spans: [gold]}, "
                      "query_id, words}]}}",
        "samples/letter_cat/n3_eg100_pos2_semic.json", "Apache-2.0",
        "DecomP's k-th letter concatenation, 6 files x 100 (n3/n4/n5 words, space/semicolon): "
        "github.com/allenai/DecomP datasets/letter_cat/",
        (f"curl -LO {_DECOMP}/letter_cat/n4_eg100_pos2_space.json",
         "thoughtloom eval --task letter_cat --data n4_eg100_pos2_space.json ...")),
    TaskData(
        "list_reversal", "DecomP's DROP-style JSON: {key: {qa_pairs: [{question, answer: {spans: [gold]}, "
                         "query_id}]}}",
        "samples/list_reversal/test_8_normal_words.json", "Apache-2.0",
        "DecomP's list reversal, 4 files x 90 (lists of 4, 6, 8, 10 words): "
        "github.com/allenai/DecomP datasets/reverse/",
        (f"curl -LO {_DECOMP}/reverse/test_10_normal_words.json",
         "thoughtloom eval --task list_reversal --data test_10_normal_words.json ...")),
    TaskData(
        "commaqa", "DROP-style JSON: {key: {passage: facts, qa_pairs: [{question, answer: {spans: [...]}, "
                   "query_id}]}}; 'compgen' in the file name marks the compositional split",
        "samples/commaqa/iid_test_eg100.json", "Apache-2.0",
        "CommaQA-E as DecomP evaluates it: iid_test_eg100.json and compgen_test_eg300.json, "
        "github.com/allenai/DecomP datasets/commaqa_e/",
        (f"curl -LO {_DECOMP}/commaqa_e/compgen_test_eg300.json",
         "thoughtloom eval --task commaqa --data compgen_test_eg300.json ...")),
    TaskData(
        "hotpotqa", "JSONL with paragraphs (HotpotQA's schema: _id, question, answer, supporting_facts, "
                    "context = [[title, [sentence, ...]], ...]; or IRCoT's) -- retrieval without --index "
                    f"uses their pooled paragraphs; or {_CSV_STRATA} (questions only: pass --index)",
        "samples/hotpotqa/hotpot_dev_distractor_subset.jsonl", "CC BY-SA 4.0",
        "HotpotQA dev (distractor), 7,405 questions: hotpotqa.github.io (Hugging Face: hotpotqa/hotpot_qa, "
        "which lays paragraphs out differently; use the official file)",
        ("curl -LO http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
         _TO_JSONL.format(src="hotpot_dev_distractor_v1.json", dst="hotpot_dev.jsonl"),
         "thoughtloom eval --task hotpotqa --data hotpot_dev.jsonl ...")),
    TaskData(
        "2wiki", "JSONL with paragraphs, 2WikiMultihopQA's schema: _id, question, answer, supporting_facts, "
                 "evidences, context = [[title, [sentence, ...]], ...]",
        "samples/2wiki/2wiki_dev_subset.jsonl", "Apache-2.0; paragraphs: Wikipedia, CC BY-SA",
        "2WikiMultihopQA dev, 12,576 questions: github.com/Alab-NII/2wikimultihop (dev.json, linked from "
        "its README)",
        ("# download dev.json from the link in github.com/Alab-NII/2wikimultihop's README, then",
         _TO_JSONL.format(src="dev.json", dst="2wiki_dev.jsonl"),
         "thoughtloom eval --task 2wiki --data 2wiki_dev.jsonl ...")),
    TaskData(
        "musique", "JSONL with paragraphs, MuSiQue's schema: id, question, answer, answer_aliases, "
                   "paragraphs = [{title, paragraph_text, is_supporting}, ...]",
        "samples/musique/musique_ans_dev_subset.jsonl", "CC BY 4.0",
        "MuSiQue-Ans dev, 2,417 questions: github.com/StonyBrookNLP/musique (its download_data.sh)",
        ("git clone https://github.com/StonyBrookNLP/musique && cd musique && bash download_data.sh",
         "thoughtloom eval --task musique --data data/musique_ans_v1.0_dev.jsonl ...")),
    TaskData(
        "fever", f"{_CSV_STRATA}; or FEVER JSONL (id, label, claim) incl. FEVER-Symmetric (gold_label)",
        "samples/fever", "CC BY-SA 3.0",
        "FEVER: fever.ai/dataset/fever.html (paper_dev.jsonl, paper_test.jsonl); the HGOT paper's "
        "length-stratified CSVs: github.com/fangyihao/hgot data/FEVER/",
        ("mkdir fever && for s in long medium short; do "
         f"curl -Lo fever/hgot_test_$s.csv {_HGOT}/FEVER/test_$s.csv; done",
         "thoughtloom eval --task fever --data fever ...")),
    TaskData(
        "open_squad", f"{_CSV_STRATA}; Answer is a Python list of acceptable answers",
        "samples/open_squad", "CC BY-SA 4.0",
        "Open-domain SQuAD v1.1 (DPR's squad1-test): the HGOT paper's CSVs, "
        "github.com/fangyihao/hgot data/Open-SQuAD/",
        ("mkdir open_squad && for s in long medium short; do "
         f"curl -Lo open_squad/hgot_test_$s.csv {_HGOT}/Open-SQuAD/test_$s.csv; done",
         "thoughtloom eval --task open_squad --data open_squad --index DIR ...")),
    TaskData(
        "game24", "CSV with a Puzzles column (four numbers, e.g. '4 9 10 13'); Rank names the example",
        "samples/game24/24.csv", "MIT",
        "Game of 24, 1,362 puzzles (ToT evaluates ranks 901-1000): github.com/princeton-nlp/tree-of-thought-llm",
        (f"curl -LO {_TOT}/24/24.csv", "thoughtloom eval --task game24 --data 24.csv --offset 900 --limit 100 ...")),
    TaskData(
        "crosswords", "JSON list of [clues (10: h1-h5, v1-v5), letters (25, row by row)] puzzles",
        "samples/crosswords/mini0505.json", "MIT",
        "5x5 mini crosswords, 156 puzzles (ToT evaluates indices 0, 5, ..., 95): "
        "github.com/princeton-nlp/tree-of-thought-llm",
        (f"curl -LO {_TOT}/crosswords/mini0505.json", "thoughtloom eval --task crosswords --data mini0505.json ...")),
    TaskData(
        "commongen", "JSONL: concepts (a list of words the text must use)",
        "samples/commongen/commongen_hard.jsonl", "Apache-2.0",
        "CommonGen-Hard, 200 concept sets: github.com/madaan/self-refine",
        ("curl -LO https://raw.githubusercontent.com/madaan/self-refine/9a206d41e5d2d0c241bb441f41eeadb945afaa55/"
         "data/prompt/commongen/commongen_hard.jsonl",
         "thoughtloom eval --task commongen --data commongen_hard.jsonl ...")),
    TaskData(
        "outline", ".txt of outlines (one item per line, outlines separated by blank lines, optional "
                   "'premise: ...' line) or JSONL with outline (list or lines) and optional premise",
        "outline_seeds.txt", "public domain; written for thoughtloom",
        "no public set: the paper's outlines were not released; write your own",
        ("thoughtloom eval --task outline --data my_outlines.txt ...",)),
)}


def data_info(task: str) -> TaskData:
    try:
        return CATALOGUE[task]
    except KeyError:
        raise ConfigError(f"no data description for task {task!r}",
                          hint=f"tasks with data: {', '.join(sorted(CATALOGUE))}") from None


def sample_path(task: str) -> Path:
    """The packaged sample of ``task``: a file, or a folder its loader reads."""
    info = data_info(task)
    if info.sample is None:
        raise ConfigError(f"task {task!r} has no packaged sample ({info.note or 'it reads no data file'})",
                          hint="pass --data FILE; `thoughtloom data list` says where to get it")
    where = resources.files(__package__).joinpath("data", *info.sample.split("/"))
    if not isinstance(where, Path):  # a zipped install: the task loaders read files by path
        raise ConfigError(f"the packaged sample of {task!r} is inside an archive ({where})",
                          hint="install thoughtloom as files (pip install), or pass --data FILE")
    return where


@dataclass(frozen=True)
class Dataset:
    """The examples a run evaluates, and where they came from."""

    examples: Sequence[Example]
    path: Path
    sample: bool  # the task's packaged sample (no data file was given)


def load_examples(task: Task, data: str | Path | None = None, *, offset: int = 0,
                  limit: int | None = None) -> Dataset:
    """``task``'s examples from ``data`` (its packaged sample when None), from ``offset``, at most ``limit``."""
    path = sample_path(task.name) if data is None else Path(data)
    examples = task.load(path)
    check_sizes(examples, path)
    if offset >= len(examples):
        raise ConfigError(f"offset {offset}: {path} has only {len(examples)} examples")
    examples = examples[offset:]
    return Dataset(examples if limit is None else examples[:limit], path, data is None)


__all__ = ["CATALOGUE", "Dataset", "TaskData", "data_info", "load_examples", "sample_path"]
