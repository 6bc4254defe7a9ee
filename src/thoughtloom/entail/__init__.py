"""Entailment (NLI) judges: P(premise entails hypothesis), batched and cacheable.

- :class:`LLMJudge` asks the configured LM (token logprobs when the backend
  returns them, else sampled votes).
- :class:`CrossEncoderJudge` runs a local sentence-transformers CrossEncoder
  NLI model (torch is imported only when one is built).
- :class:`LexicalJudge` is a fast word-overlap fallback: approximate, not NLI;
  :func:`content_words` is its reading of a text (HGOT's stop rule compares by it).

Wrap any of them in :class:`CachedJudge` to memoize by (judge, premise, hypothesis).
"""

from .base import CachedJudge, Judgement, JudgeStats
from .lexical import LexicalJudge, content_words
from .llm import LLMJudge, LLMJudgeConfig


def __getattr__(name: str):
    if name in ("CrossEncoderJudge", "CrossEncoderConfig"):
        from . import crossencoder

        return getattr(crossencoder, name)
    raise AttributeError(name)


__all__ = ["CachedJudge", "CrossEncoderConfig", "CrossEncoderJudge", "JudgeStats", "Judgement",
           "LLMJudge", "LLMJudgeConfig", "LexicalJudge", "content_words"]
