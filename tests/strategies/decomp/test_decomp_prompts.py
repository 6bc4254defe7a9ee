"""The shipped DecomP prompts compute what they claim.

Every worked example in every decomposer prompt is replayed through the
controller twice: once with handlers that give the example's own ``A:`` lines
(the program runs, its operators expand as written and it ends with the
example's answer), and once with handlers that answer from the actual
sub-question the controller built (so a ``#k`` that names the wrong step gives
a different answer than the example claims). Every handler prompt's examples
are checked against what they ask: the symbolic twin where there is one, the
example's own facts for the CommaQA readers. (The letter task's all-model run
and the generalization axes: test_decomp_generalization.py.)
"""

from __future__ import annotations

import json
import re

import pytest

from support.commaqa_kb import answer as kb_answer
from support.commaqa_kb import DECOMPOSER_KB, read_kb
from conftest import data_file
from support.decomp_prompt_files import Worked, qa_pairs, symbolic_answer, worked_examples
from thoughtloom import prompts
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.catalogue import PROGRAMS, get_program
from thoughtloom.strategies.decomp.config import DecompConfig
from thoughtloom.strategies.decomp.controller import NEXT_STEP, Controller
from thoughtloom.strategies.decomp.functions import items
from thoughtloom.strategies.decomp.handlers import Call, Handler, Outcome
from thoughtloom.strategies.decomp.language import parse_value, references
from thoughtloom.tasks import get as get_task
from thoughtloom.testing import ScriptedLM

TASK_OF = {"letter_cat": "letter_cat", "letter_cat_each": "letter_cat", "str_position": "letter_cat", "reverse_halving": "list_reversal",
           "reverse_tail": "list_reversal", "commaqa_fine": "commaqa", "commaqa_coarse": "commaqa",
           "odqa_decomp": "hotpotqa", "odqa_decomp_cot": "hotpotqa", "qa_decomp": "qa"}

#: What a reader knows for the own-questions decomposer's examples: each answer is read off the question the
#: controller built, so a #k naming the wrong step asks a question this does not know.
QA_FACTS = {"What is the capital of Japan?": "Tokyo", "Who wrote Pride and Prejudice?": "Jane Austen",
            "In which year was Jane Austen born?": "1775", "What is the capital of Hungary?": "Budapest",
            "Which river flows through Budapest?": "the Danube", "What is the tallest mountain in Africa?":
            "Kilimanjaro", "How high is Kilimanjaro in metres?": "5895", "How high is Mont Blanc in metres?": "4806",
            "Is 5895 metres more than 4806 metres?": "yes"}


def decomposer_programs() -> list[str]:
    shipped = prompts.names("decomp/decomposers")
    named: dict[str, str] = {}  # each file replayed once, under the first program that reads it
    for n, p in PROGRAMS.items():  # (commaqa_fine_short reads commaqa_fine's with other reader files)
        if p.decomposer:
            named.setdefault(p.decomposer, n)
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


async def replay(program: str, example: Worked, answer_fn, task: str = ""):
    """Run the example's program through the controller: the decomposer replies with the
    example's QS lines, every handler with ``answer_fn``."""

    def decomposer(req):
        prompt = req.messages[-1].content
        assert NEXT_STEP in prompt, "only the decomposer should reach the model"
        done = prompt.split(NEXT_STEP, 1)[1].count("\nA: ")
        return example.lines[done] if done < len(example.lines) else "[EOQ]"

    ctx = Context(lm=ScriptedLM(decomposer), task=get_task(task or TASK_OF[program]))
    controller = Controller(ctx, DecompConfig(program=program), k=4)
    controller.handler = lambda name, program=None: Answering(name, answer_fn)
    (run,) = await controller.run(get_program(program), [Call(example.question)], depth=0)
    return run


ALL = [(p, i) for p in decomposer_programs() for i in range(len(worked_examples(PROGRAMS[p].decomposer)))]
#: the per-dataset decomposer prompts replayed too (the program, the task whose prompt it reads)
ALL_TASKS = [(p, i, "") for p, i in ALL] + [
    ("odqa_decomp", i, t) for t in ("hotpotqa", "2wiki", "musique") for i in range(len(worked_examples(f"{t}/odqa_decomp")))]


@pytest.mark.parametrize("program,i,task", ALL_TASKS)
async def test_every_worked_example_replays_to_its_own_answer(program, i, task):
    decomposer = PROGRAMS[program].decomposer
    example = worked_examples(f"{task}/{decomposer}" if task else decomposer)[i]

    def scripted(name, step, item, question):
        value = parse_value(example.answers[step - 1])
        line = example.lines[step - 1]
        if "[project_values_flat_unique]" in line:
            return value  # every item's answer is the merged list: flattening and de-duplicating keeps it
        return value[item - 1] if "[project_values]" in line else value

    run = await replay(program, example, scripted, task)
    assert run.status == "ok" and run.format_errors == 0, run.render()
    assert [s.answer for s in run.steps] == [parse_value(a) for a in example.answers]
    assert run.final() == parse_value(example.answers[-1])


def content_oracle(program: str):
    """What each handler must answer for the sub-question the controller actually built."""
    if program.startswith("commaqa"):
        return lambda name, step, item, question: kb_answer(DECOMPOSER_KB, question)
    if program.startswith("reverse"):
        def reverse(name, step, item, question):
            if name == "reverse":  # the program itself, on a shorter sequence
                return ", ".join(reversed(items(re.findall(r'"([^"]*)"', question)[-1])))
            return symbolic_answer(name, question)
        return reverse
    if program == "qa_decomp":
        return lambda name, step, item, question: QA_FACTS.get(question, f"unknown: {question}")
    return lambda name, step, item, question: symbolic_answer(name, question)


def _same(got, claimed):
    if isinstance(got, list) and isinstance(claimed, list) and all(isinstance(x, str) for x in got):
        return sorted(got) == sorted(claimed)  # CommaQA's merged lists are sets
    return got == claimed


@pytest.mark.parametrize("program,i", [(p, i) for p, i in ALL if p not in ("odqa_decomp", "odqa_decomp_cot")])
async def test_every_reference_names_the_step_whose_answer_the_question_needs(program, i):
    """Each handler answers from the question the controller built, so the step's answer is
    what the example claims only if its #k carries the right earlier answer."""
    example = worked_examples(PROGRAMS[program].decomposer)[i]
    run = await replay(program, example, content_oracle(program))
    assert run.status == "ok", run.render()
    for step, claimed in zip(run.steps, example.answers):
        assert _same(step.answer, parse_value(claimed)), f"{step.line}: computed {step.answer!r}, the example says {claimed}"


ODQA_TASKS = ("hotpotqa", "2wiki", "musique")
ODQA_FILES = ["odqa_decomp"] + [f"{t}/odqa_decomp" for t in ODQA_TASKS]


@pytest.mark.parametrize("name,i", [(n, i) for n in ODQA_FILES for i in range(len(worked_examples(n)))])
def test_odqa_examples_write_answers_in_and_end_on_the_original_question(name, i):
    """The ODQA decomposer writes earlier answers into later questions (no #k) and ends by
    asking multihop_titleqa the original question."""
    example = worked_examples(name)[i]
    assert not any(references(line) for line in example.lines)
    assert example.lines[-1] == f'(multihop_titleqa) "{example.question}"'
    assert all(line.startswith('(retrieve_odqa) "') for line in example.lines[:-1])


def _retrieved(example: Worked) -> list[str]:
    return [re.match(r'\(retrieve_odqa\) "(.*)"$', line).group(1) for line in example.lines[:-1]]


def test_each_odqa_dataset_has_its_own_decomposer_and_readers_built_on_its_worked_questions():
    """G.6: each dataset has its own prompts; "2wikimultihopqa 분해 프롬프트는 ... 두 영화감독과 각
    감독의 국적을 검색한 뒤 국적이 서로 다르다고 답한다" (the 2Wiki decomposition prompt retrieves
    two film directors and each one's nationality and answers that they differ), and the issue
    names 2Wiki's comparison and kinship chains and MuSiQue's 3-hop chains. So 2Wiki's worked
    questions hold a director-nationality comparison answered "no" and a kinship chain, every
    MuSiQue worked question but 2-hop ones takes 3 retrievals (at least one does), and each
    dataset's readers are built on its own decomposer's questions: the multi-hop reader's
    demonstrations are worked questions, the single-hop reader's are their sub-questions."""
    for task in ODQA_TASKS:
        examples = worked_examples(f"{task}/odqa_decomp")
        questions = {e.question for e in examples}
        subs = {q for e in examples for q in _retrieved(e)}
        multi, single = qa_pairs(f"{task}/multihop_titleqa"), qa_pairs(f"{task}/singlehop_titleqa")
        assert multi and {q for _, q, _ in multi} <= questions, task
        assert single and {q for _, q, _ in single} <= subs, task
        answers = {e.question: e.answers[-1] for e in examples}
        assert all(answers[q] == a for _, q, a in multi), task
    wiki = worked_examples("2wiki/odqa_decomp")
    assert any(e.answers[-1] == "no" and sum("nationality" in q for q in _retrieved(e)) == 2
               and sum(q.startswith("Who directed") for q in _retrieved(e)) == 2 for e in wiki)
    assert any("grandfather" in e.question and all("father of" in q for q in _retrieved(e)) for e in wiki)
    assert max(len(_retrieved(e)) for e in worked_examples("musique/odqa_decomp")) >= 3
    assert all(len(_retrieved(e)) >= 2 for e in worked_examples("musique/odqa_decomp"))


async def test_an_odqa_task_runs_its_own_prompts():
    """The default Decomp-Ctxt and NoDecomp-Ctxt programs of 2Wiki send the 2Wiki decomposer
    and readers (the task's own prompt files win over the shared ones)."""
    from thoughtloom.core.types import Passage, Problem
    from thoughtloom.strategies import get
    from thoughtloom.testing import StaticRetriever

    passages = [Passage("p1", "Moon Garden is a film directed by Ida Vance.", "Moon Garden")]

    def reply(req):
        prompt = req.messages[-1].content
        if NEXT_STEP in prompt:
            done = prompt.split(NEXT_STEP, 1)[1].count("\nA: ")
            return ['(retrieve_odqa) "Who directed Moon Garden?"', '(multihop_titleqa) "Who directed Moon Garden?"',
                    "[EOQ]"][min(done, 2)]
        return "Ida Vance"

    for strategy in ("decomp", "decomp-nodecomp-ctxt"):
        lm = ScriptedLM(reply)
        cls = get(strategy)
        result = await cls(cls.Config()).run(Problem("q", "Who directed Moon Garden?"),
                                             Context(lm=lm, task=get_task("2wiki"), retriever=StaticRetriever(passages)))
        assert result.answer == "Ida Vance"
        sent = [r.messages[-1].content for r in lm.requests]
        assert all("Winter Harbour" in p or "Elise Varga" in p for p in sent), strategy


async def test_the_check_catches_a_reference_to_the_wrong_step():
    """The old CommaQA examples asked 'Which awards were given to #1?' where #1 holds the
    people; the content replay computes the people's awards, not the movies'."""
    example = worked_examples("commaqa_fine")[0]
    assert example.lines[2].endswith('"Which awards were given to #2?"')
    wrong = Worked(example.question, example.lines[:2] + [example.lines[2].replace("#2", "#1")], example.answers)
    run = await replay("commaqa_fine", wrong, content_oracle("commaqa_fine"))
    assert not _same(run.steps[2].answer, parse_value(example.answers[2]))


# -- handler prompts ------------------------------------------------------------------


SYMBOLIC_TWINS = ["split", "arr_position", "merge", "reverse_small", "split_half", "swap_concat",
                  "first_item", "rest_items", "append_item"]


@pytest.mark.parametrize("name", SYMBOLIC_TWINS)
def test_every_handler_example_is_what_its_symbolic_twin_answers(name):
    pairs = qa_pairs(name)
    assert len(pairs) >= 2
    for _, question, answer in pairs:
        got = symbolic_answer(name, question)
        assert got == parse_value(answer), f"{name}: {question} -> {got!r}, the prompt says {answer}"


@pytest.mark.parametrize("name", ["simp_qa", "pos_qa", "aw_qa", "qa", "simp_qa_short", "pos_qa_short", "aw_qa_short",
                                  "qa_short"])
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
    and every fact set is a full knowledge base (people, movies and awards together). An
    example counts once: the same question over the same facts twice is one example, and no
    prompt holds such a repeat (simp_qa asked "Who were born in the year 1940?" over the same
    facts twice, so its count of that type was one too many)."""
    from collections import Counter

    for name in ("simp_qa", "pos_qa", "aw_qa", "qa"):
        pairs = qa_pairs(name)
        repeated = [q for (f, q), n in Counter((f, q) for f, q, _ in pairs).items() if n > 1]
        assert not repeated, (name, repeated)

    def distinct(name):
        return Counter(_question_type(q) for _, q in {(f, q) for f, q, _ in qa_pairs(name)})

    coarse = distinct("qa")
    for example in worked_examples("commaqa_fine"):
        for line in example.lines:
            handler, question = re.match(r'\((\w+)\)(?: \[\w+\])? "(.*)"$', line).groups()
            kind = _question_type(re.sub(r"#\d", "Someone", question))
            fine = distinct(handler)
            assert fine[kind] >= 2 and fine[kind] > coarse[kind], (handler, kind, fine[kind], coarse[kind])
    for name in ("simp_qa", "pos_qa", "aw_qa", "qa"):
        for facts, _, _ in qa_pairs(name):
            kb = read_kb(facts)
            assert {"directed_by", "movie_award", "acted", "born", "country", "produced"} <= set(kb)


def test_every_commaqa_cot_example_ends_with_what_its_facts_answer():
    from support.commaqa_kb import solve

    for name in ("commaqa_cot", "commaqa_cot_short"):
        for facts, question, chain in qa_pairs(name):
            claimed = json.loads(chain.rsplit("So the answer is: ", 1)[1])
            assert sorted(solve(read_kb(facts), question)) == sorted(claimed), (name, question)
    for example in worked_examples("commaqa_fine"):  # and the decomposer examples, over their own KB
        assert sorted(solve(DECOMPOSER_KB, example.question)) == sorted(parse_value(example.answers[-1]))


def _template(question: str) -> str:
    from support.commaqa_kb import CHAINS

    return next(p for p, _ in CHAINS if re.fullmatch(p, question))


def test_commaqa_cot_works_the_decomposers_six_questions_one_per_iid_template():
    """G.3.1 and G.3.3 build the CoT and the decomposition prompts on the same worked questions.
    So CoT's worked questions are the decomposer's (fine and coarse), word for word, over the
    knowledge base the decomposer examples describe, and they are one per question template of
    the i.i.d. test file: each i.i.d. test question has a worked question of its type in every
    arm, not in DecomP's alone (the old CoT prompt worked 3 of the 6 types, 51 of the 100)."""
    questions = [e.question for e in worked_examples("commaqa_fine")]
    assert [e.question for e in worked_examples("commaqa_coarse")] == questions
    pairs = qa_pairs("commaqa_cot")
    assert [q for _, q, _ in pairs] == questions
    assert all(read_kb(facts) == DECOMPOSER_KB for facts, _, _ in pairs)
    templates = [_template(q) for q in questions]
    data = json.loads(data_file("commaqa_e", "iid_test_eg100.json").read_text(encoding="utf-8"))
    iid = {_template(qa["question"]) for block in data.values() for qa in block["qa_pairs"]}
    assert len(set(templates)) == len(templates) and set(templates) == iid


def test_the_chains_answer_every_commaqa_question_from_its_facts():
    """The sub-question templates our prompts teach answer every question of both test splits
    from its facts: the decomposition the prompts show is the data's own."""
    from support.commaqa_kb import solve

    for name in ("iid_test_eg100.json", "compgen_test_eg300.json"):
        path = data_file("commaqa_e", name)
        for block in json.loads(path.read_text(encoding="utf-8")).values():
            kb = read_kb(block["passage"])
            for qa in block["qa_pairs"]:
                assert sorted(solve(kb, qa["question"])) == sorted(qa["answer"]["spans"]), qa["question"]


@pytest.mark.parametrize("program", ["letter_cat", "str_position", "reverse_halving", "reverse_tail"])
def test_the_reference_programs_write_what_the_worked_examples_write(program):
    """The reference program (the controller check's decomposer) writes each worked example's
    own steps, so the check runs the programs the prompts teach."""
    for example in worked_examples(PROGRAMS[program].decomposer):
        assert get_program(program).reference(example.question) == example.lines
