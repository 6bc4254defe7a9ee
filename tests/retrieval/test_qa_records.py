"""The one reader for the HotpotQA / 2Wiki / MuSiQue / IRCoT record schemas."""

import pytest

from thoughtloom.core.errors import DataError
from thoughtloom.retrieval.qa_records import paragraphs, read_qa_record, schema_of, supporting_titles

HOTPOT = {"_id": "h1", "question": "Who?", "answer": "Ida", "supporting_facts": [["A", 0], ["B", 1], ["A", 2]],
          "context": [["A", ["One. ", " Two."]], ["B", ["Three."]]]}
IRCOT = {"question_id": "i1", "question_text": "Where?", "answers_objects": [{"spans": ["Oslo", "Oslo, Norway"]}],
         "contexts": [{"title": "A", "paragraph_text": "a", "is_supporting": True},
                      {"title": "B", "paragraph_text": "b"}]}
MUSIQUE = {"id": "m1", "question": "When?", "answer": 1950, "answer_aliases": ["1950 AD"],
           "paragraphs": [{"title": "C", "paragraph_text": "c", "is_supporting": True}]}


def test_each_schema_reads_into_the_same_record():
    hot, irc, mus = (read_qa_record(r, "f:1") for r in (HOTPOT, IRCOT, MUSIQUE))
    assert (hot.schema, hot.id, hot.question, hot.answers) == ("hotpotqa", "h1", "Who?", ("Ida",))
    assert hot.paragraphs == (("A", "One. Two."), ("B", "Three.")) and hot.supporting == ("A", "B", "A")
    assert (irc.schema, irc.id, irc.answers, irc.supporting) == ("ircot", "i1", ("Oslo", "Oslo, Norway"), ("A",))
    assert (mus.schema, mus.answers, mus.paragraphs) == ("musique", ("1950", "1950 AD"), (("C", "c"),))
    assert schema_of({**HOTPOT, "evidences": []}) == "2wiki"


def test_questions_without_paragraphs_or_support_still_read():
    qa = read_qa_record({"question": "Who?", "answer": "Ida"}, "f:1")
    assert qa.paragraphs == () and qa.supporting is None and qa.id is None


@pytest.mark.parametrize("record, message", [
    ({"answer": "x"}, r"f:3: missing field 'question'"),
    ({**IRCOT, "answers_objects": [{"spans": []}]}, r"f:3: no gold answer"),
    ({**HOTPOT, "context": [["A", "not a list"]]}, r"f:3: context\[0\] is not \[title, \[sentences\]\]"),
    ({**MUSIQUE, "paragraphs": [{"title": "C"}]}, r"f:3: paragraphs\[0\] has no 'paragraph_text'"),
])
def test_bad_records_name_file_and_line(record, message):
    with pytest.raises(DataError, match=message):
        read_qa_record(record, "f:3")


def test_a_corpus_reader_can_skip_bad_paragraphs_and_keep_the_rest():
    problems = []
    record = {**HOTPOT, "context": [["A", ["One."]], "junk", ["B", ["Two."]]]}
    assert list(paragraphs(record, "hotpotqa", problems.append)) == [("A", "One."), ("B", "Two.")]
    assert problems == ["context[1] is not [title, [sentences]]"]
    assert supporting_titles({"supporting_facts": ["A", "B"]}, "hotpotqa") == ["A", "B"]  # HippoRAG
