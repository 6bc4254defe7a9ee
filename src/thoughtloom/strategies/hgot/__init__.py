"""HGOT: hierarchical graph of thoughts. One small module per idea:
``probe`` (retrieval, passage pools), ``plan`` (DAG of sub-questions),
``deps`` (the dependency notations a plan is written in, cycles broken),
``stages`` (asking for a plan: one call, or the paper's three),
``thought`` (a cited thought and its reader), ``infer`` (Infer: sample,
weigh, vote, re-score), ``quality`` (citation recall/precision, passage
scores), ``answers`` (each thought's answer, refusals, the quality-weighted
vote), ``node`` (a question of the hierarchy), ``levels`` (the recursion),
``demos``, ``config``."""

from .config import HGOTConfig
from .strategy import HGOT

__all__ = ["HGOT", "HGOTConfig"]
