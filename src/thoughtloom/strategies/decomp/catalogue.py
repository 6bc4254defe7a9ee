"""The catalogue of decomposed programs: a decomposer prompt, the handlers it may call, a reference.

A :class:`Program` is data. Its decomposer is a few-shot prompt file
(``decomp/decomposers/<name>.txt``); ``reference`` writes the task's
reference program for a question (the controller check runs it in place of
the decomposer, and *fixed* programs such as the CoT baselines always run
it). ``self_name`` is the handler name under which the program calls itself
(recursion). ``prompt_files`` lets a program send a handler name its decomposer
writes to another prompt file (the short CommaQA readers of App. G.4 answer
``simp_qa`` in ``commaqa_fine_short``, whose decomposer is ``commaqa_fine``'s
own). Register your own with :func:`register_program`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ...core.errors import ConfigError
from ...core.names import unknown
from ...core.protocols import TaskView
from .functions import items, last_quoted, separator_phrase

Reference = Callable[[str], list[str]]


@dataclass(frozen=True)
class Program:
    name: str
    decomposer: str | None = None  # prompt file name; None: a fixed program
    reference: Reference | None = None
    handlers: tuple[str, ...] = ()  # what the decomposer may call (besides programs)
    self_name: str = ""  # handler name for a recursive call to this program
    k: int = 4  # passages per retrieval, where the program retrieves
    description: str = ""
    #: the prompt file (``decomp/handlers/<file>.txt``) a handler name reads in this program, where it is
    #: not the name itself: the decomposer keeps writing ``simp_qa`` and the program's readers are short
    prompt_files: Mapping[str, str] = field(default_factory=dict, hash=False)

    def prompt_file(self, handler: str) -> str:
        """The name of the handler prompt file that ``handler`` reads in this program."""
        return self.prompt_files.get(handler, handler)

    @property
    def fixed(self) -> bool:
        return self.decomposer is None


PROGRAMS: dict[str, Program] = {}


def register_program(program: Program) -> Program:
    """Add a program; its name becomes a handler name (hierarchical calls)."""
    PROGRAMS[program.name] = program
    return program


def get_program(name: str) -> Program:
    try:
        return PROGRAMS[name]
    except KeyError:
        raise unknown("decomposed program", name, PROGRAMS) from None


def _fixed(*steps: str) -> Reference:
    """A fixed program: the same steps for every question. A step that asks ``$question``
    passes the question to its handler as written, so a baseline's model reads the same
    question text (quotes, ``#k`` and all) as the decomposer does."""
    return lambda q: list(steps)


# -- k-th letter concatenation ----------------------------------------------------


def _letter_cat_reference(question: str) -> list[str]:
    name = last_quoted(question)
    pos = re.search(r"position (\d+)", question)
    letter = f"the letter at position {pos.group(1)}" if pos else "the last letter"
    sep = separator_phrase(question)
    return [
        f'(split) "What are the words in "{name}"?"',
        f'(str_position) [project_values] "What is {letter} of "#1"?"',
        f'(merge) "Concatenate #2 using {sep}."',
    ]


def _letter_each_reference(question: str) -> list[str]:
    """Appendix G.1.5's alternative schema: one letter question per word, written out, then merge."""
    words = last_quoted(question).split()
    pos = re.search(r"position (\d+)", question)
    letter = f"the letter at position {pos.group(1)}" if pos else "the last letter"
    answers = ", ".join(f'"#{i + 1}"' for i in range(len(words)))
    return ([f'(str_position) "What is {letter} of "{w}"?"' for w in words]
            + [f'(merge) "Concatenate [{answers}] using {separator_phrase(question)}."'])


def _str_position_reference(question: str) -> list[str]:
    word = last_quoted(question)
    pos = re.search(r"position (\d+)", question)
    where = f"position {pos.group(1)}" if pos else "the last position"
    parts = "words" if re.search(r"\bword at\b", question) else "letters"
    return [f'(split) "What are the {parts} and their positions in "{word}"?"',
            f'(arr_position) "What is at {where} in #1?"']


register_program(Program(
    "letter_cat", "letter_cat", _letter_cat_reference, ("split", "str_position", "merge"),
    description="split the name, foreach str_position, merge"))
register_program(Program(
    "letter_cat_each", "letter_cat_each", _letter_each_reference, ("str_position", "merge"),
    description="G.1.5's alternative schema: one str_position question per word, written out, then merge"))
register_program(Program(
    "str_position", "str_position", _str_position_reference, ("split", "arr_position"),
    description="hierarchical: the general split lists the letters with their positions, then arr_position"))
register_program(Program("letter_cat_cot", None, _fixed("(letter_cot) $question", '(extract) "#1"')))
register_program(Program("letter_cat_cot_rollout", None,
                         _fixed("(letter_cot_rollout) $question", '(extract) "#1"')))
register_program(Program("letter_cat_l2m", None, _fixed("(letter_l2m) $question", '(extract) "#1"')))


# -- list reversal ---------------------------------------------------------------


def _halving_reference(question: str) -> list[str]:
    seq = last_quoted(question)
    if len(items(seq)) < 4:
        return [f'(reverse_small) "Reverse the sequence "{seq}"."']
    return [f'(split_half) "Split "{seq}" into two halves."',
            '(reverse) [project_values] "Reverse the sequence "#1"."',
            '(swap_concat) "Put the second of #2 before the first."']


def _tail_reference(question: str) -> list[str]:
    seq = last_quoted(question)
    if len(items(seq)) < 4:  # the same base case as halving: both share the three 3-5 item demos
        return [f'(reverse_small) "Reverse the sequence "{seq}"."']
    return [f'(first_item) "What is the first item of "{seq}"?"',
            f'(rest_items) "What are the items after the first in "{seq}"?"',
            '(reverse) "Reverse the sequence "#2"."',
            '(append_item) "Add "#1" to the end of "#3"."']


register_program(Program(
    "reverse_halving", "reverse_halving", _halving_reference,
    ("reverse_small", "split_half", "swap_concat"), self_name="reverse",
    description="recursive halving: reverse each half, back half first"))
register_program(Program(
    "reverse_tail", "reverse_tail", _tail_reference,
    ("reverse_small", "first_item", "rest_items", "append_item"), self_name="reverse",
    description="tail recursion: reverse the rest, then append the first item"))
register_program(Program("list_reversal_cot", None, _fixed("(reverse_cot) $question", '(extract) "#1"')))
register_program(Program("list_reversal_unrolled", None, _fixed("(reverse_unrolled) $question", '(extract) "#1"'),
                         description="CoT that writes out the halving decomposition in one chain"))


# -- CommaQA-E --------------------------------------------------------------------

register_program(Program("commaqa_fine", "commaqa_fine", None, ("simp_qa", "pos_qa", "aw_qa"),
                         description="fine: one QA handler per relation type"))
register_program(Program("commaqa_coarse", "commaqa_coarse", None, ("qa",),
                         description="coarse: one QA handler for every relation"))
register_program(Program("commaqa_cot_baseline", None, _fixed("(commaqa_cot) $question", '(extract) "#1"')))
# Appendix C and G.4: the smaller models' 2048-token windows take shorter prompts. The same decomposers
# (six worked questions, no facts) with short readers, and a short CoT: every short prompt shows one
# knowledge base, the one the decomposers' worked questions are about, and only those questions and
# their hops (suite decomp-commaqa-scale).
_SHORT_FINE = {"simp_qa": "simp_qa_short", "pos_qa": "pos_qa_short", "aw_qa": "aw_qa_short"}
register_program(Program("commaqa_fine_short", "commaqa_fine", None, tuple(_SHORT_FINE), prompt_files=_SHORT_FINE,
                         description="fine with the short readers of App. G.4 (2048-token windows)"))
register_program(Program("commaqa_coarse_short", "commaqa_coarse", None, ("qa",), prompt_files={"qa": "qa_short"},
                         description="coarse with the short qa reader of App. G.4 (2048-token windows)"))
register_program(Program("commaqa_cot_short_baseline", None, _fixed("(commaqa_cot_short) $question", '(extract) "#1"'),
                         description="CoT with the short prompt of App. G.4: the decomposer's six questions, hop by hop"))


# -- math QA ----------------------------------------------------------------------

register_program(Program("math_extract", None, _fixed("(math_cot) $question", '(gpt_ans) "#1"'),
                         description="CoT, then a separate answer-extraction prompt"))
register_program(Program("math_cot_pattern", None, _fixed("(math_cot) $question", '(extract) "#1"'),
                         description="CoT with pattern extraction"))


# -- open-domain multi-hop QA -----------------------------------------------------

register_program(Program("odqa_decomp", "odqa_decomp", None, ("retrieve_odqa", "multihop_titleqa"),
                         k=4, description="Decomp-Ctxt"))
register_program(Program("odqa_nodecomp", None,
                         _fixed("(retrieve) $question", "(multihop_titleqa) $question"), k=6,
                         description="NoDecomp-Ctxt: one retrieval, then answer"))
register_program(Program("odqa_closedbook", None, _fixed("(closedbook_qa) $question"),
                         description="No-Ctxt: closed book"))
# Appendix G.6's CoT reader in place of the direct one: the same programs, the final multi-hop reader
# (multihop_titleqa_cot: the direct reader's demonstrations, each answer reasoned on one line ending
# in "So the answer is:") for the one that answers directly; --set program= picks them. The
# decomposer prompts differ from the direct ones only in that handler's name.
register_program(Program("odqa_decomp_cot", "odqa_decomp_cot", None, ("retrieve_odqa", "multihop_titleqa_cot"),
                         k=4, description="Decomp-Ctxt with the CoT reader (G.6)"))
register_program(Program("odqa_nodecomp_cot", None,
                         _fixed("(retrieve) $question", "(multihop_titleqa_cot) $question"), k=6,
                         description="NoDecomp-Ctxt with the CoT reader (G.6): one retrieval, then reason and answer"))


# -- a user's own questions -------------------------------------------------------

register_program(Program("qa_decomp", "qa_decomp", None, ("closedbook_qa",),
                         description="own questions: simple closed-book sub-questions chained with #k"))


#: The program each strategy name runs for a task unless ``--set program=`` says otherwise.
DEFAULTS: dict[str, dict[str, str]] = {
    "decomp": {"letter_cat": "letter_cat", "list_reversal": "reverse_halving",
               "commaqa": "commaqa_fine", "gsm8k": "math_extract", "multiarith": "math_extract",
               "hotpotqa": "odqa_decomp", "2wiki": "odqa_decomp", "musique": "odqa_decomp"},
    "decomp-cot": {"letter_cat": "letter_cat_cot", "list_reversal": "list_reversal_cot",
                   "commaqa": "commaqa_cot_baseline", "gsm8k": "math_cot_pattern",
                   "multiarith": "math_cot_pattern"},
    "decomp-cot-rollout": {"letter_cat": "letter_cat_cot_rollout"},
    "decomp-least-to-most": {"letter_cat": "letter_cat_l2m"},
    "decomp-nodecomp-ctxt": {"hotpotqa": "odqa_nodecomp", "2wiki": "odqa_nodecomp",
                             "musique": "odqa_nodecomp"},
    "decomp-no-ctxt": {"hotpotqa": "odqa_closedbook", "2wiki": "odqa_closedbook",
                       "musique": "odqa_closedbook"},
}


#: The program each strategy runs for a task with no default of its own (a task of yours, ``qa``) by the
#: shape its questions declare (``question_shape``): "qa", a question with a short answer; "math", a word
#: problem with a numeric answer.
SHAPES: dict[str, dict[str, str]] = {
    "decomp": {"qa": "qa_decomp", "math": "math_extract"},
    "decomp-cot": {"math": "math_cot_pattern"},
    "decomp-no-ctxt": {"qa": "odqa_closedbook"},
}


def default_name(strategy: str, task: TaskView) -> str | None:
    """The program ``strategy`` runs for ``task`` by default: the task's own, else its shape's; None: none."""
    name = DEFAULTS.get(strategy, {}).get(task.name)
    shape = task.question_shape  # declared on TaskView, "" on Task (see core.protocols)
    return name if name is not None else SHAPES.get(strategy, {}).get(shape) if shape else None


def default_program(strategy: str, task: TaskView) -> Program:
    name = default_name(strategy, task)
    if name is None:
        shapes = dict.fromkeys(shape for by in SHAPES.values() for shape in by)
        raise ConfigError(
            f"strategy {strategy!r} has no default program for task {task.name!r}",
            hint="for questions with a short answer pass --set program=qa_decomp (docs/decomp.md lists the "
                 "others); a task of your own can declare question_shape = "
                 + " or ".join(repr(s) for s in shapes) + " (docs/tasks.md)")
    return get_program(name)
