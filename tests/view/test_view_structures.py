"""The run inspector rebuilds each strategy family's structure from the trace alone.

Traces come from real runs of the strategies on ScriptedLM (``view_runs``);
what the trace gives is checked against what the strategy itself recorded
in the result's details (the tree, the hierarchy, the executed program).
"""

import copy
import json

import pytest

from thoughtloom.view.hierarchy import hierarchy
from thoughtloom.view.programs import programs
from thoughtloom.view.rundir import RunFolder
from thoughtloom.view.trees import search_tree

from support import view_runs


def blocks(folder):
    run = RunFolder.open(folder)
    return run, dict(run.trace_blocks())


@pytest.mark.parametrize("strategy", ["sculpt-mcts", "sculpt-dfs", "self-refine"])
def test_a_tree_search_is_rebuilt_node_for_node(tmp_path, strategy):
    run, traces = blocks(view_runs.tree_run(tmp_path / "run", strategy))
    for example, record in run.records.items():
        tree = search_tree(traces[example])
        kept = {n["id"]: n for n in record.details["tree"]}
        assert set(tree.nodes) == set(kept) and len(tree.nodes) == record.details["nodes"]
        for nid, node in tree.nodes.items():
            assert node.parent == kept[nid]["parent"] and node.children == kept[nid]["children"]
            assert node.depth == kept[nid]["depth"] and node.score == kept[nid]["score"]
            assert node.candidate == kept[nid]["candidate"] and node.visits == kept[nid]["visits"]
            if node.visits:
                assert node.mean_value == pytest.approx(kept[nid]["mean_value"])
        assert tree.chosen == record.details["chosen"]
        path = [tree.chosen]
        while kept[path[0]]["parent"] is not None:
            path.insert(0, kept[path[0]]["parent"])
        assert tree.path == path and tree.path[0] == tree.root.id
        rejected = [e for e in traces[example] if e["type"] == "tree_rejected"]
        assert len(tree.rejected) == len(rejected)
    if strategy == "sculpt-mcts":  # the scripted replies repeat an expression: one child is a duplicate
        assert any(r.reason == "duplicate" for ex in run.records
                   for r in search_tree(traces[ex]).rejected)


def test_an_hgot_hierarchy_is_rebuilt_with_its_plan_and_thoughts(tmp_path):
    run, traces = blocks(view_runs.hgot_run(tmp_path / "run"))
    [(example, record)] = run.records.items()
    hier = hierarchy(traces[example])
    kept = record.details["tree"]
    assert hier.linked and set(hier.questions) == {"1", "1.1", "1.2"}
    root = hier.questions["1"]
    assert [c.id for c in hier.children("1")] == ["1.1", "1.2"] and hier.children("1.1") == []
    assert root.plan["edges"] == [[1, 2]] and root.plan["levels"] == [[1], [2]]
    assert [c.question for c in hier.children("1")] == [c["question"] for c in kept["children"]]
    assert hier.questions["1.2"].original == "In what year was the director from Step 1 born?"
    assert hier.questions["1.2"].facts == [["Who directed the film Jaws?", "Steven Spielberg"]]
    assert root.answer == kept["answer"] == "1946"
    assert len(root.infers) == 2 and all(len(c.infers) == 1 for c in hier.children("1"))
    assert all(c.stop == "depth limit" for c in hier.children("1")) and root.stop == ""
    first = root.infers[0]
    assert len(first.thoughts) == 3 and first.tally and first.passages
    assert [p["id"] for p in root.retrieved] == [p["id"] for p in sorted(root.retrieved, key=lambda p: p["rank"])]
    assert hier.titles["spielberg"] == "Steven Spielberg"


def test_a_decomp_program_is_rebuilt_with_its_nested_runs(tmp_path):
    run, traces = blocks(view_runs.decomp_run(tmp_path / "run"))
    for example, record in run.records.items():
        [top] = programs(traces[example])
        executed = record.details["executed"]
        assert top.id == "1" and top.status == executed["status"] == "ok"
        assert [s.handler for s in top.steps] == [s["handler"] for s in executed["steps"]]
        assert [s.answer for s in top.steps] == [s["answer"] for s in executed["steps"]]
        nested = top.steps[1]
        assert nested.kind == "program" and nested.handler == "str_position"
        words = record.input.split('"')[1].split()
        assert [c.id for c in nested.children] == [f"1.2.{i}" for i in range(1, len(words) + 1)]
        assert [c.question for c in nested.children] == nested.inputs
        assert [len(c.steps) for c in nested.children] == [len(c["steps"]) for c in executed["steps"][1]["children"]]
        assert {s.kind for c in nested.children for s in c.steps} <= {"symbolic", "prompt"}


def _strip(events, fields):
    old = copy.deepcopy(events)
    for e in old:
        for f in fields:
            e.pop(f, None)
    return old


def test_traces_from_before_the_structure_ids_still_show_what_they_can(tmp_path):
    _, tree_traces = blocks(view_runs.tree_run(tmp_path / "tree"))
    events = next(iter(tree_traces.values()))
    new, old = search_tree(events), search_tree(_strip(events, ["path"]))
    assert old.path == new.path and old.chosen == new.chosen  # the chosen path from the parents

    _, hgot_traces = blocks(view_runs.hgot_run(tmp_path / "hgot"))
    old_h = hierarchy(_strip(next(iter(hgot_traces.values())), ["node"]))
    assert not old_h.linked and len(old_h.questions) == 3
    assert {q.question for q in old_h.roots()} >= {"In what year was the director of Jaws born?"}
    assert all(q.infers for q in old_h.questions.values())

    _, decomp_traces = blocks(view_runs.decomp_run(tmp_path / "decomp"))
    old_p = programs(_strip(next(iter(decomp_traces.values())), ["run", "kind"]))
    assert {r.program for r in old_p} == {"letter_cat", "str_position"}  # one flat run per program and depth
    assert all(s.kind == "" for r in old_p for s in r.steps)


def test_events_of_other_strategies_build_no_structure(tmp_path):
    _, traces = blocks(view_runs.sampling_run(tmp_path / "run"))
    events = next(iter(traces.values()))
    assert search_tree(events) is None and hierarchy(events) is None and programs(events) == []
    assert [e["type"] for e in events].count("sample") == 3


def test_a_rerun_example_keeps_its_last_trace_block(tmp_path):
    folder = view_runs.sampling_run(tmp_path / "run", n_examples=1)
    trace = folder / "trace.jsonl"
    lines = trace.read_text().splitlines()
    stale = [json.dumps({**json.loads(line), "type": "error", "error": "stale"}) for line in lines[:1]]
    other = json.dumps({"type": "error", "t": 0, "example": "someone-else", "error": "x"})
    trace.write_text("\n".join(stale + [other] + lines) + "\n{partial")
    run = RunFolder.open(folder)
    kept = {}
    for example, events in run.trace_blocks():
        kept[example] = events
    assert [e["type"] for e in kept["gsm8k-0"]].count("sample") == 3 and run.skipped_lines == 1
