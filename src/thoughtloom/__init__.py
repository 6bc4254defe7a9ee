"""thoughtloom: structured LLM reasoning.

One call answers a question or evaluates a strategy::

    import thoughtloom

    solution = thoughtloom.solve("cot-sc", "What is 17 * 23?", task="gsm8k", n=5)
    evaluation = thoughtloom.evaluate("cot", "gsm8k", limit=5)  # in memory; out="DIR" writes a folder

(:mod:`thoughtloom.api`; ``asolve`` / ``aevaluate`` inside a running event
loop). Two runs compared, or two sets of per-example scores tested::

    result = thoughtloom.compare(["runs/cot", "runs/cot-sc"])  # what `thoughtloom compare --json` prints
    test = thoughtloom.paired_test({"q1": 0.0, "q2": 1.0}, {"q1": 1.0, "q2": 1.0})  # b - a, exact paired test

(:func:`thoughtloom.view.compare.compare_runs`, :func:`thoughtloom.eval.inference.paired_test`;
docs/verdicts.md says how a verdict is made). Importing the package is cheap: no model runtime, no provider SDK, no
torch, and the API module loads on first use. The layers underneath::

    from thoughtloom.core import Request, Problem, Trace
    from thoughtloom.lm import open_lm, SyncLM
    from thoughtloom import strategies, tasks
    from thoughtloom.testing import ScriptedLM
"""

from .version import __version__

#: Names served by :mod:`thoughtloom.api`, imported when first asked for.
_API = ("Evaluation", "Solution", "SolveFailed", "aevaluate", "asolve", "evaluate", "solve")
#: Comparing runs: name -> (module, attribute), imported when first asked for.
_COMPARE = {"compare": ("thoughtloom.view.compare", "compare_runs"),
            "paired_test": ("thoughtloom.eval.inference", "paired_test")}


def __getattr__(name: str) -> object:
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _COMPARE:
        import importlib

        module, attribute = _COMPARE[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'thoughtloom' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API, *_COMPARE])
