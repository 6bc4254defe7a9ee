"""DecomP's task loaders and scorers (letter_cat, list_reversal, CommaQA, open-domain QA)."""

import json

from conftest import data_file
from thoughtloom.core.types import Passage
from thoughtloom.eval.services import pooled_retriever
from thoughtloom.tasks import get
from thoughtloom.tasks.commaqa import answer_items


def test_letter_cat_loads_gold_and_strata():
    task = get("letter_cat")
    ex = task.load(data_file("decomp_letter_cat", "n3_eg100_pos2_semic.json"))
    assert len(ex) == 100 and ex[0].gold == "y;y;s"
    assert ex[0].problem.meta == {"n": 3, "sep": "semicolon", "position": 3}
    assert task.score("y;y", "y;y;s")["em"] == 0.0


def test_the_letter_metric_is_the_papers_exact_match():
    """§4.1 scores k-th letter concatenation by exact match with the gold string, which for the
    semicolon files is written with no spaces ("g;j;l;n"): another case or separator spacing is
    another string. Only what surrounds the answer (space, quotes, a final period) is dropped."""
    task = get("letter_cat")
    assert task.score("g;j;l;n", "g;j;l;n")["em"] == 1.0
    assert task.score(' "g;j;l;n". ', "g;j;l;n")["em"] == 1.0
    for wrong in ("G ; J ; L ; N", "g; j; l; n", "G;J;L;N", "g j l n"):
        assert task.score(wrong, "g;j;l;n")["em"] == 0.0, wrong
    assert task.score("n a s", "n a s")["em"] == 1.0 and task.score("n  a s", "n a s")["em"] == 0.0
    assert task.extract_answer('... So the answer is: "a b c".') == "a b c"


def test_list_reversal_normalizes_spacing_but_not_order():
    task = get("list_reversal")
    ex = task.load(data_file("decomp_list_reversal", "test_4_normal_words.json"))
    assert len(ex) == 90 and ex[0].problem.meta["length"] == 4
    assert task.score("Case,umbrella, purse , alarm clock", "case, umbrella, purse, alarm clock")["em"] == 1.0
    assert task.score("umbrella, case, purse, alarm clock", "case, umbrella, purse, alarm clock")["em"] == 0.0
    report = task.report([{"meta": {"length": 4}, "metrics": {"em": 1.0}},
                          {"meta": {"length": 4}, "metrics": {"em": 0.0}}])
    assert report["em_by_stratum"]["len4"] == {"n": 2, "em": 0.5}
    # the same rule, public, for the run inspector's per-stratum figures
    assert task.stratum(ex[0].problem.meta) == "len4"
    assert get("hotpotqa").stratum({"stratum": "long"}) == "long" and get("gsm8k").stratum({}) is None


def test_commaqa_scores_answer_sets():
    task = get("commaqa")
    ex = task.load(data_file("commaqa_e", "iid_test_eg100.json"))
    assert len(ex) == 100 and "directed by" in ex[0].problem.context
    assert ex[0].problem.meta["split"] == "iid"
    # several questions are asked over one passage: a group, which a paired test resamples as one
    groups = [task.group(e.problem.meta) for e in ex]
    assert all(g and g.startswith("iid/") for g in groups) and len(set(groups)) < len(groups)
    assert get("gsm8k").group({}) is None
    gold = ["Neuropsychotaxis", "Monoxandrite"]
    assert task.score('["Monoxandrite", "Neuropsychotaxis"]', gold) == {"em": 1.0, "f1": 1.0}
    assert task.score("Monoxandrite", gold)["f1"] == round(2 / 3, 6)
    assert task.score("[]", gold)["em"] == 0.0
    assert answer_items("Ann, Bo and Cy") == ["ann", "bo", "cy"]


async def test_odqa_loaders_pool_paragraphs_and_bm25_finds_the_gold_one(tmp_path):
    rec = {"_id": "x1", "question": "Who directed Moon Garden?", "answer": "Ida Vance",
           "context": [["Moon Garden", ["Moon Garden is a film", " directed by Ida Vance."]],
                       ["Tower", ["The Tower is tall."]]]}
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(rec) + "\n" + json.dumps({**rec, "_id": "x2"}) + "\n", encoding="utf-8")
    task = get("hotpotqa")
    ex = task.load(path)
    assert sorted(e.problem.id for e in ex) == ["hotpotqa-x1", "hotpotqa-x2"]
    assert task.score("ida vance", ex[0].gold) == {"em": 1.0, "f1": 1.0}
    assert task.pooled_corpus() == (path, "hotpotqa", (), '{"links": {"seeds": 3}}')
    retriever = pooled_retriever(task.pooled_corpus())
    assert len(retriever) == 2  # the same paragraphs pool once
    hits = (await retriever.search(["Who directed Moon Garden?"], 2))[0]
    assert hits[0].passage.title == "Moon Garden"


async def test_the_pooled_index_follows_title_links_unless_a_suite_says_otherwise(tmp_path):
    """Our default, not the paper's (docs/retrieval.md): the pooled index takes BM25's top 3 and adds
    the passages whose titles they name. The second hop below shares no word with the question, so
    plain BM25 cannot rank it; the first hop names it, so the linked index does. A suite dataset's
    ``index`` replaces the default (``links.seeds = 0``: plain BM25)."""
    first = ["Moon Garden", ["Moon Garden is a film directed by Ida Vance."]]
    second = ["Ida Vance", ["Ida Vance was born in Quillport."]]
    noise = [[f"Tower {i}", [f"Tower {i} is a tall stone tower."]] for i in range(6)]
    rec = {"_id": "x1", "question": "Where was the director of Moon Garden born?", "answer": "Quillport",
           "context": [first, *noise, second]}
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    question = "Which film is Moon Garden?"
    task = get("hotpotqa")
    task.load(path)
    linked = (await pooled_retriever(task.pooled_corpus(), task.pooled_corpus().index_settings).search([question], 2))[0]
    assert [h.passage.title for h in linked] == ["Moon Garden", "Ida Vance"]
    task.pool_with((), {"links": {"seeds": 0}})
    assert task.pooled_corpus().index_settings == {"links": {"seeds": 0}}
    plain = (await pooled_retriever(task.pooled_corpus(), task.pooled_corpus().index_settings).search([question], 2))[0]
    assert "Ida Vance" not in [h.passage.title for h in plain]
    task.pool_with((), None)  # no index given: the settings stay
    assert task.pooled_corpus().index_settings == {"links": {"seeds": 0}}


def test_real_odqa_files_load():
    for name, parts in (("musique", ("musique", "musique_ans_dev_subset.jsonl")),
                        ("2wiki", ("2wikimultihopqa", "2wiki_dev_subset.jsonl"))):
        task = get(name)
        ex = task.load(data_file(*parts))
        assert ex and all(e.gold for e in ex)
        assert len(pooled_retriever(task.pooled_corpus())) > len(ex)


def test_the_odqa_suite_searches_the_largest_pool_its_data_folders_give():
    """§A.1 pools the paragraphs of every question of each dataset (430,225 for 2Wiki, 139,416
    for MuSiQue). Our folders hold dev subsets, so decomp-odqa pools, per dataset, every file
    of its folder that carries paragraphs (the data file and its 'corpus' files), and its notes
    say how many passages that is and that it is not the paper's corpus."""
    from thoughtloom.eval.reproduce import suites
    from thoughtloom.retrieval import read_corpus
    from thoughtloom.retrieval.sources import detect_format

    suite = suites.load("decomp-odqa")
    notes = " ".join(suite.notes)
    assert "Not the paper's retrieval corpus" in notes and "Appendix A.1 setting" not in notes
    for d in suite.datasets:
        folder = data_file(*d.data.split("/")).parent
        carrying = {f.name for f in folder.iterdir() if f.is_file() and (
            detect_format(f) in ("hotpotqa", "2wiki", "ircot", "musique") or f.name.endswith("_corpus.json"))}
        pooled = [d.data, *d.corpus]
        assert {p.split("/")[-1] for p in pooled} == carrying, d.id
        size = len(read_corpus([data_file(*p.split("/")) for p in pooled]).passages)
        assert f"{size:,}" in notes, (d.id, size)
