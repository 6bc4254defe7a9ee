"""The one options mechanism (core/options.py): declared types, bounds and choices, one coercer for
CLI text, TOML values and keywords, one error format; every option set of the package goes through it."""

import dataclasses
import json
import math
import tomllib
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from thoughtloom import strategies
from thoughtloom.core import ConfigError
from thoughtloom.core.options import Options, check_options, coerce, describe, make, option
from thoughtloom.entail.llm import LLMJudgeConfig
from thoughtloom.retrieval.bm25 import BM25Settings
from thoughtloom.retrieval.dense import DenseSettings
from thoughtloom.retrieval.hybrid import FusionSettings
from thoughtloom.strategies.config import make_config
from thoughtloom.strategies.decomp.handlers import PromptHandler, PromptHeader

EVERY = [(name, o) for name in strategies.available() for o in describe(strategies.get(name).Config)]


def _other_value(o):
    """A value of option ``o`` that differs from its default and is allowed."""
    if o["choices"] is not None:
        return next(c for c in reversed(o["choices"]) if c != o["default"])
    kind, low, high = o["type"], o["min"], o["max"]
    if kind == "bool":
        return not o["default"]
    if kind == "int":
        value = o["default"] + 1
        return value if high is None or value <= high else o["default"] - 1
    if kind == "float":
        value = o["default"] + 0.25
        return value if high is None or value <= high else max(low or 0.0, o["default"] - 0.25)
    return "some text"  # str, str | None


def _text(value):
    """How a user writes ``value`` after ``--set KEY=``."""
    if value is None or isinstance(value, bool):
        return {True: "true", False: "false", None: "none"}[value]
    return repr(value) if isinstance(value, float) else str(value)


def _toml(name, value):
    """``value`` as TOML parses it from ``name = ...`` (a suite's ``settings`` table)."""
    return tomllib.loads(f"{name} = {json.dumps(value)}")[name]


@pytest.mark.parametrize("strategy,o", EVERY, ids=[f"{s}.{o['name']}" for s, o in EVERY])
def test_every_option_reads_the_same_from_text_toml_and_a_keyword(strategy, o):
    """Each option of each registered strategy, set to a non-default allowed value as --set text, as a TOML
    value and as a Python keyword, gives one and the same config (and the value, of the declared type)."""
    cls = strategies.get(strategy)
    value = _other_value(o)
    from_text = make_config(cls, {o["name"]: _text(value)})
    from_toml = make_config(cls, {o["name"]: _toml(o["name"], value)})
    from_keyword = make_config(cls, {o["name"]: value})
    assert from_text == from_toml == from_keyword
    got = getattr(from_keyword, o["name"])
    assert got == value and type(got).__name__ == o["type"].split(" ")[0]
    assert from_keyword != cls.Config()


def _refused(o):
    """Values option ``o`` refuses, each with the hint the refusal gives."""
    out = []
    if o["choices"] is not None:
        out.append((9 if o["type"] == "int" else "nope", "must be one of: " + ", ".join(map(str, o["choices"]))))
    if o["min"] is not None:
        out.append((o["min"] - 1 if o["type"] == "int" else o["min"] - 0.5, f"must be >= {o['min']}"))
    if o["max"] is not None:
        out.append((o["max"] + 1, f"must be <= {o['max']}"))
    if o["type"] == "float":
        out.append((math.inf, "must be a finite number"))
    return out


@pytest.mark.parametrize("strategy,o", EVERY, ids=[f"{s}.{o['name']}" for s, o in EVERY])
def test_every_out_of_range_or_wrong_choice_value_gives_the_one_error(strategy, o):
    """A value outside an option's declared bounds or choices is refused in the one format, whichever way it
    came (text, TOML, keyword), and a word where a number or bool is asked says the type."""
    cls = strategies.get(strategy)
    name = o["name"]
    for value, hint in _refused(o):
        given = [_text(value), value] + ([_toml(name, value)] if not isinstance(value, float) or
                                         math.isfinite(value) else [])
        for raw in given:
            with pytest.raises(ConfigError) as info:
                make_config(cls, {name: raw})
            assert str(info.value).startswith(f"bad value for {strategy} option {name}: ") and hint in str(info.value)
    if o["type"] in ("int", "float", "bool"):
        with pytest.raises(ConfigError, match=f"bad value for {strategy} option {name}: 'many' \\(expected "):
            make_config(cls, {name: "many"})


def test_every_number_option_of_every_strategy_declares_its_lower_bound():
    """No number is left unbounded by accident: each strategy's int and float options state a min."""
    unbounded = [f"{s}.{o['name']}" for s, o in EVERY
                 if o["type"] in ("int", "float") and o["min"] is None and o["choices"] is None]
    assert unbounded == []


def test_an_unknown_option_lists_the_options():
    with pytest.raises(ConfigError) as info:
        make_config(strategies.get("cot-sc"), {"temprature": "1"})
    assert str(info.value).startswith("strategy 'cot-sc' has no option 'temprature'")
    assert "did you mean 'temperature'?" in str(info.value) and "options: layout, max_calls" in str(info.value)


def test_types_are_not_guessed():
    """An int stands for a float, never a bool for a number nor a float for an int; 'none' is None only
    where the option may be unset; text is kept as given for a str option."""
    cot_sc, hgot = strategies.get("cot-sc"), strategies.get("hgot")
    assert make_config(cot_sc, {"temperature": 1}).temperature == 1.0
    assert isinstance(make_config(cot_sc, {"temperature": "1"}).temperature, float)
    for bad in (True, 2.0, "2.0", None, "none"):
        with pytest.raises(ConfigError, match="bad value for cot-sc option n"):
            make_config(cot_sc, {"n": bad})
    assert make_config(hgot, {"demo_file": "none"}).demo_file is None
    assert make_config(hgot, {"demo_file": "NULL"}).demo_file is None
    assert make_config(hgot, {"demo_file": None}).demo_file is None
    assert make_config(strategies.get("decomp"), {"program": " x "}).program == " x "
    for word, value in [("yes", True), ("On", True), ("1", True), ("no", False), ("OFF", False), ("0", False)]:
        assert make_config(strategies.get("dsp"), {"demonstrate": word}).demonstrate is value
    with pytest.raises(ConfigError, match="expected str"):
        make_config(cot_sc, {"layout": 3})


def test_a_config_made_directly_is_checked_by_its_declarations():
    """``Config(...)`` refuses what ``--set`` refuses, naming the class (no strategy name is known there)."""
    with pytest.raises(ConfigError, match=r"bad value for MCTSConfig option parallel: 0 \(must be >= 1\)"):
        strategies.get("sculpt-mcts").Config(parallel=0)
    with pytest.raises(ConfigError, match="must be one of: none, knn, sampling; a file of annotated demos"):
        strategies.get("hgot").Config(demos="demos.csv")


@pytest.mark.parametrize("name", strategies.available())
def test_every_strategy_default_config_passes(name):
    check_options(strategies.get(name).Config(), owner=name)


@dataclass(frozen=True)
class Opts:
    n: int = option(3, min=1)
    temperature: float = option(0.7, min=0)
    cap: int | None = None
    width: int = option(4, min=2, max=8)
    bias: float = option(-1.0, min=-5.0)
    mode: str = option("x", choices=("x", "y"))
    plain: int = 3  # no declaration: any whole number


@pytest.mark.parametrize("override,needle", [
    ({"n": 0}, "n: 0 (must be >= 1)"),
    ({"temperature": float("nan")}, "finite"),
    ({"temperature": float("inf")}, "finite"),
    ({"temperature": -0.1}, "temperature: -0.1 (must be >= 0)"),
    ({"width": 1}, "width: 1 (must be >= 2)"),
    ({"width": 9}, "width: 9 (must be <= 8)"),
    ({"bias": -6.0}, "bias: -6.0"),
    ({"mode": "z"}, "mode: 'z' (must be one of: x, y)"),
])
def test_out_of_range_values_are_named(override, needle):
    with pytest.raises(ConfigError) as info:
        check_options(Opts(**override), owner="demo")
    assert needle in str(info.value) and str(info.value).startswith("bad value for demo option ")


def test_allowed_edges_and_undeclared_fields():
    """Bounds are inclusive; a field that declares nothing has no bounds (none is inferred from its name)."""
    check_options(Opts(n=1, temperature=0.0, width=2, bias=-5.0, cap=None))
    check_options(Opts(cap=-3, plain=-7))
    check_options(object())  # not a dataclass: nothing to check
    assert coerce(Opts, "cap", "none", "demo") is None and coerce(Opts, "cap", "4", "demo") == 4


def test_the_llm_judge_spec_goes_through_the_one_coercer():
    spec = LLMJudgeConfig.from_spec("mode=votes, votes=5,temperature=1")
    assert spec == make(LLMJudgeConfig, {"mode": "votes", "votes": 5, "temperature": 1}, owner="LLM judge")
    assert isinstance(spec.temperature, float)
    with pytest.raises(ConfigError, match=r"bad value for LLM judge option mode: 'vibes' \(must be one of: auto"):
        LLMJudgeConfig.from_spec("mode=vibes")
    with pytest.raises(ConfigError, match=r"bad value for LLM judge option votes: 0 \(must be >= 1\)"):
        LLMJudgeConfig.from_spec("votes=0")


def test_index_settings_read_text_and_typed_values_alike():
    """``--set bm25.k1=2`` (text) and a manifest's or the library's typed values give equal settings."""
    assert BM25Settings.from_dict({"k1": "2", "stemmer": "none", "threads": "2"}) == \
        BM25Settings.from_dict({"k1": 2, "stemmer": None, "threads": 2})
    assert BM25Settings.from_dict({"k1": "2"}).k1 == 2.0
    assert DenseSettings.from_dict({"dtype": "float32", "batch_size": "8"}) == DenseSettings(dtype="float32", batch_size=8)
    with pytest.raises(ConfigError, match=r"bad value for dense index option dtype: 'int8' \(must be one of"):
        DenseSettings.from_dict({"dtype": "int8"})
    with pytest.raises(ConfigError, match=r"bad value for fusion index option depth: 0 \(must be >= 1\)"):
        FusionSettings.from_dict({"depth": "0"})
    with pytest.raises(ConfigError, match=r"bm25 index has no option 'k_1' \(did you mean 'k1'\?"):
        BM25Settings.from_dict({"k_1": "1.2"})


def test_a_decomp_handler_header_goes_through_the_one_coercer():
    handler = PromptHandler("shout", "#: max_tokens=12\n#: raw=TRUE\nQ: $question\nA:")
    assert (handler.max_tokens, handler.raw, handler.evidence_tokens) == (12, True, PromptHeader().evidence_tokens)
    assert handler.stop == ("\n\n", "\nQ:")
    assert PromptHandler("shout", "#: raw=false\nQ:").raw is False
    with pytest.raises(ConfigError, match=r"bad value for decomp/handlers/shout.txt option max_tokens: 'lots'"):
        PromptHandler("shout", "#: max_tokens=lots\nQ:")
    with pytest.raises(ConfigError, match=r"decomp/handlers/shout.txt has no option 'max_token'"):
        PromptHandler("shout", "#: max_token=5\nQ:")


def test_every_packaged_handler_header_reads():
    """The packaged prompts' headers all pass the declared types and bounds."""
    from thoughtloom import prompts
    from thoughtloom.strategies.decomp.handlers import resolve

    for name in sorted(prompts.names("decomp/handlers", None)):
        handler = resolve(name, prefer_symbolic=False, prompt_dir=None)
        assert not isinstance(handler, PromptHandler) or handler.max_tokens >= 1


def test_strategies_command_shows_the_declared_bounds_and_choices():
    from thoughtloom.cli.main import app

    runner = CliRunner()
    one = json.loads(runner.invoke(app, ["strategies", "cot-sc", "--json"]).output)
    by_name = {o["name"]: o for o in one["options"]}
    assert (by_name["n"]["min"], by_name["n"]["max"], by_name["n"]["choices"]) == (1, None, None)
    assert by_name["layout"]["choices"] == ["chat", "text"] and "majority vote" in by_name["n"]["help"]
    table = runner.invoke(app, ["strategies", "tot-bfs"], terminal_width=220).output
    row = next(line for line in table.splitlines() if " value_samples " in line)
    assert "1..100" in row
    row = next(line for line in table.splitlines() if " generate " in line)
    assert "auto | propose | sample" in row
    assert dataclasses.is_dataclass(strategies.get("tot-bfs").Config)
