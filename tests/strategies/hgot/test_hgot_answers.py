from thoughtloom.strategies.hgot.answers import select_answer
from thoughtloom.strategies.hgot.thought import parse_thought
from thoughtloom.strategies.vote import weighted_vote
from thoughtloom.tasks.base import Task


def thoughts(answers):
    return [parse_thought(f"Because [1].\nAnswer: {a}", 1, i) for i, a in enumerate(answers)]


def test_unit_weights_reduce_to_plain_self_consistency():
    task = Task()
    answers = ["Paris", "paris.", "Lyon", "Lyon", "The Paris", "Nice"]
    hgot = select_answer(task, thoughts(answers), [1.0] * len(answers))
    plain = weighted_vote([task.extract_answer(f"Answer: {a}") for a in answers], task.normalize)
    assert (hgot.key, hgot.confidence, hgot.tally) == (plain.key, plain.confidence, plain.tally)
    assert hgot.key == "paris" and hgot.confidence == 3 / 6


def test_quality_weights_can_overturn_the_majority():
    task = Task()
    vote = select_answer(task, thoughts(["Paris", "Paris", "Lyon"]), [0.2, 0.2, 1.0])
    assert vote.key == "lyon"
    assert abs(vote.confidence - 1.0 / 1.4) < 1e-9


def test_thoughts_without_answer_do_not_vote():
    task = Task()
    ts = thoughts(["Paris"]) + [parse_thought("This reply never states any answer at all.", 1, 1)]
    vote = select_answer(task, ts, [1.0, 5.0])
    assert vote.key == "paris" and vote.confidence == 1.0
