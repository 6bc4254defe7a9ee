"""Factuality benchmarks of the HGOT paper: HotpotQA, FEVER, Open-SQuAD.

Each task accepts the paper's CSVs (``hgot_{split}_{short,medium,long}.csv``
with ``Question, Answer[, Question Length]``) — one file, or a folder, in
which case the three ``hgot_test_*`` files are read — and the datasets'
own files (HotpotQA dev JSONL with paragraphs, IRCoT JSONL, the 7,405-row
question CSV; FEVER JSONL incl. FEVER-Symmetric; the Open-SQuAD question
CSV).

Length strata (``meta['stratum']``): a paper CSV names its stratum (the authors
already drew it); for any other file the stratum comes from the question's token
length over the whole file, as §4 (:mod:`.stratify`): above the ``long_pct``
percentile long, at or below ``short_pct`` short, the rest medium (HotpotQA 98/2,
FEVER and Open-SQuAD 98.5/1.5); with ``draw_strata`` (a reproduction suite's
``strata = true``) each stratum is then capped at ``short_pct``% of the file by a
random draw (seed 42), so the medium stratum is "randomly selected".
Examples are returned interleaved long, medium, short (medium shuffled with seed
42), so ``--limit 3n`` evaluates n of each stratum. ``meta['strata_sizes']``
holds the three strata's sizes in the loaded slice; :meth:`report` gives Long /
Medium / Short / Overall per metric, Overall weighting the strata by those sizes,
like the paper's Table 2.
"""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..core.errors import ConfigError, DataError
from ..core.types import Demo, Problem
from ..core.files import csv_rows
from ..retrieval.qa_records import read_qa_record
from .fever_label import read_fever_label
from .base import Example, Task, _must_exist, read_jsonl, require
from .metrics import exact_match, hotpot_f1, squad_f1
from .odqa import PooledCorpus
from .stratify import length_strata, question_length, select_strata, stratified_means

_STRATUM_IN_NAME = re.compile(r"_(short|medium|long)(?:_augmented)?\.csv$")
STRATA = ("long", "medium", "short")


def interleave(examples: Sequence[Example], seed: int = 42) -> list[Example]:
    """Round-robin over long, medium (shuffled), short."""
    groups = {s: [e for e in examples if e.problem.meta.get("stratum") == s] for s in STRATA}
    random.Random(seed).shuffle(groups["medium"])
    out: list[Example] = []
    while any(groups.values()):
        for s in STRATA:
            if groups[s]:
                out.append(groups[s].pop(0))
    return out


def _read_csv(path: Path) -> list[tuple[int, dict[str, str]]]:
    _must_exist(path)
    return list(csv_rows(path, ("Question", "Answer")))


class FactTask(Task):
    """Shared loading, stratification and reporting."""

    open_domain = True
    long_pct: float = 98.0
    short_pct: float = 2.0
    primary_metric = "em"
    metrics = ("em", "f1")
    # §4's draw: each stratum of a file without strata drawn to short_pct% of it (the HGOT
    # suites, ``strata = true``); off, every question is kept with its stratum
    draw_strata: bool = False

    def load(self, path: str | Path) -> list[Example]:
        path = Path(path)
        if path.is_dir():
            files = [path / f"hgot_test_{s}.csv" for s in STRATA]
            missing = [str(f) for f in files if not f.is_file()]
            if missing:
                raise ConfigError(f"{path} is a folder without the paper's test CSVs: {missing}",
                                  hint="pass a data file with --data")
            examples = [e for f in files for e in self._load_file(f)]
        else:
            examples = self._load_file(path)
        if any("stratum" not in e.problem.meta for e in examples):
            strata = length_strata([question_length(e.problem.question) for e in examples],
                                   long_pct=self.long_pct, short_pct=self.short_pct)
            keep = select_strata(strata, self.short_pct / 100) if self.draw_strata else range(len(examples))
            examples = [Example(Problem(examples[i].problem.id, examples[i].problem.question,
                                        examples[i].problem.context,
                                        {**examples[i].problem.meta, "stratum": strata[i]}), examples[i].gold)
                        for i in keep]
        sizes = {s: sum(e.problem.meta["stratum"] == s for e in examples) for s in STRATA}
        examples = [Example(Problem(e.problem.id, e.problem.question, e.problem.context,
                                    {**e.problem.meta, "strata_sizes": sizes}), e.gold) for e in examples]
        return interleave(examples)

    def _load_file(self, path: Path) -> list[Example]:
        if path.suffix == ".csv":
            m = _STRATUM_IN_NAME.search(path.name)
            meta = {"stratum": m.group(1)} if m else {}
            out = []
            for lineno, row in _read_csv(path):
                where = f"{path}:{lineno}"
                q = row["Question"].strip()
                if not q:
                    raise DataError(f"{where}: empty Question")
                out.append(Example(Problem(f"{self.name}-{path.stem}-{lineno}", q, meta=dict(meta)),
                                   self.parse_gold(row["Answer"], where)))
            return out
        return self.load_jsonl(path)

    def parse_gold(self, raw: str, where: str) -> Any:
        return raw.strip()

    def load_jsonl(self, path: Path) -> list[Example]:
        raise ConfigError(f"task {self.name!r} cannot read {path.name}", hint="pass one of the paper's CSVs")

    # the benchmark's official F1 (see tasks.metrics): HotpotQA's, or SQuAD v1.1's for Open-SQuAD
    f1 = staticmethod(hotpot_f1)

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        answers = gold["answers"] if isinstance(gold, dict) else gold
        return {"em": exact_match(prediction, answers), "f1": self.f1(prediction, answers)}

    def report(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Long / Medium / Short means and Table 2's Overall: the strata weighted by their
        sizes in the loaded slice (``meta['strata_sizes']``), whatever share of them ran."""
        metas = [r.get("meta") or {} for r in records]
        strata = [m.get("stratum", "medium") for m in metas]
        sizes = strata_sizes(metas)
        out: dict[str, Any] = {}
        for metric in self.metrics:
            values = [float(r["metrics"].get(metric, 0.0)) for r in records]
            out[metric] = stratified_means(strata, values, sizes)
        return {"strata": out}



def strata_sizes(metas: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Each stratum's size in the loaded slice (``meta['strata_sizes']``, what the loader wrote),
    from the first record meta that holds it; None: unknown."""
    return next((m["strata_sizes"] for m in metas if isinstance(m.get("strata_sizes"), dict)), None)

class HotpotQA(PooledCorpus, FactTask):
    """HotpotQA: the paper's CSVs (questions only) or dev JSONL with paragraphs.

    Scored as HotpotQA's official ``hotpot_evaluate_v1.py``: EM and F1 after
    SQuAD normalization, F1 = 0 when the prediction or the gold is yes / no /
    noanswer and they differ (:func:`~.metrics.hotpot_f1`).

    From a JSONL file (HotpotQA's or IRCoT's schema) the paragraphs of all
    questions are pooled, so an eval without ``--index`` retrieves from them
    (see :class:`~.odqa.PooledCorpus`).
    """

    name = "hotpotqa"
    instruction = "Answer the question with a short factoid answer."

    def demos(self) -> Sequence[Demo]:
        return (Demo("Which city is the capital of the country where the Eiffel Tower stands?", "Paris",
                     "The Eiffel Tower is in France. The capital of France is Paris."),
                Demo("Who was born first, Ada Lovelace or Charles Babbage?", "Charles Babbage",
                     "Babbage was born in 1791 and Lovelace in 1815, so Babbage was born first."))

    def load_jsonl(self, path: Path) -> list[Example]:
        out, first = [], None
        for lineno, rec in read_jsonl(path):
            first = first or rec
            qa = read_qa_record(rec, f"{path}:{lineno}")
            qid = lineno if qa.id is None else qa.id
            out.append(Example(Problem(f"hotpotqa-{qid}", qa.question),
                               {"answers": list(qa.answers), "support": sorted(set(qa.supporting or ()))}))
        self.remember_source(path, first)
        return out


FEVER_LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
FEVER_SUFFIX = ' Kindly answer with "SUPPORTS", "REFUTES", or "NOT ENOUGH INFO".'


class FEVER(FactTask):
    name = "fever"
    instruction = 'Verify the claim. Answer with exactly one of "SUPPORTS", "REFUTES" or "NOT ENOUGH INFO".'
    long_pct, short_pct = 98.5, 1.5
    metrics = ("em",)

    def demos(self) -> Sequence[Demo]:
        return (Demo("The Moon orbits the Earth." + FEVER_SUFFIX, "SUPPORTS"),
                Demo("Paris is the capital of Germany." + FEVER_SUFFIX, "REFUTES"),
                Demo("A baker in Lyon owns a blue bicycle." + FEVER_SUFFIX, "NOT ENOUGH INFO"))

    def extract_answer(self, text: str) -> str | None:
        """The label the reply states, negation and "not enough information" read
        (:func:`~.fever_label.read_fever_label`); every method's answers come through here."""
        return read_fever_label(text)

    def normalize(self, answer: str) -> str:
        return answer.strip().upper()

    def parse_gold(self, raw: str, where: str) -> Any:
        label = raw.strip().upper()
        if label not in FEVER_LABELS:
            raise DataError(f"{where}: label {raw!r} is not one of {FEVER_LABELS}")
        return label

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        """Label accuracy as the FEVER scorer's ``is_correct_label`` (sheffieldnlp/fever-scorer):
        the labels compared in upper case. (FEVER's strict score also needs the evidence
        sentences, which no strategy here predicts; the HGOT paper reports this accuracy as EM.)"""
        return {"em": float((prediction or "").strip().upper() == gold)}

    def load_jsonl(self, path: Path) -> list[Example]:
        out = []
        for lineno, rec in read_jsonl(path):
            where = f"{path}:{lineno}"
            claim = require(rec, "claim", where).strip()
            label = rec.get("label", rec.get("gold_label"))
            if not isinstance(label, str):
                raise DataError(f"{where}: missing field 'label'")
            out.append(Example(Problem(f"fever-{rec.get('id', lineno)}-{lineno}", claim + FEVER_SUFFIX),
                               self.parse_gold(label, where)))
        return out


class OpenSQuAD(FactTask):
    """Open-SQuAD: scored as SQuAD v1.1's official ``evaluate-v1.1.py`` (EM and token F1,
    the best over the gold answers; :func:`~.metrics.squad_f1`)."""

    name = "open_squad"
    f1 = staticmethod(squad_f1)
    instruction = "Answer the question with a short factoid answer."
    long_pct, short_pct = 98.5, 1.5

    def parse_gold(self, raw: str, where: str) -> Any:
        """Answers are a Python list literal; parsed with ast.literal_eval (never eval)."""
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        answers = [value] if isinstance(value, str) else list(value)
        if not answers or not all(isinstance(a, str) for a in answers):
            raise DataError(f"{where}: Answer should be a list of strings, got {raw[:80]!r}")
        return answers


