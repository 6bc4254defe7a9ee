"""LLMJudge on the real embedded model with logprobs on: P(yes) comes from token logprobs."""

import pytest

from thoughtloom.entail import LLMJudge, LLMJudgeConfig
from thoughtloom.lm.llamacpp import LlamaCppLM

pytestmark = pytest.mark.integration


async def test_llm_judge_reads_logprobs_from_llamacpp(embedded_path):
    lm = LlamaCppLM(embedded_path, n_ctx=512, logprobs=True)
    try:
        judge = LLMJudge(lm, LLMJudgeConfig(mode="logprobs"))
        (j,) = await judge.judge_detailed([("The cat is black.", "The cat is black.")])
    finally:
        await lm.aclose()
    assert j.source == "logprobs" and 0.0 <= j.prob <= 1.0
