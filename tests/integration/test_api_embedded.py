"""thoughtloom.solve and thoughtloom.evaluate on the real embedded model, as the README shows them."""

import pytest

import thoughtloom

pytestmark = pytest.mark.integration


def test_solve_and_evaluate_on_the_embedded_model(embedded_path, tmp_path):
    cache = tmp_path / "cache.sqlite"
    solution = thoughtloom.solve("cot-sc", "What is 6 * 7?", model="embedded", task="gsm8k", n=2, max_tokens=48,
                                 cache=cache)
    assert solution.calls == 2 and solution.usage.completion_tokens > 0 and solution.seconds > 0
    assert solution.result.details["samples"] and isinstance(solution.answer, str)
    assert sum(e["type"] == "llm_call" for e in solution.trace.events) == 2
    again = thoughtloom.solve("cot-sc", "What is 6 * 7?", model="embedded", task="gsm8k", n=2, max_tokens=48,
                              cache=cache)
    assert again.usage.cached_calls == 2 and again.answer == solution.answer  # replayed from the cache

    summary = thoughtloom.evaluate("cot", "gsm8k", model="embedded", limit=1, out=tmp_path / "run", max_tokens=48)
    assert summary["data_sample"] is True and summary["n"] == 1 and summary["model"].startswith("gguf:")
    assert summary["usage"]["calls"] == 1
