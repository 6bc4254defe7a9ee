import pytest

from thoughtloom.core import ConfigError
from thoughtloom.lm import Cached, ModelSpec, Retrying, open_lm


def test_parse_specs(tmp_path):
    assert ModelSpec.parse("embedded") == ModelSpec("gguf")
    f = tmp_path / "m.gguf"
    f.write_bytes(b"x")
    assert ModelSpec.parse(str(f)).path == f
    s = ModelSpec.parse("openai:qwen@http://127.0.0.1:8000/v1")
    assert (s.kind, s.name, s.base_url) == ("openai", "qwen", "http://127.0.0.1:8000/v1")


@pytest.mark.parametrize("bad,words", [
    ("openai:qwen", "openai:MODEL@BASE_URL"),
    ("openai:@http://x", "openai:MODEL@BASE_URL"),
    ("missing.gguf", "not found"),
    ("gpt-4", "unknown model spec"),
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
