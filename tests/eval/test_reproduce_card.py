"""A card's claims, judged once at the suite's budget and described along the call budget, from
hand-written trajectories (issues 27 and 38).

The toy suite's budget is 5 calls and its claims are "CoT beats IO" and "IO beats CoT" on 12
examples. Along the call budget the card says only which way the mean paired difference goes at
each budget (the claimed better method ahead, behind or tied: descriptive, no test); the verdict
is taken once, at the suite's budget, by the exact paired test after Holm's correction across the
card's claims (``eval/inference``). The cells below differ by the same amount on every example at
each budget, so the sign of the mean is that of every example's difference; at the full budget
12 of 12 discordant pairs give McNemar's p = 2 * (1/2)^12 = 0.00049, 0.00098 after Holm over the
2 claims: holds (and "IO beats CoT" does not hold).
"""

import math

import pytest

from thoughtloom.eval.reproduce import budgetwise, render
from thoughtloom.eval.reproduce.render import outline, to_markdown, write_card
from thoughtloom.view.card_curves import card_figures
from support.toy_suite import SUITE, toy_card, trajectory

WRONG_AT_1 = trajectory((1, 0))  # IO: one call, a wrong answer, at every budget


def claims(card):
    return {r.claim.statement: r for r in card.claims}


def test_a_claim_ahead_from_3_calls_on_and_tied_below(tmp_path):
    """CoT is right from 3 calls on, IO wrong at every budget: at 1-2 calls every difference is 0
    (tied), from 3 calls on +1 on every example (ahead; for "IO beats CoT" -1, behind)."""
    card = toy_card(tmp_path, {("cot", 0): trajectory((3, 1)), ("io", 0): WRONG_AT_1})
    found = claims(card)
    assert found["CoT beats IO"].along == "ahead at budgets ≥ 3 calls, tied below"
    assert found["IO beats CoT"].along == "behind at budgets ≥ 3 calls, tied below"
    # the verdict at the suite's budget: 12 of 12 discordant, McNemar p = 2 / 2^12, Holm over 2 claims
    cot = found["CoT beats IO"]
    assert cot.verdict == "holds" and cot.difference.mean == 1.0 and cot.difference.p_value == 2 / 2 ** 12
    assert cot.judgement.p_adjusted == 2 * 2 / 2 ** 12 and cot.judgement.family == 2
    assert found["IO beats CoT"].verdict == "does not hold"


def test_three_runs_of_verdicts_are_named_in_order_of_budget(tmp_path):
    """IO is right at 1-2 calls and wrong from 3 on; CoT wrong until 4 calls, right from 4: CoT - IO
    is -1 at 1-2 (behind), 0 at 3 (tied), +1 at 4-5 (ahead)."""
    card = toy_card(tmp_path, {("cot", 0): trajectory((4, 1)), ("io", 0): trajectory((1, 1), (3, 0))})
    found = claims(card)
    assert found["CoT beats IO"].along == "behind at ≤ 2 calls, tied at 3 calls, ahead at ≥ 4 calls"
    assert found["IO beats CoT"].along == "ahead at ≤ 2 calls, tied at 3 calls, behind at ≥ 4 calls"


def test_one_sign_at_every_budget_and_a_single_budget_upper_run(tmp_path):
    """Both answer at 1 call, CoT right and IO wrong: +1 at every budget (holds throughout). CoT
    right only from 5 calls (the suite's budget): ahead at 5 alone, tied at 1-4."""
    card = toy_card(tmp_path, {("cot", 0): trajectory((1, 1)), ("io", 0): WRONG_AT_1})
    assert claims(card)["CoT beats IO"].along == "ahead at every budget up to 5 calls"
    card = toy_card(tmp_path / "late", {("cot", 0): trajectory((5, 1)), ("io", 0): WRONG_AT_1})
    assert claims(card)["CoT beats IO"].along == "ahead at 5 calls, tied below"


def test_seeds_are_averaged_per_example_before_pairing_as_the_claim_is(tmp_path):
    """Seed 0: CoT right from 2 calls, IO always wrong. Seed 1: CoT right from 4, IO right at 2-3
    only. Seed means at 2-3 calls: CoT 0.5, IO 0.5 (difference 0, tied); from 4: CoT 1,
    IO 0 (ahead). Seed 0 alone would be ahead from 2 calls."""
    card = toy_card(tmp_path, {("cot", 0): trajectory((2, 1)), ("cot", 1): trajectory((4, 1)),
                               ("io", 0): WRONG_AT_1, ("io", 1): trajectory((2, 1), (4, 0))}, seeds=2)
    assert claims(card)["CoT beats IO"].along == "ahead at budgets ≥ 4 calls, tied below"


def test_cells_recorded_before_trajectories_get_no_curve(tmp_path):
    card = toy_card(tmp_path, {("cot", 0): "drop", ("io", 0): WRONG_AT_1})
    for r in card.claims:
        assert r.along == "no curve: recorded before anytime trajectories"
    found = claims(card)["CoT beats IO"]  # the records score 0 alike: no discordant pair, McNemar's p is 1
    assert found.verdict == "inconclusive"
    assert found.judgement.reason == "n = 12, 0 discordant: the smallest p-value possible is 1"
    figure = str(card_figures(card, replicates=200)["baskets"])
    assert "<svg" in figure and "No curve (recorded before anytime trajectories): CoT." in figure
    card = toy_card(tmp_path / "old", {("cot", 0): "drop", ("io", 0): "drop"})
    assert str(card_figures(card)["baskets"]).count("No curves: recorded before anytime trajectories.") == 1
    md = to_markdown(outline(card))
    assert ("| inconclusive: n = 12, 0 discordant: the smallest p-value possible is 1 | no spread at n = 12 (every "
            "pair tied): nothing to size it on | no curve: recorded before anytime trajectories |") in md


def test_a_model_judged_metric_is_said_to_have_no_curve_because_it_is_judged_not_because_it_is_old(
        tmp_path, monkeypatch):
    """The outline task's "interesting" is scored once by the model judge after the run (outside its
    budget), so its records carry no trajectory; the sculpt-outline card said "recorded before
    anytime trajectories" of a fresh sitting. Here the toy's accuracy plays a judged metric."""
    from thoughtloom.tasks.mathqa import GSM8K

    monkeypatch.setattr(GSM8K, "judged_metrics", ("accuracy",))
    card = toy_card(tmp_path, {("cot", 0): "drop", ("io", 0): "drop"})
    assert {r.along for r in card.claims} == {budgetwise.JUDGED}
    assert "No curves: a model-judged metric, scored once after the run, has no budget trajectory." in \
        str(card_figures(card)["baskets"])


def test_with_a_token_budget_only_the_phrase_ends_where_the_budget_cut_an_example(tmp_path):
    """No max_calls: the budgets run to the most any example spent (4 calls), but the token budget
    stopped CoT's first example at 3 calls, so what it would answer at 4 is unknown and the
    budgets read end at 3. CoT is right from 2 calls, IO never: tied at 1, ahead at 2-3."""
    tokens_only = SUITE.replace("max_calls = 5", "max_tokens = 100")
    cot = [trajectory((2, 1), (3, 1))] + [trajectory((2, 1), (4, 1))] * 11
    card = toy_card(tmp_path, {("cot", 0): cot, ("io", 0): WRONG_AT_1}, suite=tokens_only, stopped={("cot", 0)})
    assert claims(card)["CoT beats IO"].along == ("ahead at budgets ≥ 2 calls, tied below (the curves end "
                                                 "at 3 calls, where a run's budget cut an example)")


def test_cells_cut_at_the_suites_budget_need_no_note(tmp_path):
    """Searches stopped by the suite's budget are known up to it, which is where the card's curves end
    anyway: the curves module's "the curve ends there" note is not repeated on the card."""
    card = toy_card(tmp_path, {("cot", 0): trajectory((3, 0), (5, 1)), ("io", 0): WRONG_AT_1},
                    stopped={("cot", i) for i in range(12)})
    assert claims(card)["CoT beats IO"].along == "ahead at 5 calls, tied below"
    assert card.cells[0].curves[0].notes and all(n.startswith(render.CUT) for n in card.cells[0].curves[0].notes)
    assert "CoT on baskets:" not in to_markdown(outline(card))


def test_two_examples_that_both_favour_a_method_are_no_verdict(tmp_path):
    """The CommonGen card's case (issue 38): graded scores on n = 2, both favouring CoT. The percentile
    bootstrap's interval was above 0 ("holds"); a sign flip of 2 differences has 4 equally likely
    patterns, the observed one and its mirror the farthest from 0: p = 2/4 = 0.5 at best."""
    card = toy_card(tmp_path, {("cot", 0): trajectory((1, 1)), ("io", 0): WRONG_AT_1}, n=2,
                    scores={("cot", 0): [0.6, 0.9], ("io", 0): [0.2, 0.4]})
    found = claims(card)["CoT beats IO"]
    assert found.difference.mean == pytest.approx(0.45) and found.difference.ci_low > 0  # the interval alone: "holds"
    assert found.difference.p_value == 0.5 and found.verdict == "inconclusive"
    assert found.judgement.reason == "n = 2: the smallest p-value possible is 0.5"
    md = to_markdown(outline(card))
    assert "| sign-flip, exact | 0.5 (1) | inconclusive: n = 2: the smallest p-value possible is 0.5 |" in md


def test_examples_that_share_a_context_are_one_unit(tmp_path):
    """Twelve questions over three passages (meta "group", Task.group), CoT right on all, IO on none:
    as twelve pairs McNemar gives p = 2/2^12, but the passages are the independent units, so the
    grouped sign flip of 3 sums can reach 2/2^3 = 0.25 at best: inconclusive."""
    cells = {("cot", 0): trajectory((1, 1)), ("io", 0): WRONG_AT_1}
    alone = claims(toy_card(tmp_path / "alone", cells))["CoT beats IO"]
    assert alone.verdict == "holds" and alone.difference.p_value == 2 / 2 ** 12
    grouped = claims(toy_card(tmp_path / "grouped", cells, groups=[f"p{i // 4}" for i in range(12)]))["CoT beats IO"]
    assert (grouped.difference.units, grouped.difference.p_value, grouped.verdict) == (3, 0.25, "inconclusive")
    assert grouped.judgement.reason == "n = 12 in 3 groups: the smallest p-value possible is 0.25"


def test_a_claim_not_run_has_no_budget_wise_verdict_either(tmp_path):
    card = toy_card(tmp_path, {("cot", 0): trajectory((1, 1))})
    assert [(r.verdict, r.along) for r in card.claims] == [("not run", "–")] * 2


HOSTILE = [
    {"points": [{"calls": math.nan, "tokens": 0, "metrics": {"accuracy": 0.0}}], "exact": "every budget"},
    {"points": [{"calls": 0, "tokens": 0, "metrics": {"accuracy": math.inf}}]},
    {"points": [{"tokens": 0, "metrics": {"accuracy": 0.0}}]},  # no calls
    {"points": [{"calls": 0, "tokens": 0}]},  # no metrics
    {"points": "all of them"},
    {"points": []},
    [1, 2, 3],
    {"points": [{"calls": 0, "tokens": 0, "metrics": {"accuracy": 0.0}},
                {"calls": -3, "tokens": 5, "metrics": {"accuracy": 1.0}}]},
    {"points": [{"calls": 0, "tokens": 9, "metrics": {"accuracy": 0.0}},
                {"calls": 2, "tokens": 5, "metrics": {"accuracy": 1.0}}]},  # starts past 0, goes backwards
    {"points": [{"calls": 0, "tokens": 0, "metrics": {"bleu": 1.0}}]},  # lacks the record's metric
]


def test_hostile_trajectories_are_left_out_and_the_card_still_renders(tmp_path):
    """Ten examples of CoT have unreadable trajectories; the other two are right from 1 call
    against IO wrong: +1 on both at every budget (ahead), on 2 of the 12 examples."""
    cot = HOSTILE + [trajectory((1, 1))] * 2
    card = toy_card(tmp_path, {("cot", 0): cot, ("io", 0): WRONG_AT_1})
    assert claims(card)["CoT beats IO"].along == ("ahead at every budget up to 5 calls "
                                                 "(on the 2 of 12 examples with a readable trajectory)")
    md, page = write_card(card, tmp_path / "card", card_figures(card, replicates=200))
    text = md.read_text()
    assert "CoT on baskets: 10 unreadable trajectories left out of the curves (e.g. q0: point 0 calls is nan" in text
    assert page.read_text().count('<svg class="curve"') == 1
    every = toy_card(tmp_path / "all", {("cot", 0): (HOSTILE * 2)[:12], ("io", 0): WRONG_AT_1})
    assert claims(every)["CoT beats IO"].along == "no curve: no readable trajectory"
    write_card(every, tmp_path / "all-card", card_figures(every, replicates=200))


def test_batch_boundary_trajectories_are_said_in_the_notes_and_dashed(tmp_path):
    card = toy_card(tmp_path, {("cot", 0): trajectory((3, 1), exact="batch boundaries"), ("io", 0): WRONG_AT_1})
    md, page = write_card(card, tmp_path, card_figures(card, replicates=200))
    assert ("- CoT on baskets: 12 of 12 trajectories are exact only at batch boundaries: between recorded points "
            "a run capped there could differ") in md.read_text()
    html = page.read_text()
    assert html.count('stroke-dasharray="6 3"') == 1 and "<b>CoT</b> (12 examples); exact only at batch" in html


def test_the_figure_marks_the_papers_budget_or_says_it_marks_the_suites(tmp_path):
    card = toy_card(tmp_path, {("cot", 0): trajectory((3, 1)), ("io", 0): WRONG_AT_1})
    html = str(card_figures(card, replicates=200)["baskets"])
    assert 'data-budget="5"' in html and "this card&#x27;s equal budget: 5 calls" in html
    assert "The rule marks this card&#x27;s own equal budget (the suite declares no paper budget)." in html
    paper = SUITE.replace("[budget]", '[paper_budget]\nmax_calls = 8\nsource = "Table <9>"\n\n[budget]')
    card = toy_card(tmp_path / "paper", {("cot", 0): trajectory((3, 1)), ("io", 0): WRONG_AT_1}, suite=paper)
    html = str(card_figures(card, replicates=200)["baskets"])
    assert 'data-budget="8"' in html and "paper: 8 calls (Table &lt;9&gt;)" in html and "Table <9>" not in html
    assert "The rule marks the paper&#x27;s budget as the suite declares it." in html
    md = to_markdown(outline(card))
    assert "marks the paper's budget as the suite declares it." in md


def test_the_claims_table_stays_a_well_formed_markdown_table(tmp_path):
    card = toy_card(tmp_path, {("cot", 0): trajectory((4, 1)), ("io", 0): trajectory((1, 1), (3, 0))})
    md = to_markdown(outline(card))
    table = md[md.index("| claim |"):].split("\n\n")[0].splitlines()
    assert table[0].endswith("| verdict | power (80%, α = 0.05) | along the call budget (descriptive) |")
    assert table[1] == "|" + "---|" * 10
    assert all(line.count(" | ") == 9 for line in table[2:]) and len(table) == 4


@pytest.mark.parametrize("leads, expected", [
    ([(1, "ahead")], "ahead at every budget up to 50 calls"),
    ([(1, "tied"), (20, "ahead")], "ahead at budgets ≥ 20 calls, tied below"),
    ([(1, "tied"), (50, "ahead")], "ahead at 50 calls, tied below"),
    ([(1, "tied"), (5, "behind"), (11, "tied"), (40, "ahead")],
     "tied at ≤ 4 calls, behind at 5–10 calls, tied at 11–39 calls, ahead at ≥ 40 calls"),
    ([(1, "ahead"), (2, "tied"), (3, "tied"), (50, "ahead")],
     "ahead at 1 call, tied at 2–49 calls, ahead at 50 calls"),
    ([(1, "ahead"), (3, "ahead")], "ahead at every budget up to 50 calls"),
])
def test_the_phrase_rules(leads, expected):
    """The wording of budgetwise's docstring, up to a budget of 50 calls: neighbours with one sign
    merge; one run, two runs (the upper first), or every run in order of budget."""
    assert budgetwise.phrase(budgetwise.segments(leads, 50)) == expected
