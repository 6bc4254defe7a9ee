"""The shipped DecomP prompts compute what they claim.

Every worked example in every decomposer prompt is replayed through the
controller twice: once with handlers that give the example's own ``A:`` lines
(the program runs, its operators expand as written and it ends with the
example's answer), and once with handlers that answer from the actual
sub-question the controller built (so a ``#k`` that names the wrong step gives
a different answer than the example claims). Every handler prompt's examples
are checked against what they ask: the symbolic twin where there is one, the
example's own facts for the CommaQA readers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from conftest import data_file
from thoughtloom import prompts
from thoughtloom.core.types import Problem
from thoughtloom.strategies import get
from thoughtloom.strategies.base import Context
from thoughtloom.strategies.decomp.catalogue import PROGRAMS, get_program
from thoughtloom.strategies.decomp.config import DecompConfig
from thoughtloom.strategies.decomp.controller import NEXT_STEP, Controller
from thoughtloom.strategies.decomp.functions import items, symbolic_function
from thoughtloom.strategies.decomp.handlers import Call, Handler, Outcome, split_header
from thoughtloom.strategies.decomp.language import parse_value, references
from thoughtloom.tasks import get as get_task
from thoughtloom.testing import ScriptedLM

from commaqa_kb import answer as kb_answer
from commaqa_kb import read_kb

#: The knowledge base the CommaQA decomposer examples describe (the decomposer never sees it).
DECOMPOSER_KB = read_kb("movie: Tovtovbel ; director: Novkel. movie: Zelpla ; director: Gorselyor. movie: Pelithrast ; directed by: Wenumb. movie: Corpla ; director: Wenumb. movie: Tovtovbel ; award: Quinumb. movie: Zelpla ; award: Quinumb. movie: Pelithrast ; awarded: Raststriith. movie: Corpla ; award: Quinumb. Novkel won the Ithumb award. Ithumb was awarded to Gorselyor. movie: Tovtovbel ; release year: 2000. movie: Zelpla ; release year: 1976. movie: Pelithrast ; release year: 2018. movie: Corpla ; year: 2017. Wenumb acted in the movie Tovtovbel. Gorselyor was an actor in the movie Tovtovbel. Wenumb acted in the movie Zelpla. Gorselyor was an actor in the movie Zelpla. Novkel was an actor in the movie Pelithrast. Gorselyor acted in the movie Pelithrast. Wenumb was an actor in the movie Corpla. Gorselyor acted in the movie Corpla. Wenumb was born in 1944. Gorselyor was born in the year 1944. Novkel was born in 1985. Wenumb is from the country of Corstri. Gorselyor is from the country of Corstri. Novkel grew up in the nation of Lumnov. Wenumb was one of the producers of the movie Tovtovbel. Novkel was one of the producers of the movie Tovtovbel. Wenumb produced the movie Zelpla with others. Gorselyor produced the movie Zelpla with others. Gorselyor produced the movie Pelithrast with others. Novkel was one of the producers of the movie Pelithrast. Gorselyor produced the movie Corpla with others. Wenumb was one of the producers of the movie Corpla. Gorselyor was one of the writers for the movie Tovtovbel. Novkel was one of the writers for the movie Zelpla. movie: Zelpla ; written by: Wenumb. movie: Pelithrast ; writer: Wenumb. movie: Corpla ; written by: Wenumb. movie: Corpla ; written by: Novkel.")

TASK_OF = {"letter_cat": "letter_cat", "str_position": "letter_cat", "reverse_halving": "list_reversal",
           "reverse_tail": "list_reversal", "commaqa_fine": "commaqa", "commaqa_coarse": "commaqa",
           "odqa_decomp": "hotpotqa"}


@dataclass
class Worked:
    question: str
    lines: list[str]  # the QS lines, without "QS: "
    answers: list[str]  # the A: lines, without "A: "


def worked_examples(name: str) -> list[Worked]:
    text = split_header(prompts.read(f"decomp/decomposers/{name}"))[1]
    out = []
    for block in text.split("\n\n"):
        rows = block.strip().splitlines()
        if not rows or not rows[0].startswith("QC: "):
            continue
        body = rows[1:]
        assert body[-1] == "QS: [EOQ]", f"{name}: {rows[0]} does not end with QS: [EOQ]"
        steps, answers = body[:-1:2], body[1:-1:2]
        assert all(s.startswith("QS: ") for s in steps) and all(a.startswith("A: ") for a in answers), rows[0]
        out.append(Worked(rows[0][4:], [s[4:] for s in steps], [a[3:] for a in answers]))
    assert out, f"{name} has no worked example"
    return out


def decomposer_programs() -> list[str]:
    shipped = prompts.names("decomp/decomposers")
    named = {p.decomposer: n for n, p in PROGRAMS.items() if p.decomposer}
    assert shipped <= set(named), f"decomposer prompts no program uses: {shipped - set(named)}"
    return sorted(named[d] for d in shipped)


class Answering(Handler):
    """Answers each call with ``answer(handler, step, item, question)``."""

    kind = "prompt"

    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    async def answer(self, calls, env):
        out = []
        for c in calls:
            step, item = (int(x) for x in c.run_id.split(".")[-2:])
            out.append(Outcome(self.fn(self.name, step, item, c.question)))
        return out


async def replay(program: str, example: Worked, answer_fn):
    """Run the example's program through the controller: the decomposer replies with the
    example's QS lines, every handler with ``answer_fn``."""

    def decomposer(req):
        prompt = req.messages[-1].content
        assert NEXT_STEP in prompt, "only the decomposer should reach the model"
        done = prompt.split(NEXT_STEP, 1)[1].count("\nA: ")
        return example.lines[done] if done < len(example.lines) else "[EOQ]"

    ctx = Context(lm=ScriptedLM(decomposer), task=get_task(TASK_OF[program]))
    controller = Controller(ctx, DecompConfig(program=program), k=4)
    controller.handler = lambda name, program=None: Answering(name, answer_fn)
    (run,) = await controller.run(get_program(program), [Call(example.question)], depth=0)
    return run


ALL = [(p, i) for p in decomposer_programs() for i in range(len(worked_examples(PROGRAMS[p].decomposer)))]


@pytest.mark.parametrize("program,i", ALL)
async def test_every_worked_example_replays_to_its_own_answer(program, i):
    example = worked_examples(PROGRAMS[program].decomposer)[i]

    def scripted(name, step, item, question):
        value = parse_value(example.answers[step - 1])
        line = example.lines[step - 1]
        if "[project_values_flat_unique]" in line:
            return value  # every item's answer is the merged list: flattening and de-duplicating keeps it
        return value[item - 1] if "[project_values]" in line else value

    run = await replay(program, example, scripted)
    assert run.status == "ok" and run.format_errors == 0, run.render()
    assert [s.answer for s in run.steps] == [parse_value(a) for a in example.answers]
    assert run.final() == parse_value(example.answers[-1])


def _symbolic(name, question):
    fn = symbolic_function(name)
    assert fn is not None, f"no symbolic twin for {name}"
    return fn(question)


def content_oracle(program: str):
    """What each handler must answer for the sub-question the controller actually built."""
    if program.startswith("commaqa"):
        return lambda name, step, item, question: kb_answer(DECOMPOSER_KB, question)
    if program.startswith("reverse"):
        def reverse(name, step, item, question):
            if name == "reverse":  # the program itself, on a shorter sequence
                return ", ".join(reversed(items(re.findall(r'"([^"]*)"', question)[-1])))
            return _symbolic(name, question)
        return reverse
    return lambda name, step, item, question: _symbolic(name, question)


def _same(got, claimed):
    if isinstance(got, list) and isinstance(claimed, list) and all(isinstance(x, str) for x in got):
        return sorted(got) == sorted(claimed)  # CommaQA's merged lists are sets
    return got == claimed


@pytest.mark.parametrize("program,i", [(p, i) for p, i in ALL if p != "odqa_decomp"])
async def test_every_reference_names_the_step_whose_answer_the_question_needs(program, i):
    """Each handler answers from the question the controller built, so the step's answer is
    what the example claims only if its #k carries the right earlier answer."""
    example = worked_examples(PROGRAMS[program].decomposer)[i]
    run = await replay(program, example, content_oracle(program))
    assert run.status == "ok", run.render()
    for step, claimed in zip(run.steps, example.answers):
        assert _same(step.answer, parse_value(claimed)), f"{step.line}: computed {step.answer!r}, the example says {claimed}"


@pytest.mark.parametrize("i", range(len(worked_examples("odqa_decomp"))))
def test_odqa_examples_write_answers_in_and_end_on_the_original_question(i):
    """The ODQA decomposer writes earlier answers into later questions (no #k) and ends by
    asking multihop_titleqa the original question."""
    example = worked_examples("odqa_decomp")[i]
    assert not any(references(line) for line in example.lines)
    assert example.lines[-1] == f'(multihop_titleqa) "{example.question}"'


async def test_the_check_catches_a_reference_to_the_wrong_step():
    """The old CommaQA examples asked 'Which awards were given to #1?' where #1 holds the
    people; the content replay computes the people's awards, not the movies'."""
    example = worked_examples("commaqa_fine")[0]
    assert example.lines[2].endswith('"Which awards were given to #2?"')
    wrong = Worked(example.question, example.lines[:2] + [example.lines[2].replace("#2", "#1")], example.answers)
    run = await replay("commaqa_fine", wrong, content_oracle("commaqa_fine"))
    assert not _same(run.steps[2].answer, parse_value(example.answers[2]))


# -- handler prompts ------------------------------------------------------------------


def qa_pairs(name: str) -> list[tuple[str, str, str]]:
    """(facts, question, answer) of each example of a handler prompt (facts '' where it has none)."""
    text = split_header(prompts.read(f"decomp/handlers/{name}"))[1]
    out, facts = [], ""
    for line in text.splitlines():
        if line.startswith("Facts: "):
            facts = line[7:]
        elif line.startswith("Q: "):
            question = line[3:]
        elif line.startswith("A: ") and "$question" not in question:
            out.append((facts, question, line[3:]))
    return out


SYMBOLIC_TWINS = ["split", "arr_position", "merge", "reverse_small", "split_half", "swap_concat",
                  "first_item", "rest_items", "append_item"]


@pytest.mark.parametrize("name", SYMBOLIC_TWINS)
def test_every_handler_example_is_what_its_symbolic_twin_answers(name):
    pairs = qa_pairs(name)
    assert len(pairs) >= 2
    for _, question, answer in pairs:
        got = _symbolic(name, question)
        assert got == parse_value(answer), f"{name}: {question} -> {got!r}, the prompt says {answer}"


@pytest.mark.parametrize("name", ["simp_qa", "pos_qa", "aw_qa", "qa"])
def test_every_commaqa_reader_example_is_what_its_facts_say(name):
    pairs = qa_pairs(name)
    for facts, question, answer in pairs:
        assert facts, f"{name}: {question} has no facts"
        assert sorted(kb_answer(read_kb(facts), question)) == sorted(json.loads(answer)), question


def _question_type(question: str) -> str:
    """The question with its entity (a name or a year) left out."""
    return re.sub(r"(?<=\s)([A-Z]\S*|\d{4})(?=[\s?])", "X", question)


def test_fine_handlers_have_more_examples_of_each_question_type_than_the_coarse_reader():
    """§4.3: "더 세분화된 질문 유형별 처리기는 유형당 더 많은 예시를 제공한다" (the finer
    per-question-type handlers provide more examples per type). So each question type a fine
    decomposer example asks has more examples in its fine handler than in the coarse qa prompt,
    and every fact set is a full knowledge base (people, movies and awards together)."""
    from collections import Counter

    coarse = Counter(_question_type(q) for _, q, _ in qa_pairs("qa"))
    for example in worked_examples("commaqa_fine"):
        for line in example.lines:
            handler, question = re.match(r'\((\w+)\)(?: \[\w+\])? "(.*)"$', line).groups()
            kind = _question_type(re.sub(r"#\d", "Someone", question))
            fine = Counter(_question_type(q) for _, q, _ in qa_pairs(handler))
            assert fine[kind] >= 2 and fine[kind] > coarse[kind], (handler, kind, fine[kind], coarse[kind])
    for name in ("simp_qa", "pos_qa", "aw_qa", "qa"):
        for facts, _, _ in qa_pairs(name):
            kb = read_kb(facts)
            assert {"directed_by", "movie_award", "acted", "born", "country", "produced"} <= set(kb)


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
        value = _symbolic(name, question)
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


def test_every_commaqa_cot_example_ends_with_what_its_facts_answer():
    from commaqa_kb import solve

    pairs = qa_pairs("commaqa_cot")
    assert len(pairs) == 3
    for facts, question, chain in pairs:
        claimed = json.loads(chain.rsplit("So the answer is: ", 1)[1])
        assert sorted(solve(read_kb(facts), question)) == sorted(claimed), question
    for example in worked_examples("commaqa_fine"):  # and the decomposer examples, over their own KB
        assert sorted(solve(DECOMPOSER_KB, example.question)) == sorted(parse_value(example.answers[-1]))


def test_the_chains_answer_every_commaqa_question_from_its_facts():
    """The sub-question templates our prompts teach answer every question of both test splits
    from its facts: the decomposition the prompts show is the data's own."""
    from commaqa_kb import solve

    for name in ("iid_test_eg100.json", "compgen_test_eg300.json"):
        path = data_file("commaqa_e", name)
        for block in json.loads(path.read_text(encoding="utf-8")).values():
            kb = read_kb(block["passage"])
            for qa in block["qa_pairs"]:
                assert sorted(solve(kb, qa["question"])) == sorted(qa["answer"]["spans"]), qa["question"]


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


@pytest.mark.parametrize("program", ["letter_cat", "str_position", "reverse_halving", "reverse_tail"])
def test_the_reference_programs_write_what_the_worked_examples_write(program):
    """The reference program (the controller check's decomposer) writes each worked example's
    own steps, so the check runs the programs the prompts teach."""
    for example in worked_examples(PROGRAMS[program].decomposer):
        assert get_program(program).reference(example.question) == example.lines
