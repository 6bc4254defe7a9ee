"""Open-domain multi-hop QA: HotpotQA, 2WikiMultihopQA, MuSiQue.

Questions come with their reading-comprehension paragraphs; in the
open-domain setting (DecomP §4.4, appendix A.1) the paragraphs of all loaded
questions are pooled into one corpus and a strategy must retrieve from it.
The retriever comes from ``--index DIR``; without one, the eval runner
indexes the loaded file's pooled, deduplicated paragraphs with BM25 (the
paper's corpus construction), named by :meth:`PooledCorpus.pooled_corpus`,
so every strategy on the task retrieves from the same corpus. That pooled
index follows title links by default (:data:`POOLED_INDEX`,
:mod:`thoughtloom.retrieval.links`): over the HotpotQA subset's pool it lifts
recall_all@10 from 0.715 to 0.863 (docs/retrieval.md); a suite dataset's
``index`` replaces the default (``{ links = { seeds = 0 } }``: plain BM25).

Accepted files (one JSON object per line), read by
:mod:`thoughtloom.retrieval.qa_records`:

* official HotpotQA / 2Wiki schema: ``_id``, ``question``, ``answer``,
  ``context`` = ``[[title, [sentence, ...]], ...]``;
* MuSiQue: ``id``, ``question``, ``answer``, ``answer_aliases``,
  ``paragraphs`` = ``[{title, paragraph_text}, ...]``;
* IRCoT processed format: ``question_id``, ``question_text``,
  ``answers_objects``, ``contexts``.

Metrics: EM and token F1 (SQuAD normalization), the best over the answer and
its aliases, by each benchmark's official script: 2WikiMultihopQA's
``2wikimultihop_evaluate_v1.1.py`` (HotpotQA's rule: F1 = 0 when a yes / no /
noanswer side differs, :func:`~.metrics.hotpot_f1`), MuSiQue's
``metrics/answer.py`` (SQuAD v2.0's rule, :func:`~.metrics.token_f1`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ..core.errors import DataError
from ..core.types import Problem
from ..retrieval.qa_records import read_qa_record, schema_of
from .base import CorpusFile, Example, Task, read_jsonl
from .metrics import exact_match, hotpot_f1, token_f1


#: The pooled index's build settings when nothing says otherwise: BM25, then title links from the
#: top 3 passages (:mod:`thoughtloom.retrieval.links`; no model call). Our choice, not the papers'
#: (they retrieve with BM25 or ColBERT over larger corpora): on the pools our suites build it lifts
#: recall_all@10 from 0.715 to 0.863 (HotpotQA) and 0.392 to 0.821 (2Wiki), docs/retrieval.md.
POOLED_INDEX: Mapping[str, Any] = {"links": {"seeds": 3}}


def _settings_text(index: Mapping[str, Any]) -> str:
    return json.dumps(dict(index), sort_keys=True)


class PooledCorpus:
    """Mixin for tasks whose data files carry paragraphs: remembers the file
    ``load`` read and its schema, for :meth:`Task.pooled_corpus`."""

    _pooled: CorpusFile | None = None

    def remember_source(self, path: str | Path, first_record: dict | None) -> None:
        """``first_record`` tells the file's schema (IRCoT's layout or the dataset's own)."""
        self._pooled = None if first_record is None else CorpusFile(
            Path(path), schema_of(first_record), settings=_settings_text(POOLED_INDEX))

    def pooled_corpus(self) -> CorpusFile | None:
        return self._pooled

    def pool_with(self, extra: tuple[Path, ...], index: Mapping[str, Any] | None = None) -> None:
        """Pool more corpus files with the loaded file's paragraphs (a suite's dataset ``corpus``), indexed
        with ``index``'s build settings (a suite dataset's ``index``, e.g. ``{"links": {"seeds": 0}}``
        for plain BM25) in place of :data:`POOLED_INDEX`; no ``index``: the default stays."""
        if self._pooled is not None:
            settings = _settings_text(index) if index else self._pooled.settings
            self._pooled = self._pooled._replace(extra=tuple(extra), settings=settings)


class OpenDomainQA(PooledCorpus, Task):
    instruction = "Answer the question with a short answer (a name, date, number or yes/no)."
    primary_metric = "em"
    metrics = ("em", "f1")
    open_domain = True

    f1 = staticmethod(token_f1)  # the benchmark's official F1 (see the module docstring)

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        return {"em": exact_match(prediction, gold), "f1": round(self.f1(prediction, gold), 6)}

    def load(self, path: str | Path) -> list[Example]:
        examples, first = [], None
        for lineno, rec in read_jsonl(path):
            where = f"{path}:{lineno}"
            first = first or rec
            qa = read_qa_record(rec, where)
            if not qa.paragraphs:
                raise DataError(f"{where}: no paragraphs ('context', 'contexts' or 'paragraphs')")
            examples.append(Example(Problem(f"{self.name}-{qa.id or where}", qa.question), list(qa.answers)))
        self.remember_source(path, first)
        return examples


class TwoWiki(OpenDomainQA):
    name = "2wiki"
    f1 = staticmethod(hotpot_f1)


class MuSiQue(OpenDomainQA):
    name = "musique"
