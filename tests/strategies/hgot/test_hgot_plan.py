import pytest

from thoughtloom.strategies.hgot.levels import closely_resembles, resemblance
from thoughtloom.strategies.hgot.plan import Plan, PlanError, fallback_rewrite, parse_plan, parse_rewrite, single_step


def test_parses_steps_and_arrow_dependencies():
    plan = parse_plan("Step 1: Who directed Jaws?\nStep 2: When was the person in Step 1 born?\n"
                      "Step 3: Where was Jaws filmed?\nDependencies: Step 1 -> Step 2")
    assert plan.steps == ("Who directed Jaws?", "When was the person in Step 1 born?", "Where was Jaws filmed?")
    assert plan.edges == ((1, 2),)
    assert plan.levels() == [[1, 3], [2]]
    assert plan.parents(2) == [1] and plan.parents(3) == []


def test_depends_on_phrasing_and_none():
    plan = parse_plan("Step 1: A?\nStep 2: B?\nDependencies: Step 2 depends on the answer from Step 1.")
    assert plan.edges == ((1, 2),)
    assert parse_plan("Step 1: A?\nStep 2: B?\nDependencies: None").edges == ()


def test_chain_levels_in_topological_order():
    plan = parse_plan("Step 1: A?\nStep 2: B?\nStep 3: C?\nDependencies: Step 1 -> Step 2, Step 2 -> Step 3, Step 1 -> Step 3")
    assert plan.levels() == [[1], [2], [3]]
    assert plan.parents(3) == [1, 2]


@pytest.mark.parametrize("text, needle", [
    ("I think the answer is Paris.", "no 'Step N"),
    ("Step 1: A?\nStep 3: C?", "numbered"),
    ("Step 1: A?\nStep 1: B?", "twice"),
    ("\n".join(f"Step {i}: Q{i}?" for i in range(1, 8)), "at most"),
])
def test_unusable_plans_raise_with_reason(text, needle):
    with pytest.raises(PlanError, match=needle):
        parse_plan(text, max_steps=5)


def test_edges_the_authors_code_keeps_or_drops_do_not_make_the_plan_unusable():
    """The authors' search adds an edge only "if u in G.nodes and v in G.nodes", removes a
    cycle's edge while nx.find_cycle finds one, and visits nx.topological_sort(G): an edge
    to a lower-numbered step is searched in topological order, a cycle (a self-loop too)
    loses edges, an edge to a missing step is ignored. None of them costs a re-ask."""
    later = parse_plan("Step 1: A?\nStep 2: B?\nDependencies: Step 2 -> Step 1")
    assert later.edges == ((2, 1),) and later.levels() == [[2], [1]]
    cycle = parse_plan("Step 1: A?\nStep 2: B?\nDependencies: Step 1 -> Step 2, Step 2 -> Step 1")
    assert cycle.edges == ((1, 2),) and cycle.dropped == ((2, 1),)
    missing = parse_plan("Step 1: A?\nStep 2: B?\nDependencies: Step 1 -> Step 4")
    assert missing.edges == () and missing.unknown == ((1, 4),)
    loop = parse_plan("Step 1: A?\nDependencies: Step 1 -> Step 1")
    assert loop.edges == () and loop.dropped == ((1, 1),)


def test_resemblance_and_stop_rule():
    q = "Who wrote the novel Dune?"
    assert resemblance(q, "Who wrote the novel Dune?") == 1.0
    assert closely_resembles(q, Plan(("Who is the author who wrote the novel Dune?",), ()), 0.7)
    assert not closely_resembles(q, Plan(("When was Frank Herbert born?",), ()), 0.7)
    # two steps never stop the recursion, however similar
    assert not closely_resembles(q, Plan((q, q), ()), 0.7)
    assert closely_resembles(q, single_step(q), 0.7)


def test_parse_rewrite():
    assert parse_rewrite("Rewrite: In what year was Steven Spielberg born?") == "In what year was Steven Spielberg born?"
    assert parse_rewrite("  \nStep 2: When was Spielberg born?") == "When was Spielberg born?"
    assert parse_rewrite("") is None
    assert fallback_rewrite("When was he born?", [(1, "Who directed Jaws?", "Spielberg")]) == \
        "When was he born? (given: Who directed Jaws: Spielberg)"
    # a step that names its parent gets the parent's answer in place of the name
    assert fallback_rewrite("When was the director from Step 1 born?", [(1, "Who directed Jaws?", "Spielberg")]) == \
        "When was the director (Spielberg) born?"


# -- exact values the mutation run found unchecked (plan.py) --------------------------------------

def _ctx(seed=0):
    from thoughtloom.strategies.context import Context
    from thoughtloom.testing import ScriptedLM

    return Context(lm=ScriptedLM(lambda req: ""), task=None, seed=seed)


def test_a_plan_is_a_value():
    """Plan is frozen: the steps and edges a level was searched with cannot change under it."""
    import dataclasses

    plan = parse_plan("Step 1: Who directed Jaws?\nStep 2: When was the director in Step 1 born?")
    assert hash(plan) == hash(Plan(plan.steps, plan.edges))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.edges = ()


def test_a_step_line_without_a_question_mark_is_a_step_until_a_dependencies_line():
    """Module docstring: "A step that names another ("the director in Step 1") depends on it". A step
    written as an instruction (no "?") that names Step 1 is still step 2 when no Dependencies line came
    before it; only under a Dependencies line does "Step 3: Step 1, Step 2" say what step 3 depends on."""
    plan = parse_plan("Step 1: Who directed Jaws?\nStep 2: Find the birth year of the director from Step 1")
    assert plan.steps == ("Who directed Jaws?", "Find the birth year of the director from Step 1")
    assert plan.edges == ((1, 2),)


def test_a_rewrite_of_two_words_is_kept_and_one_word_is_none():
    """parse_rewrite reads the first line with at least two words (a question, however short); a
    single word is no rewritten question, so the caller falls back to fallback_rewrite."""
    assert parse_rewrite("Rewrite: Spielberg born?") == "Spielberg born?"
    assert parse_rewrite("Rewrite: Spielberg") is None


def test_the_plan_request_carries_question_passages_budget_and_stop():
    """The plan prompt (appendix C.1's shape): the numbered passages, the question, at most max_steps
    steps; the reply stops where the model would start another "Question:" demo."""
    from thoughtloom.strategies.hgot.plan import plan_request

    req = plan_request(_ctx(seed=7), "In what year was the director of Jaws born?",
                       ["Jaws is a 1975 film.", "Spielberg was born in 1946."], "", max_tokens=200, max_steps=3)
    text = req.messages[0].content
    assert "Use at most 3 steps" in text
    assert "Context:\n[1] Jaws is a 1975 film.\n[2] Spielberg was born in 1946.\n\n" in text
    assert "Question: In what year was the director of Jaws born?" in text
    assert (req.max_tokens, req.seed, tuple(req.stop)) == (200, 7, ("\nQuestion:",))
    assert "Context:\n(none)\n" in plan_request(_ctx(), "Q?", [], "", max_tokens=10, max_steps=2).messages[0].content


def test_the_rewrite_request_labels_each_known_answer_with_its_step():
    """rewrite_request: "each labelled by its step number (as in the authors' rewrite context, "Step 1:
    ... ANSWER: ...")" so the step's "Step 1" can be resolved; one paragraph back (stop at a blank line)."""
    from thoughtloom.strategies.hgot.plan import rewrite_request

    req = rewrite_request(_ctx(seed=3), "In what year was the director from Step 1 born?",
                          [(1, "Who directed the film Jaws?", "Steven Spielberg")], "", max_tokens=64)
    text = req.messages[0].content
    assert text.endswith("Known answers:\n- Step 1: Who directed the film Jaws? ANSWER: Steven Spielberg\n"
                         "Question: In what year was the director from Step 1 born?\nRewrite:")
    assert (req.max_tokens, req.seed, tuple(req.stop)) == (64, 3, ("\n\n",))


def test_a_remark_is_looked_for_only_in_the_last_300_characters_of_a_step():
    """"a remark ends its line: look for one only in the last characters" (_REMARK_CHARS = 300, a bound
    on the work per line): "(depends on Step 1)" is cut from the step and read as its dependency, while
    a parenthesis opening more than 300 characters before the end is part of the question (its mention
    of Step 1 still makes the edge)."""
    short = parse_plan("Step 1: Who directed Jaws?\nStep 2: When was he born? (depends on Step 1)")
    assert short.steps[1] == "When was he born?" and short.edges == ((1, 2),)
    tail = "(depends on Step 1 " + "and on what the film was about, " * 10 + "as said)"
    assert len(tail) > 300
    long = parse_plan("Step 1: Who directed Jaws?\nStep 2: When was he born? " + tail)
    assert long.steps[1] == "When was he born? " + tail and long.edges == ((1, 2),)


def test_a_step_line_holding_only_a_remark_is_no_step():
    """A remark is cut from its step line; a line that is nothing but a remark ("Step 2: (depends on
    Step 1)") has no question left, so it is no step, and its edge names a step the plan does not have."""
    plan = parse_plan("Step 1: Who directed Jaws?\nStep 2: (depends on Step 1)")
    assert (plan.steps, plan.edges, plan.unknown) == (("Who directed Jaws?",), (), ((1, 2),))


def test_an_edge_from_a_step_that_does_not_exist_is_unknown():
    """Module docstring: "an edge naming a step that does not exist is dropped too" -- whichever end
    it names: Step 9 -> Step 2 of a two-step plan is kept in Plan.unknown, not in the graph."""
    plan = parse_plan("Step 1: Who directed Jaws?\nStep 2: When was he born?\nDependencies: Step 9 -> Step 2")
    assert (plan.edges, plan.unknown) == ((), ((9, 2),))
    assert sorted(plan.graph().nodes) == [1, 2]
