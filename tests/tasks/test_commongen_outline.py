import pytest

from thoughtloom.core.types import Problem
from thoughtloom.tasks import get
from thoughtloom.tasks.commongen import coverage, covered_concepts
from thoughtloom.tasks.outline import JUDGE_QUESTION, judge_prompts, outline_items, read_judge_reply

from conftest import data_file


def test_coverage_matches_inflections():
    concepts = ["toddler", "dunk", "cupcake", "serve", "run", "child", "mouse", "piano"]
    text = "The toddlers dunked cupcakes; Mom served milk, the children ran after the mice."
    assert set(covered_concepts(text, concepts)) == {"toddler", "dunk", "cupcake", "serve", "run",
                                                     "child", "mouse"}
    assert coverage(text, concepts) == pytest.approx(7 / 8)


def test_coverage_needs_whole_words():
    assert coverage("The pitcher threw a curveball.", ["pit", "curve", "throw"]) == pytest.approx(1 / 3)
    assert coverage("", ["dog"]) == 0.0 and coverage(None, ["dog"]) == 0.0


def test_commongen_load_score_and_parse():
    t = get("commongen")
    examples = t.load(data_file("commongen_hard", "commongen_hard.jsonl"))
    ex = examples[0]
    assert 20 <= len(ex.gold) <= 30 and ex.problem.question.startswith("vest, snow")
    assert t.score("A vest in the snow.", ex.gold)["coverage"] == pytest.approx(2 / len(ex.gold))
    p = Problem("c", "dog, throw")
    assert t.parse_candidate(p, "Sure!\nSentence: The boy throws a ball to the dog.", None) == \
        "The boy throws a ball to the dog."
    assert t.symbolic_score(p, "The dog threw up.") == 1.0


def test_outline_items_and_seed_outlines():
    assert outline_items("[1] A\n2. B\n- C\n\nD") == ["A", "B", "C", "D"]
    t = get("outline")
    seeds = t.load("seed")
    assert len(seeds) == 8
    p = seeds[0].problem
    assert p.context.startswith("A retired lighthouse keeper")
    root = t.root_candidate(p)
    assert len(t.evaluation_items(p, root)) == len(outline_items(root)) >= 7
    assert t.score(root, seeds[0].gold) == {"well_formed": 1.0, "changed": 0.0, "kept_length": 1.0}
    # App. A.1: "Write the outline in this format just like the original outline from [1] to [num]"
    assert t.score("\n".join(outline_items(root)[:4]), seeds[0].gold)["kept_length"] == 0.5
    assert t.change_kind("a\nb\nc", "a\nb\nc\nd") == "extended"
    assert t.change_kind("a\nb\nc", "a\nB\nc") == "revised"


def test_outline_user_file(tmp_path):
    f = tmp_path / "mine.txt"
    f.write_text("premise: x\none\ntwo\nthree\n\nfour\nfive\nsix\n", encoding="utf-8")
    examples = get("outline").load(f)
    assert [e.problem.context for e in examples] == ["x", ""]
    bad = tmp_path / "bad.txt"
    bad.write_text("only one item\n", encoding="utf-8")
    with pytest.raises(Exception, match="at least two items"):
        get("outline").load(bad)


def test_model_judge_asks_the_papers_question_of_each_story_point():
    """App. A.1, the fine-tuned content evaluator's PROMPT: "Given the story outlines above, do
    you think that the new story point below is interesting?" One prompt per point: the
    points before it above the question, the point itself below it."""
    prompts = judge_prompts("p", ["Ann finds a key.", "The key opens nothing.", "Ann is a ghost."])
    assert len(prompts) == 3 and all(JUDGE_QUESTION in p for p in prompts)
    above, below = prompts[2].split(JUDGE_QUESTION)
    assert "[1] Ann finds a key." in above and "[2] The key opens nothing." in above
    assert "Ann is a ghost." in below and "Ann is a ghost." not in above
    assert "Ann finds a key." not in prompts[0].split(JUDGE_QUESTION)[0]


def test_model_judge_reading():
    """The paper's evaluator rates "interesting outlines as 1 and boring ones as 0" (§4.1)."""
    assert read_judge_reply('{"interesting": "yes"}') is True
    assert read_judge_reply('{"interesting": "no"}') is False
    assert read_judge_reply("No, it is flat.") is False and read_judge_reply("Yes!") is True
    assert read_judge_reply("maybe") is None and read_judge_reply(None) is None
    assert read_judge_reply('{"interesting": ' + "9" * 5000) is None
    task = get("outline")
    assert task.read_judge(['{"interesting": "yes"}', '{"interesting": "no"}', "??", "yes"]) == 2 / 3
    assert task.read_judge(["??"]) is None


async def test_cot_on_outlines_ends_with_the_outline_and_only_that_is_read():
    from thoughtloom.core.trace import Trace
    from thoughtloom.strategies.context import Context
    from thoughtloom.strategies.baselines.direct import ChainOfThought
    from thoughtloom.testing import ScriptedLM

    task = get("outline")
    reply = "The middle sags.\nA twist would help.\nOutline:\n[1] A storm hits.\n[2] The keeper lies.\n[3] The boy returns."
    lm = ScriptedLM([reply])
    result = await ChainOfThought().run(Problem("o", "[1] a\n[2] b\n[3] c"), Context(lm=lm, task=task, trace=Trace()))
    assert 'write "Outline:" on a line of its own' in lm.requests[0].prompt_text()
    assert result.answer.splitlines() == ["A storm hits.", "The keeper lies.", "The boy returns."]
    assert task.score(result.answer, {"items": ["a", "b", "c"]}) == {"well_formed": 1.0, "changed": 1.0,
                                                                     "kept_length": 1.0}
    # without the marker every item line counts, as before
    assert task.extract_answer("[1] x\n[2] y") == "x\ny"
