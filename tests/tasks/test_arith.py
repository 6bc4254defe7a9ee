"""tasks/arith.py, the safe arithmetic parser: its bounds exactly at their limits, its messages, its values."""

import dataclasses
from fractions import Fraction

import pytest

from thoughtloom.core.bounded import MAX_DEPTH
from thoughtloom.tasks.arith import (MAX_NUMBER_DIGITS, MAX_TOKENS, ExpressionError, check_24,
                                     parse_expression)


def test_the_bounds_are_the_documented_ones():
    """Module docstring: "at most MAX_TOKENS tokens, MAX_NUMBER_DIGITS digits per number and MAX_DEPTH
    nested parentheses"; the figures the tests below work at."""
    assert (MAX_TOKENS, MAX_NUMBER_DIGITS, MAX_DEPTH) == (400, 40, 64)


def test_exactly_max_tokens_are_read_and_one_more_is_refused():
    """"at most MAX_TOKENS tokens". A well-formed expression has an odd count, so: 200 ones joined by
    "+" (399 tokens) are read; 400 tokens (a dangling "+") are read too, and refused only for the
    dangling operator; 201 ones (401 tokens) are refused for their length."""
    ones = " + ".join(["1"] * 200)
    assert parse_expression(ones).value == 200
    with pytest.raises(ExpressionError, match="expected a number or '\\(' but found None"):
        parse_expression(ones + " +")
    with pytest.raises(ExpressionError, match="longer than 400 tokens"):
        parse_expression(ones + " + 1")


def test_a_number_has_at_most_forty_digits_its_decimal_point_not_counted():
    """"MAX_NUMBER_DIGITS digits per number": 40 digits are read, as integer or with a decimal point
    among them; a 41st digit is refused whether or not there is a point. (The check counted the point
    as a digit's allowance, so a 41-digit integer got through: fixed with this test.)"""
    assert parse_expression("9" * 40).value == 10 ** 40 - 1
    assert parse_expression("9" * 20 + "." + "9" * 20).value == Fraction(10 ** 40 - 1, 10 ** 20)
    for text in ("9" * 41, "9" * 21 + "." + "9" * 20):
        with pytest.raises(ExpressionError, match="more than 40 digits"):
            parse_expression(text)


def test_brackets_nest_exactly_max_depth_deep_and_siblings_do_not_add_up():
    """"MAX_DEPTH nested parentheses": 64 nested pairs are read, 65 are refused; the depth is that of
    the nesting, so 65 bracket pairs side by side are fine."""
    assert parse_expression("(" * MAX_DEPTH + "7" + ")" * MAX_DEPTH).value == 7
    with pytest.raises(ExpressionError, match="parentheses nested deeper than 64"):
        parse_expression("(" * (MAX_DEPTH + 1) + "7" + ")" * (MAX_DEPTH + 1))
    assert parse_expression(" + ".join(["(1)"] * (MAX_DEPTH + 1))).value == 65


def test_negations_nest_exactly_max_depth_deep_and_siblings_do_not_add_up():
    """A negation nests like a bracket: 64 signs in a row are read (an even count: +7), 65 refused;
    signs on 65 separate numbers are fine."""
    assert parse_expression("-" * MAX_DEPTH + "7", unary_minus=True).value == 7
    with pytest.raises(ExpressionError, match="signs nested deeper than 64"):
        parse_expression("-" * (MAX_DEPTH + 1) + "7", unary_minus=True)
    assert parse_expression(" * ".join(["-1"] * (MAX_DEPTH + 1)), unary_minus=True).value == -1


@pytest.mark.parametrize("text,message", [
    ("-4 * 6", "unary minus is not allowed"),
    ("* 4", "expected a number or '(' but found '*'"),
    ("4 *", "expected a number or '(' but found None"),
])
def test_the_parser_says_what_it_found(text, message):
    with pytest.raises(ExpressionError, match=message.replace("(", r"\(").replace("*", r"\*")):
        parse_expression(text)


def test_an_evaluation_is_a_value():
    """Evaluated is frozen: a caller cannot change the value or the numbers it was checked with."""
    ev = parse_expression("(1 + 2) * 8")
    assert (ev.value, ev.numbers) == (24, (1, 2, 8))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.value = Fraction(0)


def test_a_value_too_long_to_print_is_named_not_a_crash():
    """check_24's reason states the value; one over Python's 4,300-digit str() limit (150 forty-digit
    numbers multiplied: about 6,000 digits) is named "a number too large to print" instead of raising,
    while one of 800 digits (under the 3,000-bit bound below) is printed in full."""
    big = " * ".join(["9" * 40] * 150)
    assert check_24(big, [int("9" * 40)] * 150) == (False, "equals a number too large to print, not 24")
    twenty = " * ".join(["9" * 40] * 20)
    solved, why = check_24(twenty, [int("9" * 40)] * 20)
    assert solved is False and why == f"equals {(10 ** 40 - 1) ** 20}, not 24"


def test_the_print_bound_is_3000_bits():
    """_fmt prints a number whose numerator and denominator both fit in 3,000 bits (about 900 digits,
    far under str()'s 4,300) and names anything longer."""
    from thoughtloom.tasks.arith import _fmt

    assert _fmt(Fraction(2 ** 2999)) == str(2 ** 2999)  # 3,000 bits exactly
    assert _fmt(Fraction(2 ** 3000)) == "a number too large to print"
    assert _fmt(Fraction(1, 2 ** 3000)) == "a number too large to print"
