"""The tree's own bookkeeping, with exact values: node defaults, the answer when nothing is
scored yet, and the text picture ``thoughtloom run`` prints."""

from thoughtloom.strategies.treesearch.tree import Node, Tree, render_tree


def test_a_new_node_is_a_root_at_depth_0_unscored_unvisited():
    assert Node(0, "a").as_dict() == {
        "id": 0, "parent": None, "depth": 0, "kind": "root", "candidate": "a", "score": None, "feedback": "",
        "items": [], "evaluator": "", "salvaged": False, "visits": 0, "mean_value": None, "children": [],
        "expanded": False, "simulated": False}


def test_with_nothing_scored_yet_the_answer_is_the_root():
    """A budget stop before the first evaluation answers with the first candidate (not an error)."""
    tree = Tree()
    tree.nodes = [Node(0, "a"), Node(1, "ab", parent=0, depth=1)]
    assert tree.best_by_score().id == 1  # every node unscored: the deeper one, as among ties
    assert tree.best_by_value().id == 1
    tree.nodes[0].score = 0.0
    assert tree.best_by_score().id == 0 and tree.best_by_value().id == 0  # only scored nodes count, even at 0


def test_the_text_picture_is_exact():
    root = Node(0, "first line\nsecond", score=0.5, visits=2, value_sum=1.5, children=[1, 2])
    kid = Node(1, "x" * 80, parent=0, depth=1, kind="revised", score=1.0, visits=1, value_sum=1.0)
    sim = Node(2, "y", parent=0, depth=1, kind="extended", simulated=True)
    picture = render_tree([n.as_dict() for n in (root, kid, sim)], chosen=1, width=20)
    assert picture.splitlines() == [
        " #0 [root] v=0.50 n=2 mean=0.75: first line | second",
        "*  #1 [revised] v=1.00 n=1 mean=1.00: " + "x" * 17 + "...",
        "   #2 [extended sim] v=  -   n=0: y",
    ]
    assert render_tree([], chosen=None) == ""
    exact = render_tree([Node(0, "z" * 20).as_dict()], chosen=None, width=20)
    assert exact.endswith(": " + "z" * 20)  # a candidate exactly as wide as the picture is not cut


def test_mcts_answers_by_the_evaluator_score_before_the_mean_reward():
    """ThoughtSculpt Eq. 4 scores a node by v(x), its heuristic value: a node scored 0.9 whose
    descendants brought low rewards (mean 0.1) beats an unvisited node scored 0.5."""
    tree = Tree()
    tree.nodes = [Node(0, "a", score=0.9, visits=3, value_sum=0.3, children=[1]),
                  Node(1, "ab", parent=0, depth=1, score=0.5)]
    assert tree.best_by_value().id == 0


def test_the_text_view_shows_each_candidate_whole():
    """Issue 39 §10: the text view cut tree candidates at 70 characters with '...'."""
    outline = "\n".join(f"[{i}] The heroine crosses the mountains to find her brother, item {i}." for i in range(1, 4))
    picture = render_tree([Node(0, outline).as_dict()], chosen=0)
    assert "..." not in picture and picture.endswith("item 3.") and picture.count(" | ") == 2
