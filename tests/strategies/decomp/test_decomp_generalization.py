"""The letter task is all-model under handlers=lm, and the paper's generalization axes stay unseen.

Every letter step is a model call (the paper's §F.1.1 error case shows the lookup
is one); every method's letter demonstrations are 3-word, space-separated names
at positions the tests never ask; the reversal prompts share three short
demonstrations; the decomp suites name metrics their tasks emit.
"""

from __future__ import annotations

import json
import re

from conftest import data_file
from support.decomp_prompt_files import qa_pairs, symbolic_answer, worked_examples
from thoughtloom import prompts
from thoughtloom.core.types import Problem
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.controller import NEXT_STEP
from thoughtloom.strategies.decomp.functions import items
from thoughtloom.strategies.decomp.handlers import split_header
from thoughtloom.tasks import get as get_task
from thoughtloom.testing import ScriptedLM


# -- the letter task is all-model under handlers=lm -------------------------------------

NANCY = 'Take the letters at position 3 of the words in "Nancy Emma Abby Paul Janet" and concatenate them using a space.'


def letter_model(wrong_lookup: dict[str, str]):
    """A scripted model for letter_cat: the decomposers write the reference programs; the split,
    arr_position and merge prompts answer as their symbolic twins do, except the lookups in
    ``wrong_lookup`` (indexed list of a word -> the wrong letter)."""
    from thoughtloom.strategies.decomp import catalogue

    heads = {split_header(prompts.read(f"decomp/handlers/{n}"))[1].splitlines()[0]: n
             for n in ("split", "arr_position", "merge")}

    def reply(req):
        prompt = req.messages[-1].content
        if NEXT_STEP in prompt:
            tail = prompt.split(NEXT_STEP, 1)[1]
            question, done = re.search(r"QC: (.*)", tail).group(1), tail.count("\nA: ")
            ref = (catalogue._letter_cat_reference if question.startswith("Take")
                   else catalogue._str_position_reference)(question)
            return ref[done] if done < len(ref) else "[EOQ]"
        name = heads[prompt.splitlines()[0]]
        question = prompt.rsplit("Q: ", 1)[1].rsplit("\nA:", 1)[0]
        for word, letter in wrong_lookup.items():
            if name == "arr_position" and word in question:
                return letter
        value = symbolic_answer(name, question)
        return json.dumps(value) if isinstance(value, list) else value

    return reply


async def _letter_run(handlers: str, wrong: dict[str, str]):
    ctx = Context(lm=ScriptedLM(letter_model(wrong)), task=get_task("letter_cat"))
    cls = get("decomp")
    result = await cls(cls.Config(handlers=handlers)).run(Problem("q", NANCY), ctx)
    return result, ctx


async def test_handlers_lm_makes_every_letter_step_a_model_call():
    """§F.1.1: "문자 추출 하위 작업은 각 문자의 인덱스가 명시된 목록을 받았음에도 “Nancy”에서
    요청된 세 번째 문자 “n” 대신 “c”를 반환했다. 이로 인해 최종 예측이 “n m b u n”에서
    “c m b u n”으로 바뀌었다" (the letter-extraction sub-task, given the indexed list, returned
    "c" for the 3rd letter of "Nancy"; the prediction became "c m b u n" instead of "n m b u n").
    The lookup is a model call: a model that errs there gives exactly the paper's wrong answer,
    and every step at every depth is a prompt or a program, none a Python function."""
    nancy = "[(N, 1), (a, 2), (n, 3), (c, 4), (y, 5)]"
    result, ctx = await _letter_run("lm", {nancy: "c"})
    assert result.answer == "c m b u n"
    steps = ctx.trace.of_type("decomp_step")
    assert {s["kind"] for s in steps} == {"prompt", "program"}
    lookups = [s for s in steps if s["handler"] == "arr_position"]
    assert len(lookups) == 5 and all(s["calls"] == 1 for s in lookups)
    assert {s["handler"] for s in steps if s["kind"] == "prompt"} == {"split", "arr_position", "merge"}


async def test_handlers_symbolic_is_the_labelled_exact_option():
    """With handlers=symbolic the same program runs with exact Python functions (the
    controller check), so the model's wrong lookup cannot happen, and the trace says so."""
    nancy = "[(N, 1), (a, 2), (n, 3), (c, 4), (y, 5)]"
    result, ctx = await _letter_run("symbolic", {nancy: "c"})
    assert result.answer == "n m b u n"
    kinds = {s["handler"]: s["kind"] for s in ctx.trace.of_type("decomp_step")}
    assert kinds == {"split": "symbolic", "str_position": "program", "arr_position": "symbolic",
                     "merge": "symbolic"}


# -- the generalization axes stay unseen -------------------------------------------------

_LETTER_Q = re.compile(r'Take the (?:letters at position (\d+)|last letters) of the words in "([^"]+)" and '
                       r"concatenate them using a (\w+)\.")


def _letter_questions() -> dict[str, list[tuple[str, str, str]]]:
    found = {"letter_cat": [tuple(_LETTER_Q.fullmatch(e.question).groups()) for e in worked_examples("letter_cat")]}
    for name in ("letter_cot", "letter_cot_rollout", "letter_l2m"):
        found[name] = [tuple(_LETTER_Q.fullmatch(q).groups()) for _, q, _ in qa_pairs(name)]
    return found


def test_letter_demonstrations_leave_the_papers_generalization_axes_unseen():
    """§4.1: "평가는 학습에서 보지 못한 글자 위치, 더 긴 입력, 새로운 구분자를 다룬다" (the
    evaluation covers letter positions, longer inputs and a separator the demonstrations do not
    show). So every method's demonstrations are 3-word names joined with a space at positions
    other than 3, and the decomp-letter suite asks position 3 of 3, 4 and 5 words with a semicolon."""
    from thoughtloom.eval.reproduce import suites

    for name, questions in _letter_questions().items():
        assert len(questions) == 3, name
        for position, words, sep in questions:
            assert len(words.split()) == 3 and sep == "space" and position != "3", (name, words)
    assert [q[1] for q in _letter_questions()["letter_cat"]] == [q[1] for q in _letter_questions()["letter_cot"]]
    suite = suites.load("decomp-letter")
    files = [d.data for d in suite.datasets]
    assert files == [f"decomp_letter_cat/n{n}_eg100_pos2_semic.json" for n in (3, 4, 5)]
    letters = get_task("letter_cat").load(data_file("decomp_letter_cat", "n5_eg100_pos2_semic.json"))
    assert {e.problem.meta["position"] for e in letters} == {3} and {e.problem.meta["sep"] for e in letters} == {"semicolon"}
    assert {d.settings.get("handlers", "lm") for d in suite.methods} == {"lm"}


def _sequences(name: str, kind: str) -> list[str]:
    if kind == "decomposer":
        return [re.findall(r'"([^"]*)"', e.question)[0] for e in worked_examples(name)]
    return [re.findall(r'"([^"]*)"', q)[0] for _, q, _ in qa_pairs(name)]


def test_reversal_prompts_share_three_demonstrations_of_3_to_5_items():
    """§4.2: "모든 프롬프트는 항목 3–5개로 구성된 예시 세 개를 공유하고 항목 4개, 6개, 8개, 10개로
    구성된 시퀀스에서 평가된다" (all prompts share three examples of 3-5 items and are evaluated
    on sequences of 4, 6, 8 and 10 items)."""
    from thoughtloom.eval.reproduce import suites

    halving = _sequences("reverse_halving", "decomposer")
    assert sorted(len(items(s)) for s in halving) == [3, 4, 5]
    for name in ("reverse_cot", "reverse_unrolled"):
        assert _sequences(name, "handler") == halving, name
    suite = suites.load("decomp-reversal")
    assert [d.data for d in suite.datasets] == [f"decomp_list_reversal/test_{n}_normal_words.json" for n in (4, 6, 8, 10)]
    assert {m.settings["program"] for m in suite.methods} == {"reverse_halving", "list_reversal_cot",
                                                              "list_reversal_unrolled"}


async def test_the_unrolled_baseline_is_one_chain_read_by_the_cot_pattern():
    """§4.2: the unrolled decomposition writes the whole procedure out in one chain of thought;
    its answer is read as CoT's is."""
    chain = qa_pairs("reverse_unrolled")[1][2]
    lm = ScriptedLM([chain])
    cls = get("decomp-cot")
    result = await cls(cls.Config(program="list_reversal_unrolled")).run(
        Problem("q", 'Reverse the sequence "sock, bell, rope, fork, kite".'),
        Context(lm=lm, task=get_task("list_reversal")))
    assert result.answer == "kite, fork, rope, bell, sock" and lm.calls == 1


def test_the_decomp_suites_metrics_are_what_their_tasks_emit():
    from thoughtloom.eval.reproduce import suites

    for name in ("decomp-letter", "decomp-reversal", "decomp-commaqa"):
        for d in suites.load(name).datasets:
            task = get_task(d.task)
            emitted = task.score("x", ["x"] if d.task == "commaqa" else "x")
            assert set(d.metrics) <= set(emitted) and d.primary in emitted, (name, d.id)
