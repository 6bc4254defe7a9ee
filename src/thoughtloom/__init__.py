"""thoughtloom: structured LLM reasoning.

One call answers a question or evaluates a strategy::

    import thoughtloom

    solution = thoughtloom.solve("cot-sc", "What is 17 * 23?", task="gsm8k", n=5)
    evaluation = thoughtloom.evaluate("cot", "gsm8k", limit=5)  # in memory; out="DIR" writes a folder

(:mod:`thoughtloom.api`; ``asolve`` / ``aevaluate`` inside a running event
loop). Importing the package is cheap: no model runtime, no provider SDK, no
torch, and the API module loads on first use. The layers underneath::

    from thoughtloom.core import Request, Problem, Trace
    from thoughtloom.lm import open_lm, SyncLM
    from thoughtloom import strategies, tasks
    from thoughtloom.testing import ScriptedLM
"""

from .version import __version__

#: Names served by :mod:`thoughtloom.api`, imported when first asked for.
_API = ("Evaluation", "Solution", "SolveFailed", "aevaluate", "asolve", "evaluate", "solve")


def __getattr__(name: str) -> object:
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'thoughtloom' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
