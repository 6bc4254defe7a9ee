"""Appendix G.1.5's alternative decomposition of k-th letter concatenation (issue 37).

G.1.5: "대안 분해 스키마는 각 단어에 대해 별도의 문자 추출 질문을 명시적으로 생성한 뒤 답변들을
합친다" (the alternative schema writes a separate letter question for each word explicitly, then
joins the answers; last letters of Augusta, Ada, King give "a a g"). ``--set program=letter_cat_each``
runs it: one ``str_position`` question per word, then ``merge`` over ``["#1", ..., "#n"]``.
"""

from __future__ import annotations

from support.decomp_prompt_files import worked_examples
from thoughtloom.core.types import Problem
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.catalogue import get_program
from thoughtloom.tasks import get as get_task
from thoughtloom.testing import ScriptedLM


def test_the_reference_writes_the_worked_examples_one_question_per_word():
    program = get_program("letter_cat_each")
    for example in worked_examples("letter_cat_each"):
        assert program.reference(example.question) == example.lines
        words = example.question.split('"')[1].split()
        assert len(example.lines) == len(words) + 1 and all(w in line for w, line in zip(words, example.lines))


async def test_the_papers_example_and_five_words_run_to_the_concatenation():
    """G.1.5's own example, the last letters of "Augusta Ada King" joined with a space: "a a g";
    and a 5-word name at position 3 with a semicolon, longer than any demonstration."""
    cls = get("decomp")
    strategy = cls(cls.Config(program="letter_cat_each", decomposer="reference", handlers="symbolic"))
    for question, gold in (
            ('Take the last letters of the words in "Augusta Ada King" and concatenate them using a space.', "a a g"),
            ('Take the letters at position 3 of the words in "Ada Byron King Noel Lovelace" and concatenate them '
             'using a semicolon.', "a;r;n;e;v")):
        result = await strategy.run(Problem("q", question), Context(lm=ScriptedLM([]), task=get_task("letter_cat")))
        assert result.answer == gold and result.details["steps"] == len(gold.replace(";", " ").split()) + 1
