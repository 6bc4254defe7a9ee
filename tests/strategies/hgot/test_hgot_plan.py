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
