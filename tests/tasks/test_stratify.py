"""Length strata and per-stratum means, as HGOT reports them."""

from thoughtloom.tasks.stratify import length_strata, question_length, select_strata, stratified_means


def test_length_strata():
    lengths = list(range(1, 101))
    strata = length_strata(lengths, long_pct=98, short_pct=2)
    # 98th percentile of 1..100 is 98.02: 99 and 100 are long; the 2nd is 2.98: 1 and 2 short
    assert strata.count("long") == 2 and strata.count("short") == 2
    means = stratified_means(["long", "short", "medium", "medium"], [1.0, 0.0, 1.0, 0.0])
    assert means["overall"] == {"n": 4, "mean": 0.5} and means["long"]["mean"] == 1.0



def test_question_length_counts_tokens():
    assert question_length("  Who   directed\tJaws?\n") == 4  # Who directed Jaws ?
    assert question_length("It isn't 1,000 miles.") == 6  # It is n't 1,000 miles .


def test_select_strata_caps_each_stratum_at_the_papers_share():
    """§4: "about 1.5% of FEVER and Open-SQuAD examples ... are randomly selected" for medium:
    of 1000 items round(1000 * 0.015) = 15 per stratum, drawn at random under the seed."""
    strata = ["long"] * 10 + ["medium"] * 970 + ["short"] * 20
    keep = select_strata(strata, 0.015)
    picked = [strata[i] for i in keep]
    assert picked.count("long") == 10 and picked.count("medium") == 15 and picked.count("short") == 15
    assert keep == sorted(keep) and keep == select_strata(strata, 0.015)
    assert select_strata(strata, 0.015, seed=1) != keep
    small = ["long"] + ["medium"] * 28 + ["short"]  # 1.5% of 30 is 0: a small file keeps 10 per stratum
    assert [small[i] for i in select_strata(small, 0.015)].count("medium") == 10
