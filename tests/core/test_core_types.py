import pytest

from thoughtloom.core import Passage, Request, Trace, request_hash, to_json, user


def test_request_from_prompt_and_tuples():
    r = Request.of("hi", stop=["\n"], max_tokens=5)
    assert r.messages == (user("hi"),)
    assert r.stop == ("\n",)
    assert hash(r) == hash(Request.of("hi", stop=("\n",), max_tokens=5))


@pytest.mark.parametrize("kw", [{"max_tokens": 0}, {"messages": ()}])
def test_request_validation(kw):
    base = {"messages": (user("x"),)}
    base.update(kw)
    with pytest.raises(ValueError):
        Request(**base)


def test_hash_distinguishes_samples_only_when_sampling():
    greedy = [Request.of("q", temperature=0.0, sample_index=i, seed=i) for i in range(3)]
    assert len({request_hash("m", r) for r in greedy}) == 1
    sampled = [Request.of("q", temperature=0.7, sample_index=i) for i in range(3)]
    assert len({request_hash("m", r) for r in sampled}) == 3
    assert request_hash("m", sampled[0]) != request_hash("other-model", sampled[0])
    assert request_hash("m", sampled[0]) != request_hash("m", Request.of("q", temperature=0.7, seed=1))


def test_hash_depends_on_decoding_parameters():
    a = Request.of("q", max_tokens=10)
    assert request_hash("m", a) != request_hash("m", Request.of("q", max_tokens=11))
    assert request_hash("m", a) != request_hash("m", Request.of("q", max_tokens=10, stop=("x",)))
    schema = {"type": "object"}
    assert request_hash("m", a) != request_hash("m", Request.of("q", max_tokens=10, json_schema=schema))


def test_derived_seed_distinct_per_sample_and_stable():
    seeds = [Request.of("q", seed=7, sample_index=i).derived_seed() for i in range(5)]
    assert len(set(seeds)) == 5
    assert seeds == [Request.of("q", seed=7, sample_index=i).derived_seed() for i in range(5)]


def test_trace_events_and_to_json():
    sunk = []
    t = Trace(sink=sunk.append, example="e1")
    t.emit("retrieval", passages=[Passage("p1", "text")])
    assert sunk[0]["example"] == "e1"
    assert sunk[0]["passages"][0]["id"] == "p1"
    assert t.of_type("retrieval") == sunk
    assert to_json((1, {"a": (2,)})) == [1, {"a": [2]}]
