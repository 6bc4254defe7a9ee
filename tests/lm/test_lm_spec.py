import pytest

from thoughtloom.core import ConfigError
from thoughtloom.lm import OPENAI_BASE_URL, Cached, ModelSpec, Retrying, open_lm


def test_parse_specs(tmp_path):
    assert ModelSpec.parse("embedded") == ModelSpec("gguf")
    f = tmp_path / "m.gguf"
    f.write_bytes(b"x")
    assert ModelSpec.parse(str(f)).path == f
    s = ModelSpec.parse("openai:qwen@http://127.0.0.1:8000/v1")
    assert (s.kind, s.name, s.base_url) == ("openai", "qwen", "http://127.0.0.1:8000/v1")
    s = ModelSpec.parse("openai:gpt-4o-mini")
    assert (s.kind, s.name, s.base_url) == ("openai", "gpt-4o-mini", OPENAI_BASE_URL)
    s = ModelSpec.parse("litellm:vertex_ai/claude-3-5-sonnet@20240620")
    assert (s.kind, s.name) == ("litellm", "vertex_ai/claude-3-5-sonnet@20240620")


@pytest.mark.parametrize("bad,words", [
    ("openai:qwen@", "openai:MODEL@BASE_URL"),
    ("openai:qwen@ftp://x", "openai:MODEL@BASE_URL"),
    ("openai:@http://x", "openai:MODEL@BASE_URL"),
    ("litellm:claude", "litellm:PROVIDER/MODEL"),
    ("missing.gguf", "not found"),
    ("gpt-4", "unknown model spec 'gpt-4' (did you mean 'openai:gpt-4'?"),
    ("embeded", "did you mean 'embedded'?"),
    ("opneai:gpt-4o", "did you mean 'openai:gpt-4o'?"),
    ("a model", "use 'embedded', a path"),
])
def test_bad_specs_say_how_to_fix(bad, words):
    with pytest.raises(ConfigError) as info:
        ModelSpec.parse(bad)
    assert words in str(info.value)


def test_open_lm_stack_and_key_not_in_model_id(tmp_path):
    lm = open_lm("openai:m@http://127.0.0.1:9/v1", api_key="sk-secret", cache_path=tmp_path / "c.sqlite")
    assert isinstance(lm, Cached) and isinstance(lm.inner, Retrying)
    assert "secret" not in lm.model_id
    assert isinstance(open_lm("openai:m@http://127.0.0.1:9/v1"), Retrying)
    with pytest.raises(ConfigError):
        open_lm("openai:m@http://127.0.0.1:9/v1", cache_mode="replay")


def test_openai_url_is_the_default_and_needs_a_key():
    lm = open_lm("openai:gpt-4o-mini", api_key="sk-x")
    assert lm.model_id == f"openai:gpt-4o-mini@{OPENAI_BASE_URL}"
    # the same model id as the spelled-out URL: the cache entries are shared
    assert lm.model_id == open_lm(f"openai:gpt-4o-mini@{OPENAI_BASE_URL}", api_key="sk-x").model_id
    with pytest.raises(ConfigError) as info:
        open_lm("openai:gpt-4o-mini")
    assert "needs a key" in str(info.value) and "OPENAI_API_KEY" in str(info.value)
    # a local server needs none
    assert open_lm("openai:qwen@http://127.0.0.1:9/v1").model_id == "openai:qwen@http://127.0.0.1:9/v1"


def test_litellm_without_the_extra_is_one_line_naming_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "litellm", None)  # as if not installed: `import litellm` fails
    with pytest.raises(ConfigError) as info:
        open_lm("litellm:anthropic/claude-3-5-haiku-latest")
    message = str(info.value)
    assert "needs LiteLLM, which is not installed" in message and "thoughtloom[litellm]" in message
    assert "\n" not in message
