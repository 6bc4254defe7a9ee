"""HGOT: hierarchical graph of thoughts. One small module per idea:
``probe`` (retrieval), ``plan`` (DAG of sub-questions), ``infer`` (cited
thoughts), ``quality`` (citation recall/precision, passage scores), ``vote``
(weighted self-consistency), ``search`` (the recursion), ``demos``."""

from .strategy import HGOT, HGOTConfig

__all__ = ["HGOT", "HGOTConfig"]
