"""Thought quality and passage quality (HGOT §3.2–3.3).

Notation (ours, following the paper): a *thought* t is one sampled rationale
with its answer; its rationale splits into statements s_1..s_m, each citing
a set C(s) of passages from the K passages P = (p_1..p_K) in the prompt.
``E(premise, hypothesis)`` is the entailment judge (the core ``Entailment``
protocol); a pair counts as entailed when E >= ``threshold`` (0.5).

All entailment pairs a question needs are collected first and sent to the
judge in ONE ``judge`` call (deduplicated), so a remote or model-based
judge sees them as one batch and its cache sees each pair once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from ...core.protocols import Entailment
from ...core.trace import Trace

_CITE = re.compile(r"\[(\d{1,6}(?:\s*,\s*\d{1,6})*)\]")  # bounded digits: int() stays cheap
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
# markers written after the sentence's end ("... Spielberg. [1] He was ..."): moved before it
_CITE_AFTER_END = re.compile(r"([.!?])((?:\s*\[\d{1,6}(?:\s*,\s*\d{1,6})*\])+)")


@dataclass(frozen=True)
class Statement:
    text: str  # the sentence without its citation markers
    cites: tuple[int, ...]  # 0-based indices into the prompt's passages


def split_statements(rationale: str, n_passages: int) -> list[Statement]:
    """Split a rationale into sentences and read each one's ``[i]`` markers.

    ``[2]``, ``[1][3]`` and ``[1, 3]`` are all accepted; markers are 1-based
    in the text and 0-based here. Markers outside ``1..n_passages`` are
    dropped (a model citing passage [9] of 5 cites nothing real). A marker
    after the period (``Spielberg. [1] He was born``) belongs to the sentence
    it follows, not to the next one.
    """
    out = []
    text = _CITE_AFTER_END.sub(r"\2\1", " ".join(rationale.split()))
    for sent in _SENT_END.split(text):
        cites: list[int] = []
        for group in _CITE.findall(sent):
            for num in group.split(","):
                i = int(num) - 1
                if 0 <= i < n_passages and i not in cites:
                    cites.append(i)
        clean = " ".join(_CITE.sub("", sent).split()).replace(" .", ".")
        if re.search(r"\w", clean):
            out.append(Statement(clean, tuple(cites)))
    return out


@dataclass(frozen=True)
class CitationScores:
    recall: float
    precision: float
    # passage index -> number of statements that cite it (explicitly, or,
    # with expansion, because that passage alone entails the statement)
    cited_by: Mapping[int, int] = field(default_factory=dict)


def _concat(passages: Sequence[str], idx: Iterable[int]) -> str:
    return "\n".join(passages[i] for i in idx)


def entailment_pairs(statements: Sequence[Statement], passages: Sequence[str], *,
                     expand: bool) -> set[tuple[str, str]]:
    """Every (premise, hypothesis) pair :func:`citation_scores` will look up."""
    pairs: set[tuple[str, str]] = set()
    for s in statements:
        if s.cites:
            pairs.add((_concat(passages, s.cites), s.text))
            if len(s.cites) > 1:
                for c in s.cites:
                    pairs.add((passages[c], s.text))
                    pairs.add((_concat(passages, [d for d in s.cites if d != c]), s.text))
        if expand:
            for p in passages:
                pairs.add((p, s.text))
    return pairs


def citation_scores(statements: Sequence[Statement], passages: Sequence[str],
                    entailed: Mapping[tuple[str, str], bool], *, expand: bool) -> CitationScores:
    """ALCE citation recall and precision of one thought (Gao et al. 2023).

    Recall — the share of statements fully supported by their citations::

        recall = (1/m) * sum_s  1[ C(s) != {} and E(concat(C(s)), s) ]

    Precision — the share of citations that are needed. A citation c of a
    statement s is *irrelevant* when the statement is supported by all its
    citations, c alone does not entail s, and the other citations still do::

        irrelevant(c, s) = E(concat(C(s)), s) and not E(c, s) and E(concat(C(s) - {c}), s)
        precision = sum_s sum_{c in C(s)} 1[ E(concat(C(s)), s) and not irrelevant(c, s) ]
                    / sum_s |C(s)|

    (a citation of an unsupported statement counts as not precise, as in
    ALCE). A thought with no statements scores 0 / 0; one with no citations
    has precision 0.

    ``cited_by`` counts, per passage, the statements citing it — the
    citation indicator of §3.3. With ``expand`` (the authors' code does
    this), a passage that alone entails a statement counts as cited by it
    even without a marker.
    """
    m = len(statements)
    supported = 0
    n_cites = 0
    precise = 0
    cited_by: dict[int, int] = {}
    for s in statements:
        indicator = set(s.cites)
        if s.cites:
            ok = entailed[(_concat(passages, s.cites), s.text)]
            supported += ok
            n_cites += len(s.cites)
            for c in s.cites:
                if not ok:
                    continue
                if len(s.cites) == 1:
                    precise += 1
                    continue
                alone = entailed[(passages[c], s.text)]
                rest = entailed[(_concat(passages, [d for d in s.cites if d != c]), s.text)]
                precise += int(alone or not rest)
        if expand:
            indicator |= {i for i, p in enumerate(passages) if entailed[(p, s.text)]}
        for i in indicator:
            cited_by[i] = cited_by.get(i, 0) + 1
    return CitationScores(
        recall=supported / m if m else 0.0,
        precision=precise / n_cites if n_cites else 0.0,
        cited_by=cited_by,
    )


async def judge_pairs(entail: Entailment, pairs: Iterable[tuple[str, str]], *, threshold: float,
                      trace: Trace | None = None) -> dict[tuple[str, str], bool]:
    """Send all pairs to the judge in one call; the verdict per pair."""
    unique = sorted(set(pairs))
    if not unique:
        return {}
    probs = await entail.judge(unique)
    if trace is not None:
        trace.emit("entailment", pairs=len(unique), entailed=sum(p >= threshold for p in probs))
    return {pair: p >= threshold for pair, p in zip(unique, probs)}


def thought_quality(recall: float, precision: float, alpha: float, beta: float, gamma: float) -> float:
    """Thought quality q(t), the vote weight of thought t (HGOT §3.2)::

        q(t) = alpha * 1 + beta * recall(t) + gamma * precision(t)

    i.e. the dot product (1, recall, precision) . (alpha, beta, gamma). The
    constant term keeps a thought with no supported citation in the vote.
    With (alpha, beta, gamma) = (1, 0, 0) every q(t) = 1 and weighted voting
    is plain self-consistency. Paper default: (0.2, 0.4, 0.4).
    """
    return alpha + beta * recall + gamma * precision


def citation_frequency(cited_by: Sequence[Mapping[int, int]], qualities: Sequence[float],
                       n_passages: int) -> list[float]:
    """Quality-weighted citation frequency of each passage, max-normalized (§3.3)::

        f(p_i)  = sum_t q(t) * #{ s in t : p_i cites-or-entails s }
        f~(p_i) = f(p_i) / max_j f(p_j)        (0 for all when max_j f(p_j) = 0)

    so the most-cited passage of the retrieval set scores exactly 1.
    """
    freq = [0.0] * n_passages
    for counts, q in zip(cited_by, qualities):
        for i, c in counts.items():
            if 0 <= i < n_passages:
                freq[i] += q * c
    top = max(freq, default=0.0)
    return [f / top for f in freq] if top > 0 else freq


def passage_quality(score: float, cite_freq: float, confidence: float,
                    w1: float, w2: float, w3: float) -> float:
    """Updated passage quality after one Infer step (§3.3)::

        s'(p) = w1 * s(p) + w2 * f~(p) + w3 * conf

    where s(p) is the passage's current quality (at the first level, 1/rank in its
    retrieval set, see :func:`rank_scores`), f~(p) its normalized quality-weighted
    citation frequency and conf the self-consistency confidence of the
    selected answer. Applied level by level, each Infer refines the scores
    the next level starts from. Paper default (w1, w2, w3) = (0.2, 0.55, 0.25).
    """
    return w1 * score + w2 * cite_freq + w3 * confidence


def rank_scores(n: int) -> list[float]:
    """Initial passage quality of one retrieval set from its ranking (§3.3: "the retrieval
    module's ranking"): the passage at position i (1-based) scores 1/i, as the authors' search
    module scores its i-th organic result ``1/position``. The retriever's raw scores play no
    part: BM25 scores 14.2 / 13.6 / 13.1 become 1, 1/2, 1/3, not 1 / 0.958 / 0.923, so rank
    keeps its weight in passage quality whatever the retriever's scale."""
    return [1.0 / i for i in range(1, n + 1)]
