import pytest

from thoughtloom.core import ParseError, Request, Trace
from thoughtloom.lm import generate_json, parse_json
from thoughtloom.testing import ScriptedLM

SCHEMA = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}


@pytest.mark.parametrize("text", [
    '{"score": 3}',
    'Sure! Here it is:\n```json\n{"score": 3}\n```',
    'The result {"score": 3} as requested.',
    'noise {"other": 1} then {"score": 3}',
    '{"score": 3, "note": "a } brace in a string"}',
])
def test_parse_json_digs_out_the_value(text):
    assert parse_json(text, SCHEMA)["score"] == 3


@pytest.mark.parametrize("text,msg", [
    ("no json here", "no JSON"),
    ('{"score": }', "invalid JSON"),
    ('{"score": "high"}', "schema"),
])
def test_parse_json_errors(text, msg):
    with pytest.raises(ParseError) as info:
        parse_json(text, SCHEMA)
    assert msg in str(info.value) and info.value.raw == text


async def test_generate_json_reasks_once_with_the_error():
    lm = ScriptedLM(["oops", '{"score": 1}', '{"score": 2}'])
    trace = Trace()
    out = await generate_json(lm, [Request.of("a"), Request.of("b")], schema=SCHEMA, trace=trace)
    assert out == [{"score": 2}, {"score": 1}] or out == [{"score": 1}, {"score": 2}]
    assert [len(b) for b in lm.batches] == [2, 1]
    retry = lm.batches[1][0]
    assert retry.messages[-2].content == "oops" and "could not be used" in retry.messages[-1].content
    assert retry.json_schema == SCHEMA
    [bad] = trace.of_type("malformed")
    assert (bad["what"], bad["reason"], bad["attempt"], bad["raw"]) == ("json", "unparseable", 1, "oops")


async def test_generate_json_fails_typed_or_returns_errors():
    with pytest.raises(ParseError):
        await generate_json(ScriptedLM(["bad", "worse"]), [Request.of("a")], schema=SCHEMA)
    out = await generate_json(ScriptedLM(["bad", "worse"]), [Request.of("a")], schema=SCHEMA,
                              return_errors=True)
    assert isinstance(out[0], ParseError)
