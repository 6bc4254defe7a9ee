"""Decomposed Prompting (Khot et al., ICLR 2023): programs of sub-task handlers.

Each module imports only those listed above it:

* ``language.py``: the step language: step lines, ``#k`` references, operators;
* ``functions.py``: ``@symbolic``, its registry and the built-in symbolic functions;
* ``catalogue.py``: the catalogue of decomposed programs and their reference programs;
* ``record.py``: what a run records (``Run``, ``StepRecord``), as JSON and as printed;
* ``handlers.py``: the handler interface, the ``HandlerEnv`` handlers see, prompt files;
* ``step_handlers.py``: a registered strategy or function as a handler (``register_handler``, ``bind``);
* ``config.py``: ``DecompConfig``, the strategies' options;
* ``controller.py``: the batched, traced controller;
* ``strategy.py``: ``decomp`` and its baselines as strategies.
"""

from .catalogue import Program, register_program
from .functions import symbolic
from .handlers import Call, Handler, HandlerEnv, Outcome
from .step_handlers import register_handler

__all__ = ["Call", "Handler", "HandlerEnv", "Outcome", "Program", "register_handler", "register_program", "symbolic"]
