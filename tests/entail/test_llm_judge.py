"""LLMJudge on ScriptedLM: logprobs, votes, fallbacks, malformed replies, batching, caching."""

from __future__ import annotations

import math

import pytest

from thoughtloom.core.errors import ConfigError
from thoughtloom.core.protocols import Entailment
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Completion, TokenLogprob
from thoughtloom.entail import CachedJudge, LLMJudge, LLMJudgeConfig
from thoughtloom.entail.llm import prob_from_logprobs, read_verdict
from thoughtloom.lm import Budget, Metered
from thoughtloom.testing import ScriptedLM

PAIRS = [("Paris is in France.", "Paris is in Europe."), ("Cats bark.", "Dogs meow.")]


def lp_completion(yes: float, no: float, other: float = 0.0) -> Completion:
    top = [(" Yes", math.log(yes)), (" No", math.log(no))] + ([("Maybe", math.log(other))] if other else [])
    first = max(top, key=lambda t: t[1])
    return Completion(text=first[0].strip(), logprobs=(TokenLogprob(first[0], first[1], tuple(top)),))


def test_read_verdict():
    assert read_verdict("Yes.") is True and read_verdict("  no, because") is False
    assert read_verdict("**Yes**") is True and read_verdict("Entailment") is True
    assert read_verdict("Maybe") is None and read_verdict("") is None and read_verdict("42") is None


def test_prob_from_logprobs_normalizes_yes_against_no():
    assert prob_from_logprobs(lp_completion(0.6, 0.2, 0.2)) == pytest.approx(0.75)
    assert prob_from_logprobs(Completion(text="yes")) is None
    blank_first = Completion(text="\nno", logprobs=(TokenLogprob("\n", -0.1), TokenLogprob("no", math.log(0.9),
                                                                                          (("no", math.log(0.9)), ("yes", math.log(0.1))))))
    assert prob_from_logprobs(blank_first) == pytest.approx(0.1)


async def test_logprobs_mode_one_batch():
    lm = ScriptedLM(lambda req: lp_completion(0.8, 0.2) if "Europe" in req.messages[-1].content
                    else lp_completion(0.1, 0.9))
    judge = LLMJudge(lm)
    assert isinstance(judge, Entailment)
    probs = await judge.judge(PAIRS)
    assert probs == pytest.approx([0.8, 0.1])
    assert len(lm.batches) == 1 and all(r.logprobs == 10 and r.temperature == 0 for r in lm.requests)
    assert "Premise: Paris is in France." in lm.requests[0].messages[-1].content


async def test_auto_falls_back_to_votes_in_one_more_batch():
    def reply(req):
        if req.logprobs:
            return "yes"  # a backend without logprobs: text only
        return "Yes" if req.sample_index < 3 else "No"

    lm = ScriptedLM(reply)
    judge = LLMJudge(lm, LLMJudgeConfig(votes=5))
    judgements = await judge.judge_detailed(PAIRS)
    # the probe's "yes" is vote one; samples 1, 2 say yes and 3, 4 say no
    assert [j.prob for j in judgements] == [0.6, 0.6] and {j.source for j in judgements} == {"votes"}
    assert [len(b) for b in lm.batches] == [2, 8]  # probes, then all further votes together
    assert sorted({r.sample_index for r in lm.batches[1]}) == [1, 2, 3, 4]
    assert all(r.temperature == 0.7 for r in lm.batches[1])


async def test_auto_default_costs_one_call_per_pair_without_logprobs():
    lm = ScriptedLM(lambda req: "Yes." if "Europe" in req.messages[-1].content else "No.")
    assert await LLMJudge(lm).judge(PAIRS) == [1.0, 0.0]
    assert [len(b) for b in lm.batches] == [2]


async def test_votes_mode_skips_the_logprob_probe():
    lm = ScriptedLM(lambda req: "no")
    probs = await LLMJudge(lm, LLMJudgeConfig(mode="votes", votes=3)).judge(PAIRS)
    assert probs == [0.0, 0.0] and [len(b) for b in lm.batches] == [6]


async def test_logprobs_mode_without_logprobs_uses_the_greedy_reply():
    lm = ScriptedLM(["Yes", "No"])
    judgements = await LLMJudge(lm, LLMJudgeConfig(mode="logprobs")).judge_detailed(PAIRS)
    assert [(j.prob, j.source) for j in judgements] == [(1.0, "votes"), (0.0, "votes")]


async def test_malformed_replies_are_counted_traced_and_default_to_no():
    replies = iter(["I think so", "Yes", "banana", "", "???", "maybe"])
    lm = ScriptedLM(lambda req: next(replies))
    trace = Trace()
    judge = LLMJudge(lm, LLMJudgeConfig(mode="votes", votes=3), trace=trace)
    judgements = await judge.judge_detailed(PAIRS)
    assert judgements[0].prob == pytest.approx(1 / 3) and judgements[0].malformed == 2
    assert (judgements[1].prob, judgements[1].source, judgements[1].malformed) == (0.0, "malformed", 3)
    assert judge.stats.malformed == 5 and judge.stats.by_source == {"votes": 1, "malformed": 1}
    # one malformed event per unreadable reply, as the judge counts them
    bad = trace.of_type("malformed")
    assert [e["raw"] for e in bad] == ["I think so", "banana", "", "???", "maybe"]
    assert {e["what"] for e in bad} == {"entailment"} and trace.of_type("entail")[0]["n"] == 2


async def test_bind_uses_the_question_budget_and_trace():
    base = ScriptedLM(lambda req: lp_completion(0.9, 0.1))
    trace = Trace()
    metered = Metered(base, budget=Budget(max_calls=10), trace=trace)
    judge = CachedJudge(LLMJudge(base)).bind(metered, trace)
    await judge.judge(PAIRS)
    assert metered.totals.calls == 2 and len(trace.of_type("entail")) == 1


async def test_cached_judge_judges_each_pair_once():
    lm = ScriptedLM(lambda req: lp_completion(0.7, 0.3))
    judge = CachedJudge(LLMJudge(lm))
    first = await judge.judge([PAIRS[0], PAIRS[1], PAIRS[0]])
    second = await judge.judge([PAIRS[1]])
    assert first[0] == first[2] and second == [first[1]]
    assert lm.calls == 2 and (judge.hits, judge.misses) == (2, 2)


async def test_empty_batch_and_bad_config():
    lm = ScriptedLM([])
    assert await LLMJudge(lm).judge([]) == [] and lm.calls == 0
    with pytest.raises(ConfigError):
        LLMJudgeConfig(mode="vibes")


def test_config_from_cli_spec():
    c = LLMJudgeConfig.from_spec("mode=votes,votes=5,temperature=0.5")
    assert (c.mode, c.votes, c.temperature) == ("votes", 5, 0.5)
    assert LLMJudgeConfig.from_spec("") == LLMJudgeConfig()
    with pytest.raises(ConfigError, match="LLM judge has no option 'vote'"):
        LLMJudgeConfig.from_spec("vote=3")
    with pytest.raises(ConfigError, match=r"bad value for LLM judge option votes: 'many' \(expected int\)"):
        LLMJudgeConfig.from_spec("votes=many")
