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


# -- exact values the mutation run found unchecked (language.py) ----------------------------------

def test_a_step_is_a_value_and_renders_in_our_notation():
    """Step is frozen (a program's steps cannot change once parsed); render writes "(handler) [operator]
    "question"", leaving out the default select."""
    import dataclasses

    step = Step("split", "What are the words in #1?")
    assert {step: 1}[Step("split", "What are the words in #1?")] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.question = ""
    assert step.render() == '(split) "What are the words in #1?"'
    assert Step("str_position", "Letter 3 of #1?", PROJECT).render() == '(str_position) [project_values] "Letter 3 of #1?"'


def test_a_reply_that_only_rewrites_the_qc_line_is_named_so_not_called_empty():
    """The bench model, asked for the next QS: line, wrote "QC: Cranium and Twin Tin Bots are both
    robots." (decomp-odqa card): the trace should say what came back, not "empty step"."""
    with pytest.raises(StepError) as err:
        parse_step("QC: Cranium and Twin Tin Bots are both robots.", HANDLERS, 0)
    assert err.value.kind == "unparseable" and "only the QC: line" in str(err.value) and "robots" in str(err.value)
    for blank in ("", "  \n\n "):
        with pytest.raises(StepError, match="empty step"):
            parse_step(blank, HANDLERS, 0)


def test_an_empty_quoted_question_is_no_question():
    """_unquote strips one pair of matching quotes, so a question written as "" is empty and the step
    unparseable, not the two-character question '""'."""
    with pytest.raises(StepError) as err:
        parse_step('QS: (split) ""', HANDLERS, 0)
    assert err.value.kind == "unparseable"


def test_a_wrapped_line_loses_its_closing_parenthesis_only_when_it_has_one_too_many():
    """"(QS: (qa) "...")" is the line in parentheses: the last ")" is the wrapper's only when the line
    has more ")" than "("; a wrapped line whose wrapper was never closed keeps its balanced question."""
    step = parse_step("(QS: (split) What are the words in the title (as written)", HANDLERS, 0)
    assert step.question == "What are the words in the title (as written)"


def test_a_reference_that_is_the_questions_own_text_is_kept_as_text():
    """Module docstring: a #k naming no step is an error "unless the run's own question holds the same
    token, in which case it is that question's text"; the error names the token itself."""
    own = "Who sang the #1 hit of 1990?"
    assert parse_step('(aw_qa) "Who sang the #1 hit of 1990?"', HANDLERS, 0, own_question=own).question == own
    with pytest.raises(StepError, match=r"^#3 names no earlier answer \(1 so far\)$") as err:
        parse_step('(aw_qa) "What is #3?"', HANDLERS, 1)
    assert err.value.kind == "bad_reference"


def test_substitute_leaves_a_token_naming_no_step_as_written():
    """"#0" and "#5" with one answer name no step: they stay as written (the question's own text);
    "#1" is the first answer."""
    from thoughtloom.strategies.decomp.language import substitute

    assert substitute("Is #0 or #5 like #1?", ["x"]) == "Is #0 or #5 like x?"


def test_project_over_a_scalar_is_one_input_and_select_takes_the_first_result():
    """project_values over a reference that is not a list asks once ("foreach over a scalar: a one-item
    list"); select's answer is its one result, "" when the handler gave none."""
    assert expand(Step("aw_qa", "Awards of #1?", PROJECT), ["Jaws"]) == ["Awards of Jaws?"]
    assert combine(Step("aw_qa", "Q?"), ["a", "b"]) == "a"
    assert combine(Step("aw_qa", "Q?"), []) == ""


def test_python_literal_lists_need_a_quote_and_json_is_read_over_lines():
    """parse_value: "['a', 'b']" (a Python literal) is a list; a bracketed text with no quote that is
    not JSON ("[1, 2,]") stays text. read_reply: a JSON array spread over lines is one answer."""
    from thoughtloom.strategies.decomp.language import read_reply

    assert parse_value("['a', 'b']") == ["a", "b"]
    assert parse_value("[1, 2,]") == "[1, 2,]"
    assert read_reply('```json\n[\n"a, b",\n"c"\n]\n```') == ["a, b", "c"]


def test_end_is_a_value_and_renders_eoq():
    """End is a frozen (hashable) value written back as "[EOQ]"."""
    from thoughtloom.strategies.decomp.language import EOQ

    assert {End(): 1}[End()] == 1 and End().render() == EOQ == "[EOQ]"


def test_three_tags_are_an_error_not_a_question():
    """"A step names exactly one handler and, optionally, one operator": a third tag makes the line
    unparseable instead of being read as the start of the question."""
    with pytest.raises(StepError) as err:
        parse_step('(split) [foreach] (merge) "What are the words?"', HANDLERS, 0)
    assert err.value.kind == "unparseable"


def test_a_reference_of_nine_digits_is_its_number_and_longer_names_no_step():
    from thoughtloom.strategies.decomp.language import references

    assert references("#123456789 and #1234567890") == [123456789, 10 ** 9]


def test_reply_reading_keeps_what_is_not_a_flat_list_as_written():
    """read_reply: a one-line reply is read by parse_value, so a one-line JSON object stays exactly as
    written; over lines, a whole JSON value that is not a flat array becomes its compact JSON text (an
    object, or an array holding an array). parse_value: a JSON array holding an array stays text; a
    Python list holding a non-finite number is no list. A \\boxed{} answer is its content; lists render as
    JSON with their non-ASCII text as written."""
    from thoughtloom.strategies.decomp.language import read_reply, render_value, strip_boxed

    assert read_reply('{"a":1}') == '{"a":1}'
    assert read_reply('{\n"a": 1\n}') == '{"a": 1}'
    assert read_reply('[\n"a",\n["b"]\n]') == '["a", ["b"]]'
    assert read_reply("A: Paris\nbecause it is the capital") == "Paris"
    assert parse_value('["a", ["b"]]') == '["a", ["b"]]'
    assert parse_value("['a', 1e999]") == "['a', 1e999]"
    assert strip_boxed("The final numeric answer is \\(\\boxed{ 86 }\\).") == "86"
    assert render_value(["é", "b"]) == '["é", "b"]'


def test_a_python_list_exactly_at_the_size_bound_is_read():
    """_python_list reads literals "within the same bounds as JSON": MAX_PARSE_CHARS characters are
    read, one more is not."""
    from thoughtloom.core.bounded import MAX_PARSE_CHARS
    from thoughtloom.strategies.decomp.language import _python_list

    at_bound = "['" + "a" * (MAX_PARSE_CHARS - 4) + "']"
    assert len(at_bound) == MAX_PARSE_CHARS and _python_list(at_bound) == ["a" * (MAX_PARSE_CHARS - 4)]
    assert _python_list("['" + "a" * (MAX_PARSE_CHARS - 3) + "']") is None


def test_quotes_are_stripped_only_as_a_matching_pair_around_the_question():
    """_unquote strips a quote pair that encloses the whole question; a question that merely starts with
    a quoted phrase keeps its quotes."""
    assert parse_step('(split) "A B" is the title; what are its words?', HANDLERS, 0).question == \
        '"A B" is the title; what are its words?'


def test_project_values_skips_a_reference_to_no_step():
    """project_values iterates over "the first #k that names a list answer"; #0 names no step (it is the
    question's own text), so the list of #1 is the one iterated and #0 stays as written."""
    assert expand(Step("aw_qa", "Awards of #0 and #1?", PROJECT), [["a", "b"]]) == \
        ["Awards of #0 and a?", "Awards of #0 and b?"]


def test_a_finite_float_in_a_python_list_is_kept_and_json_text_keeps_its_letters():
    """_python_list refuses only non-finite numbers: 1.5 is an item ("1.5"). A multi-line JSON object
    becomes compact JSON text with its non-ASCII letters as written (not \\u escapes)."""
    from thoughtloom.strategies.decomp.language import read_reply

    assert parse_value("['a', 1.5]") == ["a", "1.5"]
    assert read_reply('{\n"city": "Zürich"\n}') == '{"city": "Zürich"}'
