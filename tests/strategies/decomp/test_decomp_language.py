"""The step language: parsing, references and operators (no model)."""

import pytest

from thoughtloom.strategies.decomp.language import (
    PROJECT, PROJECT_FLAT, SELECT, End, Step, StepError, combine, expand, parse_step, parse_value)

HANDLERS = {"split", "str_position", "merge", "aw_qa"}


def test_parses_our_notation_and_the_papers():
    ours = parse_step(' (str_position) [project_values] "What is letter 3 of "#1"?"', HANDLERS, 1)
    paper = parse_step('QS: (project_values) [str_position] What is letter 3 of "#1"?', HANDLERS, 1)
    assert ours == Step("str_position", 'What is letter 3 of "#1"?', PROJECT)
    assert paper == ours
    assert parse_step('(split) "What are the words in "A B"?"', HANDLERS, 0) == \
        Step("split", 'What are the words in "A B"?', SELECT)


def test_foreach_aliases_and_eoq():
    assert parse_step('(aw_qa) [foreach_merge] "Awards of #1?"', HANDLERS, 1).operator == PROJECT_FLAT
    assert isinstance(parse_step("QS: [EOQ]", HANDLERS, 2), End)
    assert isinstance(parse_step("[EOQ]\nQS: (split) \"x\"", HANDLERS, 1), End)


def test_chat_decorations_and_echoed_question_are_skipped():
    text = 'QC: Take the letters...\n**1. QS: (split) "What are the words in "A B"?"**'
    assert parse_step(text, HANDLERS, 0).handler == "split"


def test_a_step_line_wrapped_in_parentheses_is_that_line():
    """The decomposer's instruction ends "(or QS: [EOQ] if it is finished)", and the bench model
    copies it, parentheses and all, in 12 turns of the decomp-commaqa card (n = 4): "(QS: [EOQ])"
    is the end, "(QS: (aw_qa) "Awards of #1?")" the step; parentheses inside the question stay."""
    assert isinstance(parse_step("(QS: [EOQ])", HANDLERS, 1), End)
    assert parse_step('(QS: (aw_qa) "Awards of #1?")', HANDLERS, 1) == Step("aw_qa", "Awards of #1?", SELECT)
    assert parse_step('(QS: (aw_qa) "Awards (2001) of #1?"', HANDLERS, 1).question == "Awards (2001) of #1?"
    with pytest.raises(StepError):  # a parenthesised remark is still not a step
        parse_step("(I think we should split the words.)", HANDLERS, 1)


@pytest.mark.parametrize("text,kind", [
    ("", "unparseable"),
    ("I think we should split the words.", "unparseable"),
    ('(split) (merge) "two handlers"', "unparseable"),
    ('(split)', "unparseable"),
    ('(spilt) "typo"', "unknown_handler"),
    ('(merge) "Concatenate #3 using a space."', "bad_reference"),
    ('(merge) "Concatenate #0"', "bad_reference"),
    ("QS: [EOQ]", "unparseable"),  # ending before any step
])
def test_malformed_steps_raise_a_typed_error(text, kind):
    with pytest.raises(StepError) as info:
        parse_step(text, HANDLERS, 0 if "EOQ" in text else 2)
    assert info.value.kind == kind


def test_select_substitutes_every_reference():
    answers = [["A", "B"], "x"]
    step = Step("merge", "Concatenate #1 then #2", SELECT)
    assert expand(step, answers) == ['Concatenate ["A", "B"] then x']


def test_project_values_makes_one_input_per_item_of_the_first_list_reference():
    answers = [["Nancy", "Jo"], "3"]
    step = Step("str_position", 'Letter #2 of "#1"?', PROJECT)
    assert expand(step, answers) == ['Letter 3 of "Nancy"?', 'Letter 3 of "Jo"?']
    assert combine(step, ["n", "o"]) == ["n", "o"]


def test_flat_unique_flattens_and_dedupes_in_order():
    step = Step("aw_qa", "Awards of #1?", PROJECT_FLAT)
    assert combine(step, [["b", "a"], ["a", "c"], "b", ""]) == ["b", "a", "c"]


def test_parse_value_reads_json_lists_only():
    assert parse_value('["a", 2]') == ["a", "2"]
    assert parse_value("[not json") == "[not json"
    assert parse_value(" plain ") == "plain"


def test_parse_value_reads_the_whole_reply_not_the_first_list_in_it():
    # parse_json would find "[1]" here; a handler's citation-style answer must stay text
    assert parse_value("[1] Paris [2]") == "[1] Paris [2]"
    assert parse_value('["a"] and ["b"]') == '["a"] and ["b"]'


def test_lenient_reading_of_chat_model_habits():
    assert parse_step('(Split) "What are the words in "A B"?"', HANDLERS, 0).handler == "split"
    assert parse_value('```json\n["S", "e"]\n```') == ["S", "e"]
    assert parse_value("```\nplain\n```") == "plain"
