"""Entailment judged by the language model: "must the hypothesis be true? yes or no".

Two ways to turn the model's answer into a probability:

- ``logprobs``: one greedy call per pair asking for the top token log
  probabilities; P(yes) is the mass of yes-like first tokens over the mass
  of yes-like and no-like ones. Backends that do not return logprobs (the
  embedded llama.cpp model unless built with ``logprobs=True``) fall back to
  votes.
- ``votes``: ``votes`` samples per pair at ``temperature``; P(yes) is the
  share of yes among the replies (a malformed reply counts as no).

``mode="auto"`` tries logprobs and falls back to votes pair by pair; the
greedy reply of the logprob probe counts as the first vote, so with the
default ``votes=1`` a backend without logprobs costs one call per pair
(a hard 0/1 verdict) and ``votes=5`` buys a graded probability. Every
request of a batch goes to the LM in one ``generate`` call. A reply that is
neither yes nor no is counted as malformed, traced (a ``malformed`` event,
``what: entailment``, one per reply) and treated as not entailed; a pair
with no readable reply at all gets 0.0.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..core.errors import ConfigError
from ..core.events import malformed
from ..core.options import Options, make, option
from ..core.protocols import LM
from ..core.trace import Trace
from ..core.types import Completion, Request
from .. import prompts
from .base import Judgement, JudgeStats, Pair

YES = frozenset({"yes", "true", "entailed", "entails", "entailment", "correct"})
NO = frozenset({"no", "false", "not", "contradiction", "neutral", "incorrect"})
_FIRST_WORD = re.compile(r"[a-z]+")


#: ``mode``: how a reply becomes a probability (module docstring).
MODES = ("auto", "logprobs", "votes")


@dataclass(frozen=True)
class LLMJudgeConfig(Options):
    """The LLM judge's options (``--entail llm:KEY=V,...``), declared like a strategy's
    (:mod:`thoughtloom.core.options`): the same coercer reads them and the same message refuses them."""

    mode: str = option("auto", choices=MODES)
    votes: int = option(1, min=1)
    temperature: float = option(0.7, min=0)
    top_logprobs: int = option(10, min=0)
    max_tokens: int = option(3, min=1)
    seed: int = 0

    @classmethod
    def from_spec(cls, spec: str) -> "LLMJudgeConfig":
        """``"mode=votes,votes=5"`` (the CLI's ``--entail llm:...``) -> a config."""
        values: dict[str, str] = {}
        for item in filter(None, (x.strip() for x in spec.split(","))):
            key, sep, raw = item.partition("=")
            if not sep:
                raise ConfigError(f"bad LLM judge option {item!r}",
                                  hint=f"use KEY=VALUE with KEY in {', '.join(cls.__dataclass_fields__)}")
            values[key.strip()] = raw.strip()
        return make(cls, values, owner="LLM judge")


def read_verdict(text: str) -> bool | None:
    """True for yes, False for no, None when the reply is neither."""
    match = _FIRST_WORD.search(text.lower())
    if match is None:
        return None
    word = match.group(0)
    if word in YES:
        return True
    if word in NO:
        return False
    return None


def prob_from_logprobs(completion: Completion) -> float | None:
    """P(yes) / (P(yes) + P(no)) at the first non-blank token, or None if not available."""
    if not completion.logprobs:
        return None
    for tok in completion.logprobs:
        if not tok.token.strip():
            continue
        options = dict(tok.top)
        options.setdefault(tok.token, tok.logprob)
        p_yes = p_no = 0.0
        for token, lp in options.items():
            verdict = read_verdict(token) if token.strip().isalpha() else None
            if verdict is True:
                p_yes += math.exp(lp)
            elif verdict is False:
                p_no += math.exp(lp)
        if p_yes + p_no <= 0.0:
            return None
        return p_yes / (p_yes + p_no)
    return None


@dataclass
class LLMJudge:
    """Asks ``lm`` whether each premise entails its hypothesis."""

    lm: LM
    config: LLMJudgeConfig = field(default_factory=LLMJudgeConfig)
    trace: Trace | None = None
    prompt_dir: str | Path | None = None
    stats: JudgeStats = field(default_factory=JudgeStats)

    @property
    def judge_id(self) -> str:
        c = self.config
        return f"llm:{self.lm.model_id}:{c.mode}:{c.votes}:{c.temperature}:{c.seed}"

    def bind(self, lm: LM, trace: Trace | None) -> "LLMJudge":
        """The same judge on a per-question LM (budget, usage) and trace."""
        return LLMJudge(lm, self.config, trace, self.prompt_dir, self.stats)

    def _prompt(self, premise: str, hypothesis: str) -> str:
        return prompts.render("entail", self.prompt_dir, premise=premise, hypothesis=hypothesis)

    def _request(self, pair: Pair, *, sample: int, logprobs: bool) -> Request:
        c = self.config
        return Request.of(self._prompt(*pair), max_tokens=c.max_tokens,
                          temperature=0.0 if logprobs else c.temperature, seed=c.seed,
                          sample_index=sample, logprobs=c.top_logprobs if logprobs else None)

    async def judge(self, pairs: Sequence[Pair]) -> list[float]:
        return [j.prob for j in await self.judge_detailed(pairs)]

    async def judge_detailed(self, pairs: Sequence[Pair]) -> list[Judgement]:
        pairs = list(pairs)
        if not pairs:
            return []
        mode = self.config.mode
        results: list[Judgement | None] = [None] * len(pairs)
        need_votes = list(range(len(pairs)))
        first_votes: dict[int, Completion] = {}  # auto: the probe's greedy reply is vote one
        if mode in ("auto", "logprobs"):
            completions = await self.lm.generate([self._request(p, sample=0, logprobs=True) for p in pairs])
            need_votes = []
            for i, comp in enumerate(completions):
                prob = prob_from_logprobs(comp)
                if prob is not None:
                    results[i] = Judgement(prob, "logprobs")
                elif mode == "logprobs":  # no logprobs: the greedy reply decides
                    results[i] = self._from_votes(pairs[i], [comp])
                else:
                    need_votes.append(i)
                    first_votes[i] = comp
        if need_votes:
            n = self.config.votes
            start = 1 if first_votes else 0
            requests = [self._request(pairs[i], sample=s, logprobs=False)
                        for i in need_votes for s in range(start, n)]
            completions = await self.lm.generate(requests) if requests else []
            per = n - start
            for j, i in enumerate(need_votes):
                votes = ([first_votes[i]] if i in first_votes else []) + completions[j * per:(j + 1) * per]
                results[i] = self._from_votes(pairs[i], votes)
        final = [r if r is not None else Judgement(0.0, "malformed") for r in results]
        self.stats.add(final)
        if self.trace is not None:
            self.trace.emit("entail", judge=self.judge_id, n=len(pairs),
                            probs=[round(j.prob, 4) for j in final], sources=[j.source for j in final])
        return final

    def _from_votes(self, pair: Pair, completions: Sequence[Completion]) -> Judgement:
        verdicts = [read_verdict(c.text) for c in completions]
        bad = sum(v is None for v in verdicts)
        if self.trace is not None:
            for c, v in zip(completions, verdicts):
                if v is None:
                    malformed(self.trace, "entailment", "no_verdict", c.text, hypothesis=pair[1][:200])
        # A malformed reply defaults to "not entailed": it votes no.
        yes = sum(v is True for v in verdicts)
        if bad == len(verdicts):
            return Judgement(0.0, "malformed", malformed=bad)
        return Judgement(yes / len(verdicts), "votes", malformed=bad)
