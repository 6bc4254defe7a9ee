"""Length strata and per-stratum means, as HGOT reports them."""

from thoughtloom.tasks.stratify import length_strata, question_length, stratified_means


def test_length_strata():
    lengths = list(range(1, 101))
    strata = length_strata(lengths, long_pct=98, short_pct=2)
    assert strata.count("long") == 2 and strata.count("short") == 2
    means = stratified_means(["long", "short", "medium", "medium"], [1.0, 0.0, 1.0, 0.0])
    assert means["overall"] == {"n": 4, "mean": 0.5} and means["long"]["mean"] == 1.0



def test_question_length_counts_words():
    assert question_length("  Who   directed\tJaws?\n") == 3
