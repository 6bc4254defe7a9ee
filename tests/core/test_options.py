from dataclasses import dataclass, field

import pytest

from thoughtloom import strategies
from thoughtloom.core import ConfigError
from thoughtloom.core.options import check_options


@pytest.mark.parametrize("name", strategies.available())
def test_every_strategy_default_config_passes(name):
    check_options(strategies.get(name).Config(), owner=name)


@dataclass(frozen=True)
class Opts:
    n: int = 3
    max_tokens: int = 64
    answer_tokens: int = 8
    max_retries: int = 2
    shots: int = 3
    temperature: float = 0.7
    stop_at_goal: bool = False
    mode: str = "x"
    cap: int | None = None
    width: int = field(default=4, metadata={"min": 2, "max": 8})
    bias: float = field(default=-1.0, metadata={"min": -5.0})


@pytest.mark.parametrize("override,needle", [
    ({"n": 0}, "n: 0 (must be >= 1)"),
    ({"max_tokens": -5}, "max_tokens: -5"),
    ({"answer_tokens": 0}, "answer_tokens: 0"),
    ({"shots": -1}, "shots: -1 (must be >= 0)"),
    ({"temperature": float("nan")}, "finite"),
    ({"temperature": float("inf")}, "finite"),
    ({"temperature": -0.1}, "temperature: -0.1"),
    ({"width": 1}, "width: 1 (must be >= 2)"),
    ({"width": 9}, "width: 9 (must be <= 8)"),
    ({"bias": -6.0}, "bias: -6.0"),
])
def test_out_of_range_values_are_named(override, needle):
    with pytest.raises(ConfigError) as info:
        check_options(Opts(**override), owner="demo")
    assert needle in str(info.value) and "demo option" in str(info.value)


def test_allowed_edges():
    check_options(Opts(max_retries=0, shots=0, temperature=0.0, width=2, bias=-5.0, cap=None))
    check_options(Opts(cap=0))  # an unnamed count may be 0
    check_options(object())  # not a dataclass: nothing to check
