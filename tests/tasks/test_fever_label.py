"""The FEVER label reader every method's answers go through (tasks.fever_label)."""

import pytest

from thoughtloom.tasks.factqa import FEVER
from thoughtloom.tasks.fever_label import NEI, REFUTES, SUPPORTS, read_fever_label

# model-style sentences and the label their wording states
CASES = [
    # the three misreadings issue 36 names
    ("The claim is not supported by the passages.", NEI),
    ("There is not enough information to support the claim.", NEI),
    ("not enough info to support or refute", NEI),
    # plain labels, any case, with markers
    ("Answer: SUPPORTS", SUPPORTS),
    ("Answer: refutes.", REFUTES),
    ("Answer: NOT ENOUGH INFO", NEI),
    ("**Answer:** Not Enough Info", NEI),
    ("Answer: NEI", NEI),
    ("Answer: supported", SUPPORTS),
    ("The passages refute it. Answer: not enough info", NEI),
    # evidence words, negated or not
    ("The passages support the claim.", SUPPORTS),
    ("Passage [2] confirms that the film was released in 1975.", SUPPORTS),
    ("The claim is contradicted by passage 1.", REFUTES),
    ("The evidence does not support this claim.", NEI),
    ("The passages don't support the claim.", NEI),
    ("The passages do not directly support it.", NEI),
    ("None of the passages support the claim.", NEI),
    ("The claim is unsupported.", NEI),
    ("Nothing in the context contradicts the claim.", NEI),
    ("The passages neither support nor refute the claim.", NEI),
    ("There is insufficient evidence to verify the claim.", NEI),
    ("The claim cannot be verified from the passages.", NEI),
    ("We cannot determine whether the claim holds.", NEI),
    ("There is no evidence that the claim is true.", NEI),
    ("It is unknown.", NEI),
    # truth words flip under negation
    ("The claim is true.", SUPPORTS),
    ("The claim is false.", REFUTES),
    ("The claim is not true.", REFUTES),
    ("The claim is incorrect.", REFUTES),
    ("This is not correct.", REFUTES),
    # the last verdict named wins
    ("Passage 1 supports it, but passage 2 refutes it, so the claim is refuted.", REFUTES),
    ("Rationale: Jaws came out in 1975 [1], so the claim is not supported.\nAnswer: REFUTES", REFUTES),
    ("At first it seems false; however the passages support the claim.", SUPPORTS),
]


@pytest.mark.parametrize("text,label", CASES)
def test_model_style_sentences_read_as_their_wording_says(text, label):
    """FEVER's three verdicts: SUPPORTED, REFUTED, NOT ENOUGH INFO. A sentence saying the
    passages do not support a claim states no refutation (decision recorded in
    tasks/fever_label.py and docs/fidelity.md): NOT ENOUGH INFO."""
    assert read_fever_label(text) == label
    assert FEVER().extract_answer(text) == label


@pytest.mark.parametrize("text", [
    "",
    "no idea",
    "   \n\t ",
    "Kindly answer with \"SUPPORTS\", \"REFUTES\", or \"NOT ENOUGH INFO\".",  # an echo of the options
    "{\"answer\": [[[[]]]]}",
    "\ufffd\x00\udcff" * 50,
])
def test_hostile_replies_state_no_label(text):
    assert read_fever_label(text) is None


def test_a_huge_reply_is_read():
    """A reply far over the parse bound is read from its clipped head (never a crash)."""
    assert read_fever_label("the passages do not support it, " * 20000) == NEI


def test_every_method_reads_fever_answers_with_the_one_reader():
    """Two arms of one comparison are read by one reader: retrieve-then-read's (and DSP's)
    voted samples, self-ask's final answer and HGOT's thoughts all map "The claim is not
    supported by the passages." onto NOT ENOUGH INFO, never SUPPORTS."""
    import asyncio

    from thoughtloom.core.trace import Trace
    from thoughtloom.core.types import Passage, Problem
    from thoughtloom.strategies import get
    from thoughtloom.strategies.context import Context
    from thoughtloom.strategies.hgot.answers import thought_answer
    from thoughtloom.strategies.hgot.thought import parse_thought
    from thoughtloom.testing import ScriptedLM, StaticRetriever

    said = "The claim is not supported by the passages."

    def run(name, replies, **cfg):
        cls = get(name)
        ctx = Context(lm=ScriptedLM(replies), task=FEVER(), trace=Trace(),
                      retriever=StaticRetriever([Passage("p", "Jaws is a 1975 film.", "Jaws")]))
        return asyncio.run(cls(cls.Config(**cfg)).run(Problem("q", "Jaws is a 1980 film."), ctx))

    assert run("retrieve-then-read", [f"Answer: {said}"] * 3, n=3, shots=0).answer == NEI
    assert run("self-ask", [f"So the final answer is: {said}"]).answer == NEI
    thought = parse_thought(f'{{"statements": [{{"text": "Jaws is a 1975 film.", "cites": [1]}}], "answer": "{said}"}}', 1)
    assert thought_answer(FEVER(), thought) == NEI
