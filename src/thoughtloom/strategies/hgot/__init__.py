"""HGOT: hierarchical graph of thoughts. One small module per idea:
``probe`` (retrieval), ``plan`` (DAG of sub-questions), ``infer`` (cited
thoughts), ``quality`` (citation recall/precision, passage scores), ``vote``
(weighted self-consistency), ``search`` (the recursion), ``demos``, ``config``."""

from .config import HGOTConfig
from .strategy import HGOT

__all__ = ["HGOT", "HGOTConfig"]
