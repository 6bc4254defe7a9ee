"""DecomP's open-domain QA with Appendix G.6's chain-of-thought reader (issue 37).

G.6 gives each dataset a direct multi-hop reader and a CoT one: "사고 연쇄 예시는 David Hicks나
Rihanna를 명시적으로 식별한 뒤, 관련된 훈련 장소나 수상 내역 질문에 답한다" (the chain-of-thought
examples first name the bridge entity, David Hicks or Rihanna, and then answer the question about
it). Ours: each dataset's ``multihop_titleqa_cot`` shows the direct reader's passages and questions
with the same answers, each reasoned on one line that names the intermediate facts and ends in
"So the answer is: X"; ``--set program=odqa_decomp_cot`` / ``odqa_nodecomp_cot`` run it in place
of the direct reader, and the defaults stay direct.
"""

from __future__ import annotations

import re

import pytest

from support.decomp_prompt_files import qa_pairs, worked_examples
from thoughtloom import prompts
from thoughtloom.core.types import Passage, Problem
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.catalogue import default_program, get_program
from thoughtloom.strategies.decomp.controller import NEXT_STEP
from thoughtloom.strategies.decomp.language import read_reply
from thoughtloom.tasks import get as get_task
from thoughtloom.testing import ScriptedLM, StaticRetriever

TASKS = ("hotpotqa", "2wiki", "musique")
FILES = ("",) + tuple(f"{t}/" for t in TASKS)  # the shared prompts and each dataset's own


def _contexts(name: str) -> list[str]:
    """The reader's passages and questions, its answers and instructions left out."""
    text = prompts.read(f"decomp/handlers/{name}")
    return [line for line in text.splitlines() if line.startswith(("Wikipedia Title:", "Q: ")) or
            (line and not line.startswith(("A:", "#:", "Answer the")))]


@pytest.mark.parametrize("where", FILES)
def test_each_cot_reader_reasons_to_the_direct_readers_answers_on_the_same_passages(where):
    direct, cot = qa_pairs(f"{where}multihop_titleqa"), qa_pairs(f"{where}multihop_titleqa_cot")
    assert cot and [q for _, q, _ in cot] == [q for _, q, _ in direct]
    assert _contexts(f"{where}multihop_titleqa_cot") == _contexts(f"{where}multihop_titleqa")
    for (_, q, answer), (_, _, chain) in zip(direct, cot):
        assert chain.endswith(f"So the answer is: {answer}"), q
        assert read_reply(chain) == answer  # the one reading every reader reply gets
        assert len(re.findall(r"\. ", chain)) >= 2, q  # at least two stated facts before the answer


@pytest.mark.parametrize("where", FILES)
def test_the_cot_decomposer_is_the_direct_one_with_the_cot_reader_named(where):
    """The decomposer's worked questions, sub-questions and answers are the direct program's; only
    the final step's handler differs, so the two arms decompose alike."""
    direct = prompts.read(f"decomp/decomposers/{where}odqa_decomp")
    cot = prompts.read(f"decomp/decomposers/{where}odqa_decomp_cot")
    assert cot == direct.replace("(multihop_titleqa)", "(multihop_titleqa_cot)")
    assert all(e.lines[-1].startswith("(multihop_titleqa_cot) ") for e in worked_examples(f"{where}odqa_decomp_cot"))


def test_the_default_programs_keep_the_direct_reader():
    task = get_task("hotpotqa")
    assert default_program("decomp", task).name == "odqa_decomp"
    assert default_program("decomp-nodecomp-ctxt", task).name == "odqa_nodecomp"
    assert get_program("odqa_nodecomp_cot").reference("q") == ["(retrieve) $question", "(multihop_titleqa_cot) $question"]
    assert get_program("odqa_nodecomp_cot").k == get_program("odqa_nodecomp").k == 6
    assert get_program("odqa_decomp_cot").k == get_program("odqa_decomp").k == 4


PASSAGES = [Passage("p1", "Moon Garden is a 1990 film directed by Ida Vance.", "Moon Garden"),
            Passage("p2", "Ida Vance was born in Oslo in 1950.", "Ida Vance")]
CHAIN = "Moon Garden was directed by Ida Vance. Ida Vance was born in Oslo. So the answer is: Oslo"


@pytest.mark.parametrize("task", TASKS)
async def test_nodecomp_ctxt_with_the_cot_reader_reads_the_chains_answer(task):
    lm, retriever = ScriptedLM(lambda req: CHAIN), StaticRetriever(PASSAGES)
    cls = get("decomp-nodecomp-ctxt")
    result = await cls(cls.Config(program="odqa_nodecomp_cot", k=2)).run(
        Problem("q", "Where was the director of Moon Garden born?"), Context(lm=lm, task=get_task(task), retriever=retriever))
    assert result.answer == "Oslo" and lm.calls == 1
    (prompt,) = [r.messages[-1].content for r in lm.requests]
    assert "So the answer is:" in prompt and "Wikipedia Title: Ida Vance" in prompt
    assert lm.requests[0].max_tokens == 160


async def test_decomp_ctxt_with_the_cot_reader_ends_on_the_chains_answer():
    def reply(req):
        prompt = req.messages[-1].content
        if NEXT_STEP in prompt:
            done = prompt.split(NEXT_STEP, 1)[1].count("\nA: ")
            return ['(retrieve_odqa) "Who directed Moon Garden?"',
                    '(multihop_titleqa_cot) "Where was the director of Moon Garden born?"', "[EOQ]"][min(done, 2)]
        return CHAIN if "So the answer is:" in prompt else "Ida Vance"

    lm = ScriptedLM(reply)
    cls = get("decomp")
    result = await cls(cls.Config(program="odqa_decomp_cot", k=2)).run(
        Problem("q", "Where was the director of Moon Garden born?"),
        Context(lm=lm, task=get_task("hotpotqa"), retriever=StaticRetriever(PASSAGES)))
    assert result.answer == "Oslo"
    assert sum("So the answer is:" in r.messages[-1].content for r in lm.requests) == 1
