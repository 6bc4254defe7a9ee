"""The letter task is all-model under handlers=lm, and the paper's generalization axes stay unseen.

Every letter step is a model call (the paper's §F.1.1 error case shows the lookup
is one); every prompt file of every arm (handlers included) is built from the same
three 3-word, space-separated names at positions the tests never ask; every
reversal prompt of every arm shares the same three demonstrations of 3-5 items;
every short CommaQA prompt (App. G.4) shows one knowledge base and only the
decomposers' six worked questions and their hops; the decomp suites name
metrics their tasks emit.
"""

from __future__ import annotations

import json
import re

from conftest import data_file
from support.commaqa_kb import DECOMPOSER_KB, read_kb
from support.decomp_prompt_files import arm_prompts, qa_pairs, symbolic_answer, worked_examples
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


# -- every arm sees the same demonstrations, and the generalization axes stay unseen ------

LETTER_ARMS = ("letter_cat", "letter_cat_cot", "letter_cat_cot_rollout", "letter_cat_l2m")
REVERSAL_ARMS = ("reverse_halving", "reverse_tail", "list_reversal_cot", "list_reversal_unrolled")

_LETTER_Q = re.compile(r'Take the (?:letters at position (\d+)|last letters) of the words in "([^"]+)" and '
                       r"concatenate them using a (\w+)\.")
_NAME = re.compile(r'"([A-Z][a-z]*(?: [A-Z][a-z]*)*)"')  # a quoted name, or a quoted word of one
_LIST = re.compile(r"\[([^\[\]]*)\]")


def _letter_questions() -> dict[str, list[tuple[str, str, str]]]:
    found = {"letter_cat": [tuple(_LETTER_Q.fullmatch(e.question).groups()) for e in worked_examples("letter_cat")]}
    for name in ("letter_cot", "letter_cot_rollout", "letter_l2m"):
        found[name] = [tuple(_LETTER_Q.fullmatch(q).groups()) for _, q, _ in qa_pairs(name)]
    return found


def _list_items(body: str) -> list[str]:
    pairs = re.findall(r"\((\w+), \d+\)", body)
    return pairs if pairs else re.findall(r'"([^"]*)"', body)


def letter_leaks(files: dict[str, str], names: list[str], positions: set[int], words: int) -> list[str]:
    """What a letter prompt shows that the test must leave unseen: the test's separator (the
    semicolon), a position it asks, a name longer than ``words`` words, or a word that is not
    from the shared worked questions' ``names``."""
    vocab = {w for n in names for w in n.split()}
    leaks = []
    for path, text in files.items():
        if ";" in text or re.search(r"semi-?colon", text, re.I):
            leaks.append(f"{path}: the semicolon")
        leaks += [f"{path}: position {p}" for p in map(int, re.findall(r"position (\d+)", text)) if p in positions]
        shown = [n.split() for n in _NAME.findall(text)] + [_list_items(b) for b in _LIST.findall(text)]
        for group in shown:
            long = [w for w in group if len(w) > 1]  # words, not letters
            if len(long) > words:
                leaks.append(f"{path}: {len(long)} words {long}")
            leaks += [f"{path}: {w!r} is no word of the shared names" for w in long if w not in vocab]
    return leaks


def test_every_letter_prompt_of_every_arm_leaves_the_papers_generalization_axes_unseen():
    """§4.1: "평가는 학습에서 보지 못한 글자 위치, 더 긴 입력, 새로운 구분자를 다룬다" (the
    evaluation covers letter positions, longer inputs and a separator the demonstrations do not
    show). So every prompt file any arm reads -- decomposers, the nested str_position program and
    every handler (split, arr_position, merge) as well as the CoT, rollout and least-to-most
    prompts -- is built from the same three 3-word names joined with a space, and none shows the
    test's semicolon, a position the test asks, or a name longer than the shortest test name."""
    from thoughtloom.eval.reproduce import suites

    questions = _letter_questions()
    names = [q[1] for q in questions["letter_cat"]]
    for name, qs in questions.items():
        assert [q[1] for q in qs] == names and all(sep == "space" for *_, sep in qs), name
    suite = suites.load("decomp-letter")
    assert [d.data for d in suite.datasets] == [f"decomp_letter_cat/n{n}_eg100_pos2_semic.json" for n in (3, 4, 5)]
    test = [e.problem.meta for d in suite.datasets
            for e in get_task("letter_cat").load(data_file(*d.data.split("/")))]
    assert {m["sep"] for m in test} == {"semicolon"}
    files = {path: text for arm in LETTER_ARMS for path, text in arm_prompts(arm).items()}
    assert {"handlers/split", "handlers/arr_position", "handlers/merge", "decomposers/str_position",
            "handlers/letter_cot", "handlers/letter_l2m"} <= set(files)
    assert letter_leaks(files, names, {m["position"] for m in test}, min(m["n"] for m in test)) == []
    assert {d.settings.get("handlers", "lm") for d in suite.methods} == {"lm"}


def test_the_letter_leak_check_catches_a_semicolon_or_position_3_demo():
    """The check above fails on the leaks the issue names: a semicolon demo added to merge.txt,
    a position-3 demo added to arr_position.txt, a 4-word name added to split.txt."""
    names = [q[1] for q in _letter_questions()["letter_cat"]]
    files = arm_prompts("letter_cat")
    assert letter_leaks(files, names, {3}, 3) == []
    for path, demo in (("handlers/merge", 'Q: Concatenate ["A", "M", "T"] using a semi-colon.\nA: A;M;T'),
                       ("handlers/arr_position", "Q: What is at position 3 in [(G, 1), (r, 2), (a, 3)]?\nA: a"),
                       ("handlers/split", 'Q: What are the words in "Alan Mathison Turing Grace"?')):
        assert letter_leaks({**files, path: files[path] + "\n\n" + demo}, names, {3}, 3), path


_SEQ = re.compile(r'"([a-z]+(?:, [a-z]+)*)"|^A: ([a-z]+(?:, [a-z]+)*)$|answer is: ([a-z]+(?:, [a-z]+)*)', re.M)


def reversal_leaks(files: dict[str, str], shared: list[str]) -> list[str]:
    """What a reversal prompt shows beyond the three shared demonstrations: a sequence longer
    than the longest of them, an item that is none of theirs, a position past their length,
    another separator."""
    vocab = {x for s in shared for x in items(s)}
    longest = max(len(items(s)) for s in shared)
    leaks = []
    for path, text in files.items():
        leaks += [f"{path}: another separator in {q!r}" for q in re.findall(r'"([^"]*)"', text) if ";" in q]
        for seq in (next(g for g in m.groups() if g) for m in _SEQ.finditer(text)):
            if len(items(seq)) > longest:
                leaks.append(f"{path}: {len(items(seq))} items ({seq})")
            leaks += [f"{path}: {x!r} is no item of the shared demonstrations" for x in items(seq) if x not in vocab]
        for number, item in re.findall(r"\b(\d+): ([a-z]+)", text):
            if int(number) > longest or item not in vocab:
                leaks.append(f"{path}: position {number}: {item}")
    return leaks


def _top_questions(program: str) -> list[str]:
    from thoughtloom.strategies.decomp.catalogue import get_program

    p = get_program(program)
    if p.decomposer:
        return [e.question for e in worked_examples(p.decomposer)]
    handler = re.match(r"\((\w+)\)", p.reference("")[0]).group(1)
    return [q for _, q, _ in qa_pairs(handler)]


def test_every_reversal_prompt_of_every_arm_shares_three_demonstrations_of_3_to_5_items():
    """§4.2: "모든 프롬프트는 항목 3–5개로 구성된 예시 세 개를 공유하고 항목 4개, 6개, 8개, 10개로
    구성된 시퀀스에서 평가된다" (all prompts share three examples of 3-5 items and are evaluated
    on sequences of 4, 6, 8 and 10 items). So every arm's worked questions are the same three
    lists of 3, 4 and 5 items, and every prompt file any arm reads -- handlers included
    (split_half, reverse_small, swap_concat, and the tail variant's first_item, rest_items,
    append_item) -- shows only those lists and pieces of them: no sequence of 6 or more items."""
    from thoughtloom.eval.reproduce import suites

    shared = [re.findall(r'"([^"]*)"', q)[0] for q in _top_questions("reverse_halving")]
    assert sorted(len(items(s)) for s in shared) == [3, 4, 5]
    for arm in REVERSAL_ARMS:
        assert [re.findall(r'"([^"]*)"', q)[0] for q in _top_questions(arm)] == shared, arm
    files = {path: text for arm in REVERSAL_ARMS for path, text in arm_prompts(arm).items()}
    assert {"handlers/split_half", "handlers/reverse_small", "handlers/swap_concat", "handlers/append_item",
            "handlers/reverse_cot", "handlers/reverse_unrolled"} <= set(files)
    assert reversal_leaks(files, shared) == []
    suite = suites.load("decomp-reversal")
    assert [d.data for d in suite.datasets] == [f"decomp_list_reversal/test_{n}_normal_words.json" for n in (4, 6, 8, 10)]
    assert {m.settings["program"] for m in suite.methods} >= {"reverse_halving", "list_reversal_cot",
                                                              "list_reversal_unrolled"}


def test_the_reversal_leak_check_catches_a_six_item_demo():
    """The old split_half.txt showed a 6-item list that no other arm saw; the check fails on it."""
    shared = ["cup, pen, lamp", "sock, bell, rope, fork, kite", "map, coin, hat, drum"]
    files = arm_prompts("reverse_halving")
    assert reversal_leaks(files, shared) == []
    six = 'Q: Split "sock, bell, rope, fork, kite, cup" into two halves.\nA: ["sock, bell, rope", "fork, kite, cup"]'
    assert reversal_leaks({**files, "handlers/split_half": files["handlers/split_half"] + "\n\n" + six}, shared)
    other = 'Q: Reverse the sequence "egg, tent".\nA: tent, egg'
    assert reversal_leaks({**files, "handlers/reverse_small": files["handlers/reverse_small"] + "\n\n" + other}, shared)


# -- the short CommaQA arms (App. C, G.4): one knowledge base, the same six questions --------------

COMMAQA_SHORT_ARMS = ("commaqa_fine_short", "commaqa_coarse_short", "commaqa_cot_short_baseline")


def _short_kb() -> dict:
    """The knowledge base the CommaQA decomposers' worked questions are about, without the release
    years (no question asks them): the one fact set every short prompt shows."""
    return {rel: pairs for rel, pairs in DECOMPOSER_KB.items() if pairs and rel != "year"}


def commaqa_short_leaks(files: dict[str, str], questions: list[str], hops: list[tuple[str, str]], kb) -> list[str]:
    """What a short CommaQA prompt shows beyond the decomposers' worked examples: a fact set other
    than the one their questions are about, or a question that is neither a worked question nor
    one of their hops."""
    allowed = set(questions) | {q for _, q in hops}
    leaks = []
    for path, text in files.items():
        leaks += [f"{path}: another fact set" for facts in re.findall(r"^Facts: (.*)$", text, re.M)
                  if {r: v for r, v in read_kb(facts).items() if v} != kb]
        leaks += [f"{path}: {q!r} is no worked question or hop of one"
                  for q in re.findall(r"^QC?: (.*)$", text, re.M) if q not in allowed]
    return leaks


def test_every_short_commaqa_prompt_of_every_arm_works_the_decomposers_six_questions_over_one_kb():
    """App. C: "text-curie-001과 text-davinci-001은 2048토큰 컨텍스트 윈도 때문에 더 짧은 CommAQA
    프롬프트가 필요했으며" (the 2048-token models needed shorter CommaQA prompts), and G.3.1 / G.3.3
    build the CoT and the decomposition prompts on the same worked questions. So the short arms
    (fine and coarse DecomP, CoT) work the long decomposers' six questions, one per i.i.d. template;
    every prompt file any of them reads shows one fact set, the one those questions are about, and
    no question but those six and their hops; each fine reader answers exactly the hops the
    decomposer sends it; and each CoT chain states, hop by hop, the answers the decomposer's worked
    steps have, so both arms see the same intermediate answers."""
    from support.decomp_prompt_files import worked_hops
    from thoughtloom.strategies.decomp.language import parse_value

    questions = _top_questions("commaqa_fine")
    for arm in COMMAQA_SHORT_ARMS:
        assert _top_questions(arm) == questions, arm
    hops = worked_hops("commaqa_fine")
    files = {path: text for arm in COMMAQA_SHORT_ARMS for path, text in arm_prompts(arm).items()}
    assert set(files) == {"decomposers/commaqa_fine", "decomposers/commaqa_coarse", "handlers/simp_qa_short",
                          "handlers/pos_qa_short", "handlers/aw_qa_short", "handlers/qa_short",
                          "handlers/commaqa_cot_short"}
    assert commaqa_short_leaks(files, questions, hops, _short_kb()) == []
    for handler in ("simp_qa", "pos_qa", "aw_qa"):
        assert {q for _, q, _ in qa_pairs(f"{handler}_short")} == {q for h, q in hops if h == handler}, handler
    coarse = {q for _, q, _ in qa_pairs("qa_short")}
    assert {h for h, q in hops if q in coarse} == {"simp_qa", "pos_qa", "aw_qa"}
    chains = qa_pairs("commaqa_cot_short")
    for (_, question, chain), example in zip(chains, worked_examples("commaqa_fine"), strict=True):
        said = [set(re.split(r", | and ", m)) for m in re.findall(r": ([^.]*)\.", chain.split(" So the answer is")[0])]
        assert said == [set(parse_value(a)) for a in example.answers], question


def test_the_short_commaqa_leak_check_catches_another_fact_set_or_question():
    """The check above fails on a reader example outside the worked questions' hops, a CoT question
    no decomposer example asks, and a second fact set (a long reader's first one)."""
    from support.decomp_prompt_files import worked_hops

    questions, hops = _top_questions("commaqa_fine"), worked_hops("commaqa_fine")
    files = {**arm_prompts("commaqa_fine_short"), **arm_prompts("commaqa_cot_short_baseline")}
    assert commaqa_short_leaks(files, questions, hops, _short_kb()) == []
    other_facts = qa_pairs("simp_qa")[0][0]
    for path, demo in (("handlers/simp_qa_short", 'Q: Who were born in the year 1985?\nA: ["Novkel"]'),
                       ("handlers/commaqa_cot_short", "Q: What movies have people born in 1944 acted in?"),
                       ("handlers/pos_qa_short", f"Facts: {other_facts}")):
        assert commaqa_short_leaks({**files, path: files[path] + "\n" + demo}, questions, hops, _short_kb()), path


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

    for name in ("decomp-letter", "decomp-letter-space", "decomp-reversal", "decomp-reversal-scheme", "decomp-commaqa",
                 "decomp-commaqa-scale"):
        for d in suites.load(name).datasets:
            task = get_task(d.task)
            emitted = task.score("x", ["x"] if d.task == "commaqa" else "x")
            assert set(d.metrics) <= set(emitted) and d.primary in emitted, (name, d.id)


# -- claims are judged on the data they speak of -------------------------------------------


def _first_meta(dataset) -> dict:
    return get_task(dataset.task).load(data_file(*dataset.data.split("/")))[0].problem.meta


def test_a_claim_about_lists_longer_than_the_demonstrations_is_judged_only_on_such_lists():
    """§4.2: "항목 3–5개로 구성된 예시 세 개를 공유하고 항목 4개, 6개, 8개, 10개로 구성된 시퀀스에서
    평가된다" (three examples of 3-5 items, evaluated on 4, 6, 8 and 10 items); Appendix E: the
    tail scheme "긴 입력에서 리스트 뒤집기 성능을 높이며" (improves list reversal on long inputs).
    A claim about longer lists is judged on each list length above the longest demonstration
    and on no other: 4 items lie inside the demonstrations' 3-5, so the old card judged the
    "longer than the demonstrations" claim on them too."""
    from thoughtloom.eval.reproduce import suites

    shared = [re.findall(r'"([^"]*)"', q)[0] for q in _top_questions("reverse_halving")]
    longest = max(len(items(s)) for s in shared)
    for name in ("decomp-reversal", "decomp-reversal-scheme"):
        suite = suites.load(name)
        lengths = {d.id: _first_meta(d)["length"] for d in suite.datasets}
        longer = {i for i, n in lengths.items() if n > longest}
        about_long = [c for c in suite.claims if re.search(r"\blong(er)? (lists|than)", c.statement)]
        assert about_long, name
        for pair in {(c.better, c.worse) for c in about_long}:
            judged = {c.dataset for c in about_long if (c.better, c.worse) == pair}
            assert None not in judged and judged == longer, (name, pair, judged)


def test_each_letter_claim_cites_the_separator_its_data_files_use():
    """Appendix D.1: "공백 구분자를 사용하는 문자 연결 과제에서 N을 달리하여 평가한다" (D.1 and
    Figure 18 evaluate the space separator); Figure 22: "k=3과 세미콜론 구분자를 사용한다" (the
    benchmark comparison uses k = 3 and the semicolon). So a claim citing D.1 or Figure 18 is
    judged on space-separator files only, one on the semicolon files cites neither, and the
    space files have their own suite."""
    from thoughtloom.eval.reproduce import suites

    seen = set()
    for name in ("decomp-letter", "decomp-letter-space"):
        suite = suites.load(name)
        seps = {_first_meta(d)["sep"] for d in suite.datasets}
        assert len(seps) == 1
        (sep,) = seps
        seen.add(sep)
        for claim in suite.claims:
            cites_space = bool(re.search(r"D\.1|Figure 18", claim.source))
            assert cites_space == (sep == "space"), (name, claim.statement, claim.source)
    assert seen == {"space", "semicolon"}


def test_the_compositional_split_has_its_own_claims():
    """§4.3: "학습에서 보지 못한 관계 조합에서는 ... 분해 방식의 점수가 소폭 상승하는 반면, CoT의
    점수는 하락한다" (on unseen relation compositions the decomposed systems' scores rise
    slightly while CoT's falls). So the compositional split is judged by claims of its own (fine
    and coarse DecomP against CoT there), apart from the i.i.d. split's."""
    from thoughtloom.eval.reproduce import suites

    suite = suites.load("decomp-commaqa")
    assert _first_meta(suite.dataset("compgen"))["split"] == "compgen"
    for better in ("fine", "coarse"):
        scoped = {c.dataset for c in suite.claims if (c.better, c.worse) == (better, "cot")}
        assert scoped == {"iid", "compgen"}, better
