"""Corpus ingestion: formats, pooling, deduplication, and bad records named by file:line."""

from __future__ import annotations

import json

import pytest

from conftest import data_file
from thoughtloom.core.errors import ConfigError, DataError
from thoughtloom.retrieval import read_corpus, read_questions
from thoughtloom.retrieval.corpus import chunk_paragraphs
from thoughtloom.retrieval.sources import detect_format


def write_jsonl(path, records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


HOTPOT = {"_id": "q1", "question": "Who?", "answer": "x", "type": "bridge", "level": "hard",
          "supporting_facts": [["Alpha", 0], ["Beta", 1]],
          "context": [["Alpha", ["Alpha is a letter.", " It comes first."]], ["Beta", ["Beta is second."]]]}
IRCOT = {"question_id": "q2", "question_text": "What?", "answers_objects": [],
         "contexts": [{"id": "0", "title": "Alpha", "paragraph_text": "Alpha is a letter.  It comes first.",
                       "is_supporting": True},
                      {"id": "1", "title": "Gamma", "paragraph_text": "Gamma is third.", "is_supporting": False}]}


def test_hotpotqa_and_ircot_pool_and_deduplicate_by_title_and_text(tmp_path):
    hot = write_jsonl(tmp_path / "hot.jsonl", [HOTPOT])
    irc = write_jsonl(tmp_path / "irc.jsonl", [IRCOT])
    corpus = read_corpus([hot, irc])
    assert [p.title for p in corpus.passages] == ["Alpha", "Beta", "Gamma"]
    assert corpus.passages[0].text == "Alpha is a letter. It comes first."
    assert corpus.read == 4 and corpus.duplicates == 1 and corpus.skipped == 0
    # ids are content hashes: the same passage read another way keeps its id
    again = read_corpus([irc])
    assert again.passages[0].id == corpus.passages[0].id


def test_same_title_different_text_is_kept(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"title": "T", "text": "one"}, {"title": "T", "text": "two"},
                                              {"title": "T", "text": " one "}])
    corpus = read_corpus(path)
    assert [p.text for p in corpus.passages] == ["one", "two"] and corpus.duplicates == 1


def test_bad_json_line_names_file_and_line(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": "fine"}, "", "{not json", {"text": "also fine"}])
    with pytest.raises(DataError, match=r"c\.jsonl:3: invalid JSON"):
        read_corpus(path)


def test_skip_bad_counts_and_keeps_reasons(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"text": "fine"}, "{not json", {"title": "no text"},
                                              {"text": ""}, {"text": "ok"}])
    corpus = read_corpus(path, skip_bad=True)
    assert len(corpus) == 2 and corpus.skipped == 3
    assert [p.split(": ")[0].rsplit(":", 1)[1] for p in corpus.problems] == ["2", "3", "4"]
    assert "no text field" in corpus.problems[1] and "empty passage text" in corpus.problems[2]


def test_json_array_error_names_line_of_the_record(tmp_path):
    path = tmp_path / "corpus.json"
    path.write_text('[\n  {"title": "A", "text": "a"},\n  {"title": "B",\n   "body": 3}\n]\n')
    with pytest.raises(DataError, match=r"corpus\.json:3: title and text must be strings"):
        read_corpus(path)


def test_bad_hotpot_context_names_line(tmp_path):
    bad = dict(HOTPOT, context=[["Alpha", "not a list"]])
    path = write_jsonl(tmp_path / "hot.jsonl", [HOTPOT, bad])
    with pytest.raises(DataError, match=r"hot\.jsonl:2: context\[0\] is not \[title, \[sentences\]\]"):
        read_corpus(path, "hotpotqa")
    assert read_corpus(path, "hotpotqa", skip_bad=True).skipped == 1


def test_duplicate_id_with_different_content_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "one"}, {"id": "a", "text": "two"}])
    with pytest.raises(DataError, match=r"c\.jsonl:2: duplicate id 'a'.*first at .*c\.jsonl:1"):
        read_corpus(path)


def test_csv_header_and_rows(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text('id,title,text\n1,First,"hello, world"\n2,Second,\n')
    with pytest.raises(DataError, match=r"c\.csv:3: empty passage text"):
        read_corpus(path)
    corpus = read_corpus(path, skip_bad=True)
    assert [(p.id, p.title, p.text) for p in corpus.passages] == [("1", "First", "hello, world")]
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match=r"bad\.csv:1: CSV header has no text column"):
        read_corpus(tmp_path / "bad.csv")


def test_folder_of_text_files(tmp_path):
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "a.md").write_text("# Llamas\n\nLlamas are camelids.\n\nThey live in the Andes.\n")
    (tmp_path / "docs" / "sub" / "b.txt").write_text("Plain text file.\n")
    (tmp_path / "docs" / "ignored.bin").write_bytes(b"\x00\x01")
    corpus = read_corpus(tmp_path / "docs")
    assert [(p.id, p.title) for p in corpus.passages] == [("a.md#0", "Llamas"), ("sub/b.txt#0", "b")]
    assert corpus.passages[0].text == "Llamas Llamas are camelids. They live in the Andes."
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no .* files under"):
        read_corpus(tmp_path / "empty")


def test_chunking_packs_paragraphs_up_to_max_words():
    text = "\n\n".join(" ".join(f"w{p}_{i}" for i in range(30)) for p in range(5))
    chunks = list(chunk_paragraphs(text, 60))
    assert [len(c.split()) for _, c in chunks] == [60, 60, 30]
    assert [line for line, _ in chunks] == [1, 5, 9]


@pytest.mark.timeout(60)
def test_one_10mb_paragraph_is_cut_in_linear_time(tmp_path):
    """Issue 40: one 10 MB one-paragraph .txt took 142 s to index (the rest re-sliced after every
    piece); cut linearly it takes well under a second, so the timeout only catches the quadratic cut."""
    words = [f"w{i % 997}" for i in range(1_700_000)]  # about 10 MB on one line
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "big.txt").write_text(" ".join(words) + "\n")
    corpus = read_corpus(tmp_path / "docs")
    assert len(corpus.passages) == -(-len(words) // 200) - _duplicates(words)
    pieces = list(chunk_paragraphs("intro words\n\n" + " ".join(words[:1000]), 200))
    assert [len(c.split()) for _, c in pieces] == [2] + [200] * 5  # a paragraph that does not fit starts a chunk
    assert [line for line, _ in pieces] == [1, 3, 3, 3, 3, 3]


def _duplicates(words):
    """Chunks of 200 that repeat an earlier one word for word (the corpus keeps one of each)."""
    seen, dup = set(), 0
    for i in range(0, len(words), 200):
        key = " ".join(words[i:i + 200])
        dup += key in seen
        seen.add(key)
    return dup


def test_detect_format_and_unknown_format(tmp_path):
    assert detect_format(write_jsonl(tmp_path / "h.jsonl", [HOTPOT])) == "hotpotqa"
    assert detect_format(write_jsonl(tmp_path / "i.jsonl", [IRCOT])) == "ircot"
    assert detect_format(write_jsonl(tmp_path / "m.jsonl", [{"paragraphs": []}])) == "musique"
    assert detect_format(write_jsonl(tmp_path / "g.jsonl", [{"text": "x"}])) == "jsonl"
    with pytest.raises(ConfigError, match="unknown corpus format"):
        read_corpus(tmp_path / "g.jsonl", "xml")
    with pytest.raises(ConfigError, match="corpus not found"):
        read_corpus(tmp_path / "missing.jsonl")


def test_musique_and_fever_readers(tmp_path):
    mus = write_jsonl(tmp_path / "m.jsonl", [{"id": "2hop__1", "question": "Q?", "paragraphs": [
        {"idx": 0, "title": "P", "paragraph_text": "p text", "is_supporting": True},
        {"idx": 1, "title": "R", "paragraph_text": "r text", "is_supporting": False}]}])
    assert [p.title for p in read_corpus(mus).passages] == ["P", "R"]
    fev = write_jsonl(tmp_path / "f.jsonl", [{"id": "7", "claim": "c", "evidence": "An evidence sentence ."}])
    corpus = read_corpus(fev)
    assert corpus.passages[0].text == "An evidence sentence ." and corpus.passages[0].meta == {"claim_id": "7"}
    assert read_questions(mus)[0].titles == ("P",)


def test_read_questions_supporting_titles(tmp_path):
    assert read_questions(write_jsonl(tmp_path / "h.jsonl", [HOTPOT]))[0].titles == ("Alpha", "Beta")
    g = read_questions(write_jsonl(tmp_path / "i.jsonl", [IRCOT]))[0]
    assert (g.id, g.question, g.titles) == ("q2", "What?", ("Alpha",))
    hippo = tmp_path / "q.json"
    hippo.write_text(json.dumps([{"id": "h1", "question": "Q", "answer": "A", "supporting_facts": ["X", "Y"]}]))
    assert read_questions(hippo)[0].titles == ("X", "Y")
    with pytest.raises(DataError, match=r"h2\.jsonl:1: missing field 'supporting_facts'"):
        read_questions(write_jsonl(tmp_path / "h2.jsonl", [{"_id": "x", "question": "q", "context": []}]), "hotpotqa")


def test_real_hipporag_corpus_reads_cleanly():
    corpus = read_corpus(data_file("2wikimultihopqa", "hipporag_2wiki_corpus.json"))
    assert corpus.skipped == 0 and 6000 <= len(corpus) <= 6119
    assert all(p.title and p.text for p in corpus.passages[:100])
