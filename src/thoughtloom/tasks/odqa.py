"""Open-domain multi-hop QA: HotpotQA, 2WikiMultihopQA, MuSiQue.

Questions come with their reading-comprehension paragraphs; in the
open-domain setting (DecomP §4.4, appendix A.1) the paragraphs of all loaded
questions are pooled into one corpus and a strategy must retrieve from it.
The real retriever comes from ``--index DIR`` (the retrieval package). If
none is given, :meth:`PooledCorpus.default_retriever` builds a BM25 index
(the retrieval package's, in a temporary folder) over the pooled,
deduplicated paragraphs of the loaded file — the paper's corpus
construction — and strategies trace ``source="task"`` when they use it.

Accepted files (one JSON object per line):

* official HotpotQA / 2Wiki schema: ``_id``, ``question``, ``answer``,
  ``context`` = ``[[title, [sentence, ...]], ...]``;
* MuSiQue: ``id``, ``question``, ``answer``, ``answer_aliases``,
  ``paragraphs`` = ``[{title, paragraph_text}, ...]``;
* IRCoT processed format: ``question_id``, ``question_text``,
  ``answers_objects``, ``contexts``.

Metrics: EM and token F1 (SQuAD normalization) against the answer and its
aliases.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, ClassVar

from ..core.errors import DataError
from ..core.protocols import Retriever
from ..core.types import Problem
from .base import Example, Task, read_jsonl, require
from .metrics import exact_match, token_f1


class PooledCorpus:
    """Mixin for tasks whose data files carry paragraphs.

    Remembers the file ``load`` read; :meth:`default_retriever` indexes its
    pooled paragraphs with BM25 on first use (once per task object).
    """

    corpus_format: ClassVar[str] = "auto"
    _source: Path | None = None
    _source_format: str = "auto"
    _retriever: Retriever | None = None

    def remember_source(self, path: str | Path, first_record: dict | None) -> None:
        """``first_record`` tells the IRCoT layout from the dataset's own."""
        ircot = first_record is not None and "question_text" in first_record
        self._source, self._retriever = Path(path), None
        self._source_format = "ircot" if ircot else self.corpus_format

    def default_retriever(self) -> Retriever | None:
        if self._retriever is None and self._source is not None:
            from ..retrieval import build_index, open_index, read_corpus

            corpus = read_corpus([self._source], self._source_format)
            folder = Path(tempfile.mkdtemp(prefix=f"thoughtloom-{self._source.stem}-"))
            build_index(corpus, "bm25", folder)
            self._retriever = open_index(folder)
        return self._retriever


class OpenDomainQA(PooledCorpus, Task):
    instruction = "Answer the question with a short answer (a name, date, number or yes/no)."
    primary_metric = "em"

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        return {"em": exact_match(prediction, gold), "f1": round(token_f1(prediction, gold), 6)}

    def load(self, path: str | Path) -> list[Example]:
        examples, first = [], None
        for lineno, rec in read_jsonl(path):
            where = f"{path}:{lineno}"
            first = first or rec
            qid, question, golds, paras = self._parse(rec, where)
            if not paras:
                raise DataError(f"{where}: no paragraphs")
            examples.append(Example(Problem(f"{self.name}-{qid}", question), golds))
        self.remember_source(path, first)
        return examples

    def _parse(self, rec: dict, where: str) -> tuple[str, str, list[str], list[tuple[str, str]]]:
        if "question_text" in rec:  # IRCoT processed format
            golds = [s for a in require(rec, "answers_objects", where, list) for s in a.get("spans", [])]
            paras = [(c.get("title", ""), c.get("paragraph_text", "")) for c in rec.get("contexts", [])]
            return str(rec.get("question_id")), require(rec, "question_text", where), golds, paras
        question = require(rec, "question", where)
        golds = [str(require(rec, "answer", where, (str, int, float)))]
        golds += [str(a) for a in rec.get("answer_aliases", []) or []]
        if "paragraphs" in rec:  # MuSiQue
            paras = [(p.get("title", ""), p.get("paragraph_text", "")) for p in rec["paragraphs"]]
        elif "context" in rec:  # HotpotQA / 2Wiki
            paras = [(t, " ".join(s.strip() for s in sents)) for t, sents in rec["context"]]
        else:
            raise DataError(f"{where}: no paragraphs ('context' or 'paragraphs')")
        qid = str(rec.get("_id") or rec.get("id") or where)
        return qid, question, golds, paras


class TwoWiki(OpenDomainQA):
    name = "2wiki"
    corpus_format = "2wiki"


class MuSiQue(OpenDomainQA):
    name = "musique"
    corpus_format = "musique"
