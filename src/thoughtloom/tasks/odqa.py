"""Open-domain multi-hop QA: HotpotQA, 2WikiMultihopQA, MuSiQue.

Questions come with their reading-comprehension paragraphs; in the
open-domain setting (DecomP §4.4, appendix A.1) the paragraphs of all loaded
questions are pooled into one corpus and a strategy must retrieve from it.
The real retriever comes from ``--index DIR`` (the retrieval package). If
none is given, :meth:`OpenDomainQA.default_retriever` offers a small BM25
over the pooled paragraphs of the loaded file (documented fallback; the
controller traces ``source="task"`` for it).

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

import hashlib
import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Sequence

from ..core.errors import DataError
from ..core.types import Passage, Problem, ScoredPassage
from .base import Example, Task, read_jsonl, require
from .metrics import exact_match, token_f1

_WORD = re.compile(r"\w+")
_STOP = frozenset("a an the of in on at to for by with from and or is was were are be been who what "
                  "which when where whose how did does do that this as it its his her their".split())


def _tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


class PooledBM25:
    """BM25 (k1=1.2, b=0.75) over a list of passages; a Retriever."""

    def __init__(self, passages: Sequence[Passage], k1: float = 1.2, b: float = 0.75) -> None:
        self.passages = list(passages)
        self.k1, self.b = k1, b
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._len = []
        for i, p in enumerate(self.passages):
            toks = _tokens(f"{p.title} {p.title} {p.text}")
            self._len.append(len(toks))
            for term, tf in Counter(toks).items():
                self._postings[term].append((i, tf))
        self._avg = sum(self._len) / max(1, len(self._len))
        n = len(self.passages)
        self._idf = {t: math.log(1 + (n - len(ps) + 0.5) / (len(ps) + 0.5)) for t, ps in self._postings.items()}

    async def search(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]:
        out = []
        for q in queries:
            scores: dict[int, float] = defaultdict(float)
            for term in set(_tokens(q)):
                idf = self._idf.get(term)
                if idf is None:
                    continue
                for i, tf in self._postings[term]:
                    norm = tf + self.k1 * (1 - self.b + self.b * self._len[i] / self._avg)
                    scores[i] += idf * tf * (self.k1 + 1) / norm
            best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
            out.append([ScoredPassage(self.passages[i], s, r) for r, (i, s) in enumerate(best)])
        return out


def _pid(dataset: str, title: str, text: str) -> str:
    digest = hashlib.sha1((title + "\n" + text).encode()).hexdigest()[:12]
    return f"{dataset}:{digest}"


class OpenDomainQA(Task):
    instruction = "Answer the question with a short answer (a name, date, number or yes/no)."
    primary_metric = "em"

    def __init__(self) -> None:
        self._passages: list[Passage] = []
        self._retriever: PooledBM25 | None = None

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        return {"em": exact_match(prediction, gold), "f1": round(token_f1(prediction, gold), 6)}

    def default_retriever(self) -> PooledBM25 | None:
        if self._retriever is None and self._passages:
            self._retriever = PooledBM25(self._passages)
        return self._retriever

    def corpus(self) -> list[Passage]:
        return list(self._passages)

    def load(self, path: str | Path) -> list[Example]:
        examples, pool = [], {}
        for lineno, rec in read_jsonl(path):
            where = f"{path}:{lineno}"
            qid, question, golds, paras = self._parse(rec, where)
            for title, text in paras:
                pid = _pid(self.name, title, text)
                pool.setdefault(pid, Passage(pid, text, title))
            examples.append(Example(Problem(f"{self.name}-{qid}", question), golds))
        self._passages, self._retriever = list(pool.values()), None
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


class HotpotQA(OpenDomainQA):
    name = "hotpotqa"


class TwoWiki(OpenDomainQA):
    name = "2wiki"


class MuSiQue(OpenDomainQA):
    name = "musique"
