"""thoughtloom: structured LLM reasoning.

Importing the package is cheap: no model runtime, no provider SDK, no torch.
The public surface is grouped by layer::

    from thoughtloom.core import Request, Problem, Trace
    from thoughtloom.lm import open_lm, SyncLM
    from thoughtloom import strategies, tasks
    from thoughtloom.testing import ScriptedLM
"""

__version__ = "0.1.0"
