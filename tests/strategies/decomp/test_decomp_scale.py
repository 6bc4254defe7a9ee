"""App. C and G.4: the short CommaQA prompts, for models with 2048-token windows (suite
decomp-commaqa-scale).

App. C: "text-curie-001과 text-davinci-001은 2048토큰 컨텍스트 윈도 때문에 더 짧은 CommAQA 프롬프트가
필요했으며" (text-curie-001 and text-davinci-001 needed shorter CommaQA prompts because of their
2048-token context windows), and G.4 lists them: qa(small), aw_qa(small), pos_qa(small),
simp_qa(small) and a short CoT. So every prompt the short arms send, with the longest facts and
question of the suite's test file, fits 2048 tokens with its reply; and the short programs run the
long ones' decomposers, sending their handler names to the short readers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conftest import data_dir
from support.commaqa_kb import gold_program, oracle
from thoughtloom.core.types import Problem, Request
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.catalogue import get_program
from thoughtloom.strategies.decomp.controller import NEXT_STEP
from thoughtloom.tasks import get as get_task
from thoughtloom.tasks.datasets import sample_path
from thoughtloom.testing import ScriptedLM

#: App. C: the smaller models' context window, prompt and reply together
WINDOW = 2048
#: Characters per token, at most, as these prompts tokenize: the fewest either tokenizer we have
#: (SmolLM2-135M's, Qwen2.5-1.5B's) gave on a request of a right run of any CommaQA arm, short or
#: long, on a third of both test splits' questions is 3.04 for a reader or CoT request and 2.64 for a
#: decomposer's (JSON lists, quotes). So a reader or CoT prompt counts chars / 3 tokens, a decomposer
#: prompt chars / 2.5. The project's own estimate, chars / 4 (core.text.CHARS_PER_TOKEN), would pass
#: prompts 25% over: these invented names tokenize finely. The exact count is the integration test below.
CHARS_PER_TOKEN = {"decomposer": 2.5, "reader": 3.0}
#: the chat template's tokens around the prompt (SmolLM2's adds 21 to a one-message chat)
TEMPLATE_TOKENS = 32

SHORT_ARMS = [("decomp", "commaqa_fine_short"), ("decomp", "commaqa_coarse_short"),
              ("decomp-cot", "commaqa_cot_short_baseline")]


def iid_file() -> Path:
    """The suite's test file where the data is here, else the packaged sample of it (6 of its 20
    knowledge bases), so the check runs everywhere."""
    full = data_dir() / "commaqa_e" / "iid_test_eg100.json"
    return full if full.exists() else sample_path("commaqa")


def kind(request: Request) -> str:
    return "decomposer" if NEXT_STEP in request.prompt_text() else "reader"


def estimated(request: Request) -> int:
    """The request's prompt tokens by the rule above, its reply cap and the chat template's tokens."""
    return math.ceil(len(request.prompt_text()) / CHARS_PER_TOKEN[kind(request)]) + request.max_tokens + TEMPLATE_TOKENS


async def run_arm(strategy: str, program: str, examples) -> tuple[ScriptedLM, list]:
    """Every example through the arm on a model that is always right (the decomposer writes the gold
    program, each reader the facts' answer, CoT a chain of every hop): the prompts it sends are as
    long as a right run's."""
    lm = ScriptedLM(lambda req: oracle(req.prompt_text(), NEXT_STEP))
    cls = get(strategy)
    task = get_task("commaqa")
    results = [await cls(cls.Config(program=program)).run(ex.problem, Context(lm=lm, task=task)) for ex in examples]
    return lm, results


@pytest.mark.parametrize("strategy,program", SHORT_ARMS)
async def test_every_prompt_a_short_arm_sends_fits_a_2048_token_window(strategy, program):
    """Each request of a right run on every question of the suite's test file (the decomposer's at
    every turn, with its program so far; every reader's; CoT's with a chain of every hop as its
    reply), by the rule above, with its reply cap: within 2048 tokens. And the run is right: the
    short prompts and the program compute every gold answer when each call is right."""
    task = get_task("commaqa")
    examples = task.load(iid_file())
    lm, results = await run_arm(strategy, program, examples)
    assert [task.score(r.answer, ex.gold)["em"] for r, ex in zip(results, examples)] == [1.0] * len(examples)
    worst = max(lm.requests, key=estimated)
    assert estimated(worst) <= WINDOW, (program, kind(worst), estimated(worst), worst.prompt_text()[-300:])
    if strategy == "decomp-cot":  # the chain fits its own reply cap too (labels longer than the taught ones)
        chains = [oracle(r.prompt_text(), NEXT_STEP) for r in lm.requests]
        assert max(math.ceil(len(c) / CHARS_PER_TOKEN["reader"]) for c in chains) <= worst.max_tokens


@pytest.mark.parametrize("strategy,program", [("decomp", "commaqa_fine"), ("decomp-cot", "commaqa_cot_baseline")])
async def test_the_long_arms_do_not_fit_so_the_check_can_fail(strategy, program):
    """decomp-commaqa's own prompts (readers with 12 examples over three fact sets; CoT with six
    chains over one): the same check rejects each arm's longest request."""
    lm, _ = await run_arm(strategy, program, get_task("commaqa").load(iid_file()))
    assert max(estimated(r) for r in lm.requests) > WINDOW


async def test_a_short_program_runs_the_long_decomposer_and_sends_its_names_to_the_short_readers():
    """commaqa_fine_short's decomposer is commaqa_fine's, byte for byte (its requests are the long
    program's); its simp_qa, pos_qa and aw_qa steps read the _short files; commaqa_fine still reads
    the long ones."""
    ex = get_task("commaqa").load(sample_path("commaqa"))[0]
    sent = {}
    for program in ("commaqa_fine", "commaqa_fine_short"):
        lm, (result,) = await run_arm("decomp", program, [ex])
        assert result.details["status"] == "ok"
        sent[program] = [r.prompt_text() for r in lm.requests]
    decomposer = {p: [t for t in texts if NEXT_STEP in t] for p, texts in sent.items()}
    assert decomposer["commaqa_fine"] == decomposer["commaqa_fine_short"] and decomposer["commaqa_fine"]
    short = [t for t in sent["commaqa_fine_short"] if NEXT_STEP not in t]
    long = [t for t in sent["commaqa_fine"] if NEXT_STEP not in t]
    assert short and all("Gorselyor" in t and "Gramselgram" not in t for t in short)
    assert long and all("Gramselgram" in t for t in long)  # the long readers' first fact set
    assert get_program("commaqa_fine_short").prompt_file("simp_qa") == "simp_qa_short"
    assert [line.split(")")[0] for line in gold_program(ex.problem.question)][0] in {"(simp_qa", "(aw_qa"}


@pytest.mark.integration
async def test_the_longest_short_prompts_fit_2048_tokens_by_the_embedded_models_own_count(embedded_path):
    """The exact count (the project's counter, lm.tokens.count_prompt_tokens, with SmolLM2's chat
    template and tokenizer, the finer of our two): each short arm's longest request of a right run
    on the suite's test file, with its reply cap, within 2048 tokens."""
    from thoughtloom.lm.llamacpp import LlamaCppLM
    from thoughtloom.lm.tokens import count_prompt_tokens

    examples = get_task("commaqa").load(iid_file())
    longest = []
    for strategy, program in SHORT_ARMS:
        lm, _ = await run_arm(strategy, program, examples)
        for k in ("decomposer", "reader"):
            asked = [r for r in lm.requests if kind(r) == k]
            if asked:
                longest.append(max(asked, key=lambda r: len(r.prompt_text())))
    model = LlamaCppLM(embedded_path, n_ctx=WINDOW, max_parallel=1)
    try:
        counted = await count_prompt_tokens(model, longest)
    finally:
        await model.aclose()
    assert counted.exact
    fits = [n + r.max_tokens for n, r in zip(counted.counts, longest)]
    assert max(fits) <= WINDOW, json.dumps(fits)
    assert all(n <= estimated(r) - r.max_tokens for n, r in zip(counted.counts, longest))  # the rule over-counts
