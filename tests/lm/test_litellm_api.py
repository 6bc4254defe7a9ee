"""The LiteLLM backend against a fake ``litellm.acompletion`` (no network, no key).

Skipped where the optional extra is not installed; the missing-extra error
itself is tested in test_lm_spec.py, which runs everywhere.
"""

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-table fetch at import
litellm = pytest.importorskip("litellm")

from thoughtloom.core import LMError, PromptTooLong, RateLimitError, Request, Trace, TransientError  # noqa: E402
from thoughtloom.core.errors import CallTimeout  # noqa: E402
from thoughtloom.lm import Budget, Cached, Metered, Retrying, open_lm  # noqa: E402
from thoughtloom.lm.litellm_api import LiteLLMBackend  # noqa: E402

MODEL = "anthropic/claude-3-5-haiku-latest"


def reply(text="hi", finish="stop", prompt_tokens=11, completion_tokens=3):
    return litellm.ModelResponse(
        choices=[{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
        usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
               "total_tokens": prompt_tokens + completion_tokens},
        model=MODEL)


@pytest.fixture
def fake(monkeypatch):
    """A scripted ``litellm.acompletion``: each call takes the next outcome (reply or exception)."""
    class Fake:
        outcomes: list = []
        calls: list[dict] = []

        async def __call__(self, **kwargs):
            self.calls.append(kwargs)
            outcome = self.outcomes.pop(0) if self.outcomes else reply()
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome

    f = Fake()
    f.outcomes, f.calls = [], []
    monkeypatch.setattr(litellm, "acompletion", f)
    return f


async def test_request_translation_and_completion(fake):
    fake.outcomes = [reply("Paris", finish="length", prompt_tokens=20, completion_tokens=4)]
    lm = LiteLLMBackend(MODEL, timeout_s=12)
    request = Request.of("Capital of France?", max_tokens=4, temperature=0.5, top_p=0.9, stop=("\n",),
                         seed=1, sample_index=2)
    (out,) = await lm.generate([request])
    sent = fake.calls[0]
    assert sent["model"] == MODEL and sent["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert (sent["max_tokens"], sent["temperature"], sent["top_p"], sent["stop"]) == (4, 0.5, 0.9, ["\n"])
    assert sent["seed"] == request.derived_seed() and sent["timeout"] == 12
    # our Retrying wrapper retries, not LiteLLM; a parameter a provider lacks is dropped, not fatal
    assert sent["num_retries"] == 0 and sent["drop_params"] is True
    assert out.text == "Paris" and out.truncated and out.finish_reason == "length"
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (20, 4)
    assert lm.model_id == f"litellm:{MODEL}" and out.model == lm.model_id


async def test_json_schema_goes_as_response_format(fake):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    await LiteLLMBackend(MODEL).generate([Request.of("q", json_schema=schema)])
    assert fake.calls[0]["response_format"] == {"type": "json_schema",
                                                "json_schema": {"name": "reply", "schema": schema}}


def err(cls, **extra):
    return cls(message="boom", llm_provider="anthropic", model=MODEL, **extra)


@pytest.mark.parametrize("make,ours,hint", [
    (lambda: err(litellm.RateLimitError), RateLimitError, ""),
    (lambda: err(litellm.APIConnectionError), TransientError, ""),
    (lambda: err(litellm.ServiceUnavailableError), TransientError, ""),
    (lambda: err(litellm.Timeout), CallTimeout, "--timeout"),
    (lambda: err(litellm.ContextWindowExceededError), PromptTooLong, "longer context"),
    (lambda: err(litellm.AuthenticationError), LMError, "ANTHROPIC_API_KEY"),
    (lambda: err(litellm.NotFoundError), LMError, "model name"),
    (lambda: err(litellm.BadRequestError), LMError, ""),
    (lambda: litellm.APIError(status_code=502, message="bad", llm_provider="anthropic", model=MODEL),
     TransientError, ""),
])
async def test_errors_map_onto_ours(fake, monkeypatch, make, ours, hint):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fake.outcomes = [make()]
    with pytest.raises(LMError if ours is LMError else Exception) as info:
        await LiteLLMBackend(MODEL).generate([Request.of("q")])
    assert type(info.value) is ours and hint in str(info.value)


async def test_a_malformed_reply_is_a_malformed_reply(fake):
    fake.outcomes = [litellm.ModelResponse(choices=[], model=MODEL)]
    with pytest.raises(TransientError, match="malformed reply from litellm:"):
        await LiteLLMBackend(MODEL).generate([Request.of("q")])


async def test_same_cache_retry_and_usage_as_every_backend(fake, tmp_path):
    fake.outcomes = [err(litellm.ServiceUnavailableError), reply("four", prompt_tokens=9, completion_tokens=2)]
    lm = open_lm(f"litellm:{MODEL}", cache_path=tmp_path / "c.sqlite", retries=3)
    assert isinstance(lm, Cached) and isinstance(lm.inner, Retrying) and lm.model_id == f"litellm:{MODEL}"
    lm.inner.initial_s = lm.inner.max_s = 0.001
    metered = Metered(lm, budget=Budget(), trace=Trace())
    first = (await metered.generate([Request.of("2+2?")]))[0]
    again = (await metered.generate([Request.of("2+2?")]))[0]
    assert first.text == again.text == "four" and again.usage.cached
    assert len(fake.calls) == 2  # one retry, then the cache answered the repeat
    totals = metered.totals
    assert (totals.calls, totals.cached_calls, totals.prompt_tokens, totals.completion_tokens) == (2, 1, 18, 4)
    await lm.aclose()
