import pytest

from support import search_toy as toy
from thoughtloom.core import Completion
from thoughtloom.strategies.sculpt.dfs import SculptDFSBacktrack
from thoughtloom.strategies.sculpt.mcts import MCTSConfig, SculptMCTS
from thoughtloom.strategies.treesearch.dfs import DFSConfig
from thoughtloom.strategies.treesearch.reading import read_evaluation, read_score
from thoughtloom.testing import ScriptedLM


@pytest.mark.parametrize("raw,want", [
    (7, 0.7), (7.5, 0.75), ("7/10", 0.7), ("8 out of 10", 0.8), ("score: 9", 0.9),
    (85, 0.85), (-3, 0.0), (True, 1.0), ("none", None), (None, None), ([1], None),
])
def test_read_score(raw, want):
    got = read_score(raw)
    assert got == (pytest.approx(want) if want is not None else None)


def test_read_holistic_and_itemized_replies():
    r = read_evaluation({"Score": "6", "Feedback": "uses 4 twice"})
    assert r.score == pytest.approx(0.6) and r.feedback == "uses 4 twice"
    r = read_evaluation({"items": [{"item": "h1", "score": 10, "feedback": "fits"},
                                   {"item": "h2", "score": 4, "feedback": "no word"},
                                   {"item": "h3", "feedback": "unsure"}]})
    assert r.score == pytest.approx(0.7)  # mean of the readable item scores
    assert "h2: no word" in r.feedback and len(r.items) == 3
    r = read_evaluation([{"score": 2}, {"score": 4}], ["v1", "v2"])  # a bare list, labels from the prompt
    assert r.score == pytest.approx(0.3) and r.items[0]["item"] == "v1"
    assert read_evaluation({"correct": False, "feedback": "equals 26"}).score == 0.0


@pytest.mark.parametrize("reply", ["just text", {"feedback": "no score"}, {"items": ["x", 3]}, 42])
def test_unusable_replies_read_as_none(reply):
    assert read_evaluation(reply) is None


def all_replies_unreadable(ctx, tree) -> bool:
    """Every node's evaluation and its re-ask were traced as malformed, and its score as the fallback."""
    bad = [(e["node"], e["attempt"]) for e in ctx.trace.of_type("malformed") if e["what"] == "tree_evaluation"]
    fallback = [e["node"] for e in ctx.trace.of_type("tree_eval") if e["evaluator"] == "malformed"]
    return sorted(bad) == sorted((n["id"], a) for n in tree for a in (1, 2)) and len(fallback) == len(tree)


async def test_malformed_evaluator_reply_is_traced_not_fatal():
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return "Looks good to me!"  # never JSON, not even when re-asked
        if "Feedback on the current solution" in text:
            return "CAND: ab"
        return "CAND: a"

    lm = ScriptedLM(brain)
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=1, malformed_score=0.25)).run(toy.PROBLEM, ctx)
    tree = result.details["tree"]
    assert all(n["evaluator"] == "malformed" and n["score"] == 0.25 for n in tree)
    assert all_replies_unreadable(ctx, tree)
    assert {e["reason"] for e in ctx.trace.of_type("malformed")} == {"unparseable"}
    assert result.answer in {n["candidate"] for n in tree}


async def test_symbolic_evaluator_overrides_the_model_score():
    task = toy.ToyTask(symbolic={"ab": 1.0, "a": 0.0})
    lm = toy.make_lm({"ab": 2, "ac": 9}, default=5)
    ctx = toy.make_ctx(lm, task=task)
    result = await SculptDFSBacktrack(DFSConfig(evaluator="symbolic")).run(toy.PROBLEM, ctx)
    nodes = {n["candidate"]: n for n in result.details["tree"]}
    assert nodes["ab"]["evaluator"] == "symbolic" and nodes["ab"]["score"] == 1.0
    assert nodes["ac"]["evaluator"] == "model"  # no exact score for it
    assert result.answer == "ab" and result.details["evaluator"] == "symbolic"


async def test_itemized_prompt_lists_items():
    task = toy.ToyTask(root="r")
    task.evaluation_items = lambda problem, cand: [f"[1] first of {cand}", f"[2] second of {cand}"]
    lm = toy.make_lm({}, default=5)
    await SculptDFSBacktrack(DFSConfig(k=0)).run(toy.PROBLEM, toy.make_ctx(lm, task=task))  # k=0: the root only
    prompt = lm.requests[0].messages[0].content
    assert "[1] first of r" in prompt and '"items"' in prompt


def test_truncated_itemized_reply_is_salvaged_from_its_complete_items():
    from thoughtloom.strategies.treesearch.reading import salvage_items

    cut = '```json\n{"items": [{"item": "[1]", "feedback": "flat", "score": 2},\n{"item": "[2]", "feedback": "good", "score": 8},\n{"item": "[3]", "feedb'
    items = salvage_items(cut)
    assert [i["item"] for i in items] == ["[1]", "[2]"]
    assert read_evaluation(items, ["[1]", "[2]", "[3]"]).score == pytest.approx(0.5)
    assert salvage_items("no braces here") is None


async def test_search_uses_salvaged_items():
    cut = '{"items": [{"item": "[1]", "feedback": "flat", "score": 4}, {"item": "[2]", "feed'

    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return cut
        return "CAND: ab" if "Feedback on the current solution" in text else "CAND: a"

    task = toy.ToyTask()
    task.evaluation_items = lambda problem, cand: ["[1] one", "[2] two"]
    ctx = toy.make_ctx(ScriptedLM(brain), task=task)
    result = await SculptDFSBacktrack(DFSConfig(k=0)).run(toy.PROBLEM, ctx)
    root = result.details["tree"][0]
    assert root["evaluator"] == "model" and root["score"] == pytest.approx(0.4)
    assert ctx.trace.of_type("tree_eval_salvaged")


def test_truncated_holistic_reply_keeps_its_leading_score():
    from thoughtloom.strategies.treesearch.reading import salvage_holistic

    r = salvage_holistic('```json\n{"score": 4, "feedback": "misses \\"dog\\" and the lad')
    assert r.score == pytest.approx(0.4) and r.feedback.startswith('misses \\"dog')
    assert salvage_holistic('{"feedback": "cut before the score') is None


@pytest.mark.parametrize("score", ["Infinity", "1e400", "NaN", "9" * 5000, '"Infinity"'])
async def test_non_finite_scores_are_malformed_not_perfect(score):
    # issue 11: Infinity / 1e400 counted as a perfect 1.0 and ended the search; NaN became 0
    def brain(req):
        if "JSON object" in req.messages[0].content:
            return f'{{"score": {score}, "feedback": "fine"}}'
        if "Feedback on the current solution" in req.messages[0].content:
            return "CAND: ab"
        return "CAND: a"

    lm = ScriptedLM(brain)
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=2, malformed_score=0.25)).run(toy.PROBLEM, ctx)
    tree = result.details["tree"]
    assert all(n["evaluator"] == "malformed" and n["score"] == 0.25 for n in tree)
    assert all_replies_unreadable(ctx, tree)


async def test_a_verdict_cut_off_at_max_tokens_is_not_read_but_reasked():
    # issue 17: a truncated reply is not a verdict, not even its leading score
    cut = Completion('{"score": 10, "feedback": "perfect, exc', finish_reason="length")
    asked = []

    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            asked.append(len(req.messages))
            return cut if len(req.messages) == 1 else '{"score": 3, "feedback": "misses b"}'
        return "CAND: ab" if "Feedback on the current solution" in text else "CAND: a"

    ctx = toy.make_ctx(ScriptedLM(brain))
    result = await SculptDFSBacktrack(DFSConfig(k=0)).run(toy.PROBLEM, ctx)
    root = result.details["tree"][0]
    assert asked == [1, 3]  # asked, then re-asked quoting the cut-off reply
    assert root["evaluator"] == "model" and root["score"] == pytest.approx(0.3)
    assert [(e["what"], e["reason"]) for e in ctx.trace.of_type("malformed")] == [("tree_evaluation", "truncated")]
    assert not ctx.trace.of_type("tree_eval_salvaged")


async def test_children_cut_off_at_max_tokens_are_dropped():
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return '{"score": 5, "feedback": "ok"}'
        if "Feedback on the current solution" in text:
            return Completion("CAND: ab", finish_reason="length")
        return "CAND: a"

    ctx = toy.make_ctx(ScriptedLM(brain))
    result = await SculptDFSBacktrack(DFSConfig(max_steps=1)).run(toy.PROBLEM, ctx)
    assert len(result.details["tree"]) == 1  # only the root: every child was cut off
    assert {(e["what"], e["reason"]) for e in ctx.trace.of_type("malformed")} == {("tree_child", "truncated")}


async def test_a_chosen_score_salvaged_from_a_malformed_reply_says_so_in_the_report():
    """issue 13: `run sculpt-mcts` printed "chosen #0 score=1.0" where every child was unparsed
    and the root's score was salvaged from a malformed evaluation."""
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return '{"score": 10, "feedback": "perfect, except that the reply never clo'
        return "no candidate here" if "Feedback on the current solution" in text else "CAND: a"

    ctx = toy.make_ctx(ScriptedLM(brain))
    strategy = SculptMCTS(MCTSConfig(rollouts=2))
    result = await strategy.run(toy.PROBLEM, ctx)
    assert result.details["nodes"] == 1 and result.details["chosen"] == 0  # every child was dropped
    assert result.details["chosen_salvaged"] is True and result.details["tree"][0]["salvaged"] is True
    head = strategy.report(result).splitlines()[0]
    assert "chosen #0 score=1.0 (salvaged: read in part from a malformed evaluation) evaluator=model" in head


async def test_a_chosen_node_without_a_readable_evaluation_says_so_and_a_clean_one_says_nothing():
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return "I like it."
        return "no candidate here" if "Feedback on the current solution" in text else "CAND: a"

    strategy = SculptMCTS(MCTSConfig(rollouts=1, malformed_score=0.25))
    result = await strategy.run(toy.PROBLEM, toy.make_ctx(ScriptedLM(brain)))
    assert "score=0.25 (no readable evaluation: malformed_score) evaluator=" in strategy.report(result)

    def clean(req):
        if "JSON object" in req.messages[0].content:
            return '{"score": 6, "feedback": "fine"}'
        return "CAND: ab" if "Feedback on the current solution" in req.messages[0].content else "CAND: a"

    result = await strategy.run(toy.PROBLEM, toy.make_ctx(ScriptedLM(clean)))
    assert result.details["chosen_salvaged"] is False and result.details["chosen_evaluator"] == "model"
    assert "score=0.6 evaluator=" in strategy.report(result).splitlines()[0]
