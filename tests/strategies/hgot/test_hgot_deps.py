"""Plan dependencies: every notation the planner writes, the demos' round trip, cycles, references."""

import itertools
import json
import random
from pathlib import Path

import networkx as nx
import pytest

from thoughtloom.core.bounded import MAX_PARSE_CHARS
from thoughtloom.strategies.hgot import deps
from thoughtloom.strategies.hgot.demos import (Annotated, load_annotated, render_plan_demos,
                                               render_rewrite_demos)
from thoughtloom.strategies.hgot.plan import PlanError, parse_plan, resolve_references

from conftest import data_file

DATA = Path(__file__).parent / "data"


def edges(text):
    return sorted(deps.read_edges(text))


# -- the paper's and the authors' notation -------------------------------------------------------

def test_formalization_notation_of_appendix_c3():
    """Appendix C.3 (formalization) and the authors' prompt: "If Step 2 depends on Step 1, then
    write Step 1 -> Step 2; If Step 2 and Step 3 depend on Step 1, then write Step 1 -> (Step 2
    and Step 3); If Step 3 depends on Step 1 and Step 2, then write (Step 1 and Step 2) -> Step 3"."""
    assert edges("Step 1 -> Step 2") == [(1, 2)]
    assert edges("Step 1 -> (Step 2 and Step 3)") == [(1, 2), (1, 3)]
    assert edges("(Step 1 and Step 2) -> Step 3") == [(1, 3), (2, 3)]


def test_the_planning_prompt_example_of_appendix_c1():
    """Appendix C.1: the plan lists "the essential steps", each a standalone question for the
    search engine, dependencies highlighted, and a step may depend only on lower-numbered
    steps; its example "Step 2 depends on Step 1" is the formalization's "Step 1 -> Step 2":
    both are the one edge from step 1 to step 2. The rendered prompt says each of these rules
    (a prompt without the lower-numbered-steps rule fails here)."""
    from thoughtloom.core.trace import Trace
    from thoughtloom.strategies.context import Context
    from thoughtloom.strategies.hgot.plan import plan_request
    from thoughtloom.tasks.base import Task
    from thoughtloom.testing import ScriptedLM

    assert edges("Step 2 depends on Step 1.") == edges("Step 1 -> Step 2") == [(1, 2)]
    ctx = Context(lm=ScriptedLM([]), task=Task(), trace=Trace())
    prompt = plan_request(ctx, "Who?", [], "", max_tokens=10, max_steps=0).messages[-1].content
    for rule in ("List the essential steps", "standalone question that a search engine could answer",
                 "A step may depend only on lower-numbered steps", '"Step 1 -> Step 2"', "Dependencies: None"):
        assert rule in prompt, rule


def test_the_authors_annotated_dependency_phrasings():
    """The authors' annotated demos (data/HotPotQA/train_*_augmented.csv) write "Step 2 depends
    on the answer from Step 1." and "Step 3 depends on the answers from Steps 1 and 2."; the
    second is two edges, one from each of steps 1 and 2 to step 3."""
    assert edges("Step 2 depends on the answer from Step 1.") == [(1, 2)]
    assert edges("Step 3 depends on the answers from Steps 1 and 2.") == [(1, 3), (2, 3)]
    assert edges("Step 2 depends on the answer from Step 1.\nStep 4 depends on the answer from Step 2.\n"
                 "Step 5 depends on the answer from Step 3.") == [(1, 2), (2, 4), (3, 5)]


@pytest.mark.parametrize("text, expected", [
    ("Step 1 -> Step 2 -> Step 3", [(1, 2), (2, 3)]),  # a chain: each arrow an edge
    ("Step 1 -> Step 2, Step 2 -> Step 3, Step 1 -> Step 3", [(1, 2), (1, 3), (2, 3)]),
    ("Step 1 -> Step 2, Step 3 -> Step 4", [(1, 2), (3, 4)]),
    ("Step 1 -> Step 2; Step 3 -> Step 4", [(1, 2), (3, 4)]),
    ("Step 1 -> Step 2 and Step 3 -> Step 4", [(1, 2), (3, 4)]),
    ("Steps 1 and 2 -> Step 3", [(1, 3), (2, 3)]),
    ("Step 1, Step 2 -> Step 3", [(1, 3), (2, 3)]),
    ("Step 1 -> Step 2, Step 3", [(1, 2), (1, 3)]),
    ("Step 4 depends on Steps 1, 2 and 3", [(1, 4), (2, 4), (3, 4)]),
    ("Step 3 depends on both Step 1 and Step 2.", [(1, 3), (2, 3)]),
    ("Step 2 depends on Step 1 and Step 3 depends on Step 2.", [(1, 2), (2, 3)]),
    ("Step 2 and Step 3 depend on Step 1.", [(1, 2), (1, 3)]),
    ("Step 2 relies on Step 1. Step 3 uses the answer of Step 2.", [(1, 2), (2, 3)]),
    ("Step 1 is needed for Step 2", [(1, 2)]),
    ("Step 1 → Step 2 => Step 3", [(1, 2), (2, 3)]),
    ("step1->step2", [(1, 2)]),
    ("Step 2 does not depend on Step 1.", []),
    ("None", []),
    ("Dependencies: None", []),
    ("Steps 1 and 2 are independent.", []),
    ("", []),
])
def test_every_notation_keeps_its_edges(text, expected):
    assert edges(text) == expected


def test_deep_parentheses_read_flat():
    """Groups nest at most two deep; deeper parentheses (a hostile reply) are read as flat."""
    assert edges("((Step 1 and Step 2)) -> Step 3") == [(1, 3), (2, 3)]
    assert edges("(" * 500 + "Step 1" + ")" * 500 + " -> Step 2") == [(1, 2)]


def test_an_inline_dependency_keeps_the_step():
    """Issue 24 item 2: a step line that mentions its dependency stays a step."""
    plan = parse_plan("Step 1: Who directed Jaws?\nStep 2: When was he born? (depends on Step 1)")
    assert plan.steps == ("Who directed Jaws?", "When was he born?") and plan.edges == ((1, 2),)
    plan = parse_plan("Step 1: A thing?\nStep 2: B thing? [Dependency: Step 1]\nStep 3: C thing? - depends on Steps 1 and 2")
    assert plan.steps == ("A thing?", "B thing?", "C thing?") and plan.edges == ((1, 2), (1, 3), (2, 3))
    # a clause that names no step is part of the question
    plan = parse_plan("Step 1: Who wrote the film, based on the novel Jaws?")
    assert plan.steps == ("Who wrote the film, based on the novel Jaws?",) and plan.edges == ()


def test_steps_written_on_one_line_and_a_step_that_names_another():
    """The authors' plans are one line ("Step 1: ... Step 2: ...", split before each "Step N:");
    a step that names an earlier one ("the actor in Step 1") needs its answer."""
    plan = parse_plan('Plan: Step 1: Who stars in the film "Woman Obsessed"? Step 2: Is the actor in Step 1 '
                      'Jewish?\nDependencies: None')
    assert plan.steps == ('Who stars in the film "Woman Obsessed"?', "Is the actor in Step 1 Jewish?")
    assert plan.edges == ((1, 2),)


def test_a_dependencies_block_of_per_step_lines():
    plan = parse_plan("Step 1: A thing?\nStep 2: B thing?\nStep 3: C thing?\nDependencies:\n"
                      "Step 2: Step 1\nStep 3: Steps 1 and 2")
    assert plan.steps == ("A thing?", "B thing?", "C thing?") and plan.edges == ((1, 2), (1, 3), (2, 3))


def test_the_formalization_reply_replaces_the_plans_own_dependencies():
    plan = parse_plan("Step 1: A thing?\nStep 2: B thing?\nDependencies: None",
                      dependencies="Step 1 -> Step 2")
    assert plan.edges == ((1, 2),)


# -- real replies of the bench model ------------------------------------------------------------

def test_labelled_bench_model_plans():
    """Replies of the bench model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M) to the ``hgot_plan``
    prompt on the HotpotQA package sample, each with its steps and edges labelled by hand
    from the reply's text (benchmarks/hgot_plan_replies.py wrote them)."""
    rows = [json.loads(line) for line in (DATA / "plan_replies.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 12
    for row in rows:
        label = row["label"]
        if label.get("error"):
            with pytest.raises(PlanError):
                parse_plan(row["reply"], max_steps=4)
            continue
        plan = parse_plan(row["reply"], max_steps=4)
        assert list(plan.steps) == label["steps"], row["question"]
        assert sorted(plan.edges) == sorted(tuple(e) for e in label["edges"]), row["question"]


# -- demos: rendered dependencies read back as the same edges -----------------------------------

def _all_dags(n):
    pairs = [(u, v) for u in range(1, n + 1) for v in range(1, n + 1) if u < v]
    for bits in range(1 << len(pairs)):
        yield [p for i, p in enumerate(pairs) if bits >> i & 1]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_render_reads_back_as_the_same_edges_for_every_dag(n):
    for dag in _all_dags(n):
        assert edges(deps.render(dag)) == sorted(dag)
        assert edges(deps.describe(dag)) == sorted(dag)


def _demo_round_trip(demos):
    """Each demo's dependencies, as rendered into the plan demos, parse back as the edges its
    own text states."""
    checked = 0
    for d in demos:
        if not d.plan_steps():
            continue
        block = render_plan_demos([d]).strip()
        plan = parse_plan(block.split("\n", 1)[1], max_steps=99)
        stated = {e for e in deps.read_edges(d.dependencies)
                  if 1 <= min(e) and max(e) <= len(d.plan_steps()) and e[0] != e[1]}
        named = {(u, i) for i, s in enumerate(d.plan_steps(), 1) for u in deps.mentions(s.split(":", 1)[1])
                 if 1 <= u <= len(d.plan_steps())}
        assert set(plan.edges) | set(plan.dropped) == stated | named, d.question
        checked += 1
    return checked


def test_authors_demo_rows_round_trip_with_their_dependencies():
    """Every row of the authors' annotated demo files: "Step 3 depends on the answers from Steps 1
    and 2." used to render as "Dependencies: None"; now its edges survive the rendering."""
    files = sorted(data_file("hgot_demos").glob("*.csv"))
    assert files
    total = sum(_demo_round_trip(load_annotated(f)) for f in files)
    assert total > 150
    row = next(d for d in load_annotated(data_file("hgot_demos", "HotPotQA_train_medium_augmented.csv"))
               if "Steps 1 and 2" in d.dependencies)
    assert "Dependencies: (Step 1 and Step 2) -> Step 3" in render_plan_demos([row])


def test_shipped_demo_files_round_trip():
    """Any annotated demo file shipped with the package samples renders dependencies the parser
    reads back identically (none shipped yet is no failure; the fixture rows always run)."""
    import thoughtloom.tasks as tasks_pkg

    samples = Path(tasks_pkg.__file__).parent / "data" / "samples"
    shipped = [f for f in samples.rglob("*.csv") if f.read_text(encoding="utf-8").startswith("Question,Plan")]
    for f in shipped:
        _demo_round_trip(load_annotated(f))
    fixtures = [Annotated("Q?", "Step 1: A thing? Step 2: B thing? Step 3: C thing?",
                          "Step 3 depends on the answers from Steps 1 and 2."),
                Annotated("Q?", "Step 1: A thing? Step 2: B thing in Step 1? Step 3: C thing?",
                          "Step 1 -> (Step 2 and Step 3)"),
                Annotated("Q?", "Step 1: A thing? Step 2: B thing?", "None")]
    assert _demo_round_trip(fixtures) == 3


def test_rewrite_demos_show_the_parents_answers():
    """Appendix C.4: the rewrite turns the last question into a standalone one "by giving the
    answers to previous questions"; the authors' rewrite context is "Step 1: <question> ANSWER:
    <answer>. Step 2: <question>", so a demo shows step 1's answer and the step to rewrite."""
    row = Annotated("Q?", rewrite_context='Step 1: Who stars in the film "Woman Obsessed"? ANSWER: Susan Hayward, '
                                          'Stephen Boyd. Step 2: Is the actor in Step 1 Jewish?',
                    rewrite="Is Susan Hayward Jewish?")
    text = render_rewrite_demos([row])
    assert text == ('\nKnown answers:\n- Step 1: Who stars in the film "Woman Obsessed"? ANSWER: Susan Hayward, '
                    'Stephen Boyd\nQuestion: Is the actor in Step 1 Jewish?\nRewrite: Is Susan Hayward Jewish?\n')
    # a row without an answered step has nothing to teach
    assert render_rewrite_demos([Annotated("Q?", rewrite_context="Step 2: Is he Jewish?", rewrite="X Y")]) == ""


# -- cycles -----------------------------------------------------------------------------------------

def _fewest(nodes, es):
    for k in range(len(es) + 1):
        for drop in itertools.combinations(es, k):
            g = nx.DiGraph()
            g.add_nodes_from(nodes)
            g.add_edges_from(e for e in es if e not in drop)
            if nx.is_directed_acyclic_graph(g):
                return k
    raise AssertionError


def test_break_cycles_drops_the_fewest_edges():
    """Section 3.1: the plan is "a directed acyclic graph (DAG) to avoid circular dependencies";
    a cycle is broken by dropping edges, as few as leave no cycle (checked against every subset)."""
    rng = random.Random(0)
    for _ in range(150):
        n = rng.randint(2, 5)
        es = sorted({(rng.randint(1, n), rng.randint(1, n)) for _ in range(rng.randint(1, 9))})
        es = [e for e in es if e[0] != e[1]]
        kept, dropped = deps.break_cycles(list(range(1, n + 1)), es)
        assert sorted(kept + dropped) == es
        assert nx.is_directed_acyclic_graph(nx.DiGraph(kept)) or not kept
        assert len(dropped) == _fewest(range(1, n + 1), es)


def test_break_cycles_prefers_the_edge_the_prompt_forbids():
    """The plan prompt (appendix C.1): "Higher number steps can depend on lower number steps,
    while the reverse is not possible." Of 1 -> 2 -> 3 -> 1, the edge 3 -> 1 goes."""
    assert deps.break_cycles([1, 2, 3], [(1, 2), (2, 3), (3, 1)]) == ([(1, 2), (2, 3)], [(3, 1)])


# -- references to steps are resolved before searching ---------------------------------------------

def test_a_dependent_steps_query_names_its_parents_answer_not_the_step():
    """Section 3.1: search "rewrites dependent questions to include the prior sub-query and its
    probed answer"; the query for "Is the actor in Step 1 Jewish?" carries step 1's answer."""
    assert resolve_references("Is the actor in Step 1 Jewish?", {1: "Susan Hayward"}) == \
        "Is the actor (Susan Hayward) Jewish?"
    assert resolve_references("When was Step 1 born?", {1: "Susan Hayward"}) == "When was Susan Hayward born?"
    assert resolve_references("What is the capital of the answer to Step 1?", {1: "France"}) == \
        "What is the capital of France?"
    assert resolve_references("Who is older, the people of Steps 1 and 2?", {1: "A", 2: "B"}) == \
        "Who is older, the people (A and B)?"
    assert resolve_references("When was the director from Step 1 born?", {}) == "When was the director born?"
    assert resolve_references("Who directed Jaws?", {1: "X"}) == "Who directed Jaws?"


# -- hostile replies --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "", "\x00\ud800", "Step 1: " + "(" * 50_000, "Step 1: A?\n" + "Step 1 -> " * 30_000,
    "Step 1: A? " + "(depends on " * 20_000, "Step 1: A?\nDependencies: " + "Steps 1 and " * 30_000 + "2",
    "Step 1: A?\n" + " " * 200_000 + "x", "Step 99999999999: A?", "Step 1: nan inf -> Step 1e308",
    "Step 1: A? " + "- depends on " * 20_000,
    "Step 1: A?\nStep 2: B?\nDependencies: " + "(" * 20_000 + "Step 1" + ")" * 20_000 + " -> Step 2",
    "Step 1: A?\nStep 2: B?\nDependencies: " + "(Step 1 and " * 10_000 + "Step 2" + ")" * 10_000,
], ids=range(12))
def test_hostile_replies_parse_or_raise_plan_error_quickly(text):
    try:
        plan = parse_plan(text[: MAX_PARSE_CHARS * 2], max_steps=4)
    except PlanError:
        return
    assert 1 <= len(plan.steps) <= 4
    assert nx.is_directed_acyclic_graph(plan.graph())


# -- exact values the mutation run found unchecked (deps.py) --------------------------------------

def test_a_bare_number_is_a_step_only_inside_a_list_of_steps():
    """_tokens: "a bare number is a step only inside a list of steps" ("Steps 1 and 2"): the 3 of
    "the top 3 results" after "depends on" is no step, so Step 2 depends on Step 1 alone."""
    assert deps.read_edges("Step 2 depends on the top 3 results of Step 1") == [(1, 2)]
    assert deps.read_edges("Steps 1 and 2 -> Step 3") == [(1, 3), (2, 3)]


def test_above_the_exact_limit_each_cycle_loses_its_last_edge():
    """break_cycles: "Above _EXACT_LIMIT steps, each cycle found loses its last edge (the authors'
    loop)". With 11 steps the cycle 1 -> 2 -> 3 -> 1, found from step 1, loses 3 -> 1; the edges on no
    cycle stay."""
    assert deps._EXACT_LIMIT == 10
    kept, dropped = deps.break_cycles(list(range(1, 12)), [(1, 2), (2, 3), (3, 1), (10, 11)])
    assert (kept, dropped) == ([(1, 2), (2, 3), (10, 11)], [(3, 1)])


def test_mentions_lists_each_named_step_once_and_nothing_else():
    """mentions: "The step numbers text names" -- the steps of a chain, once each, no arrow or other token."""
    assert deps.mentions("Step 1 -> Step 2 -> Step 3, then Step 1 again") == [1, 2, 3]


def test_a_single_parent_is_written_without_a_group():
    """render: "Step 1 -> Step 2" for one parent, a parenthesised group only for several."""
    assert deps.render([(1, 2)]) == "Step 1 -> Step 2"
    assert deps.render([(1, 3), (2, 3)]) == "(Step 1 and Step 2) -> Step 3"


def test_parentheses_holding_a_relation_anywhere_inside_are_dropped():
    """_strip_operator_parens: parentheses "that hold a relation" are dropped, also when the relation is
    not their first token: "(and it depends on Step 3)" is read as "and it depends on Step 3"."""
    assert deps.read_edges("Step 4 (and it depends on Step 3)") == [(3, 4)]


def test_up_to_ten_steps_the_fewest_edges_are_dropped_exactly():
    """_EXACT_LIMIT = 10: "steps up to which the fewest edges are found exactly". Edges 1->2, 2->1, 2->3,
    3->1 make two cycles that share 1->2: with 10 steps dropping that one edge is enough; with 11 the
    authors' loop drops the last edge of each cycle it finds, two edges."""
    edges = [(1, 2), (2, 1), (2, 3), (3, 1)]
    assert deps.break_cycles(list(range(1, 11)), edges) == ([(2, 1), (2, 3), (3, 1)], [(1, 2)])
    assert deps.break_cycles(list(range(1, 12)), edges) == ([(1, 2), (2, 3)], [(2, 1), (3, 1)])


@pytest.mark.parametrize("text", ["Step 3 depends on Step 1 but not Step 2", "Step 3 depends on Step 1, not Step 2",
                                  "Step 3 depends on Step 1 and not on Step 2"])
def test_a_step_negated_after_the_group_gives_no_edge(text):
    """Module docstring: "A negated relation ("does not depend on") gives no edge". "Step 3 depends on
    Step 1 but not Step 2" says Step 3 needs Step 1 alone; Step 2 was read into Step 1's group, an edge
    2 -> 3 the text denies (found by the mutation run: that branch was never tested)."""
    assert deps.read_edges(text) == [(1, 3)]


def test_only_the_step_right_after_not_is_left_out_of_a_list():
    """The negation covers the step it precedes: in "Step 3 uses Step 1 but not Step 2, and Step 4 uses
    Step 3" the reader's list after "not" runs on to Step 4, which still starts the next relation."""
    assert deps.read_edges("Step 3 uses Step 1 but not Step 2, and Step 4 uses Step 3") == [(1, 3), (3, 4)]


def test_a_middle_group_in_parentheses_stays_whole():
    """"(Step 1 and Step 2) -> Step 3, Step 1 -> (Step 2 and Step 3)" are groups (module docstring); a
    parenthesised group between two arrows is one item, so both its steps depend on Step 1 and feed Step 4."""
    assert deps.read_edges("Step 1 -> (Step 2 and Step 3) -> Step 4") == [(1, 2), (1, 3), (2, 4), (3, 4)]


def test_among_equally_few_a_backward_edge_is_dropped_first():
    """break_cycles: "Among equally few, edges from a higher to a lower step (the order the plan prompt
    forbids) go first". The cycle 2 <-> 3 loses 3 -> 2, not 2 -> 3."""
    assert deps.break_cycles([1, 2, 3], [(2, 3), (3, 1), (3, 2)]) == ([(2, 3), (3, 1)], [(3, 2)])


def test_a_full_stop_ends_a_clause():
    """Clauses are split by commas, "and", ";", "." or new lines (module docstring): the step named in the
    sentence after "." is no part of the arrow before it."""
    assert deps.read_edges("Step 1 -> Step 2. Step 3 is independent") == [(1, 2)]
    assert deps.read_edges("Step 1 -> Step 2; Step 3 stands alone") == [(1, 2)]


def test_a_tie_between_equally_few_backward_edges_keeps_the_numbering_from_the_end():
    """break_cycles' tie rule: among orders dropping equally few edges (and equally few forward ones), the
    last step is the highest-numbered one such an order allows, then the one before it. The cycle
    4 -> 3 -> 5 -> 4 can lose 5 -> 4 (order 1 2 4 3 5) or 4 -> 3 (order 1 2 3 5 4), both backward; step 5
    can be last only in the first, so 5 -> 4 goes."""
    edges = [(1, 4), (2, 4), (3, 5), (4, 3), (5, 4)]
    assert deps.break_cycles([1, 2, 3, 4, 5], edges) == ([(1, 4), (2, 4), (3, 5), (4, 3)], [(5, 4)])
