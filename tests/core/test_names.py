import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import ConfigError
from thoughtloom.core.names import choices_hint, suggestion, unknown
from thoughtloom.strategies import make_config
from thoughtloom.strategies.decomp.catalogue import get_program


def test_suggestion_is_the_closest_name_or_none():
    assert suggestion("cot_sc", ["cot", "cot-sc", "io"]) == "cot-sc"
    assert suggestion("zzz", ["cot", "cot-sc", "io"]) is None
    assert choices_hint("zzz", ["b", "a"]) == "choose one of: a, b"
    error = unknown("widget", "alpah", ["alpha", "beta"])
    assert str(error) == "unknown widget 'alpah' (did you mean 'alpha'? choose one of: alpha, beta)"


@pytest.mark.parametrize("look_up,typo,meant", [
    (strategies.get, "cot_sc", "cot-sc"),
    (strategies.get, "sculpt-mtcs", "sculpt-mcts"),
    (tasks.get, "gsm8", "gsm8k"),
    (tasks.get, "hotpot", "hotpotqa"),
    (get_program, "letter_cat_cott", "letter_cat_cot"),
])
def test_every_registry_suggests_the_name_meant(look_up, typo, meant):
    with pytest.raises(ConfigError) as info:
        look_up(typo)
    message = str(info.value)
    assert "unknown" in message and f"did you mean {meant!r}?" in message and "choose one of" in message


def test_a_misspelt_strategy_option_is_suggested():
    with pytest.raises(ConfigError) as info:
        make_config(strategies.get("cot-sc"), {"temprature": "1"})
    assert "has no option 'temprature'" in str(info.value) and "did you mean 'temperature'?" in str(info.value)
