"""The run inspector: a run folder as one offline HTML report, and runs side by side.

:func:`write_report` renders ``thoughtloom eval``'s output folder (the run
page, then each example's question, answer and reasoning structure rebuilt
from its trace: a search tree, an HGOT hierarchy, DecomP programs, samples
and votes, and every model call). :func:`compare_runs` puts runs side by
side with bootstrap intervals and paired differences. Reads run folders
only; above ``eval`` in the layering, below ``cli``.

Modules: ``rundir`` (reading a folder), ``figures`` (a run's numbers),
``trees`` / ``hierarchy`` / ``programs`` (structures from trace events),
``draw`` (networkx layout to SVG), ``curve_view`` (anytime curves as SVG), ``markup`` (escaped HTML),
``run_page`` / ``example_page`` / ``tree_view`` / ``hgot_view`` /
``program_view`` (the pages), ``report`` (the file), ``compare``, ``card_curves`` (a reproduction
card's figures).
"""

from .report import build_report, write_report
from .rundir import RunFolder

__all__ = ["RunFolder", "build_report", "write_report"]
