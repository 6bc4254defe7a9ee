"""Decomposed Prompting (Khot et al., ICLR 2023): programs of sub-task handlers.

* ``language.py``: the step language: step lines, ``#k`` references, operators;
* ``handlers.py``: the handler interface, its kinds, prompt files;
* ``functions.py``: ``@symbolic``, its registry and the built-in symbolic functions;
* ``catalogue.py``: the catalogue of decomposed programs and their reference programs;
* ``controller.py``: the batched, traced controller;
* ``strategy.py``: ``decomp`` and its baselines as strategies.
"""

from .catalogue import Program, register_program
from .functions import symbolic
from .handlers import Call, Handler, Outcome

__all__ = ["Call", "Handler", "Outcome", "Program", "register_program", "symbolic"]
