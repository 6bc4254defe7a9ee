"""A small reproduction suite (CoT vs IO on a GSM8K-format data file ``baskets.jsonl``) for the
reproduce tests, with paper figures and two opposite claims; a helper module, not a conftest."""

SUITE = """
name = "toy"
title = "Toy: CoT vs IO on counting baskets"
paper = "Nobody, 2024"
n = 12
notes = ["A note with <b>markup</b> & | pipes"]

[budget]
max_calls = 5

[[datasets]]
id = "baskets"
task = "gsm8k"
data = "baskets.jsonl"

[[methods]]
id = "cot"
strategy = "cot"
label = "CoT"

[[methods]]
id = "io"
strategy = "io"
label = "IO"

[[paper_figures]]
method = "cot"
metric = "accuracy"
value = 90
model = "GPT-9"
source = "Table 1"

[[paper_figures]]
method = "io"
metric = "accuracy"
value = 40
model = "GPT-9"
source = "Table 1"

[[claims]]
better = "cot"
worse = "io"
statement = "CoT beats IO"
source = "Table 1"

[[claims]]
better = "io"
worse = "cot"
statement = "IO beats CoT"
source = "nowhere"
"""


def trajectory(*steps, exact="every budget"):
    """An ``anytime`` entry from ``(calls, accuracy)`` steps after the start (0 calls, accuracy 0)."""
    points = [{"calls": 0, "tokens": 0, "answer": None, "metrics": {"accuracy": 0.0}}]
    points += [{"calls": c, "tokens": 10 * c, "answer": str(c), "metrics": {"accuracy": float(a)}} for c, a in steps]
    return {"points": points, "exact": exact}


def toy_card(root, cells, *, suite=SUITE, seeds=1, n=12, stopped=(), scores=None, groups=None):
    """The card of the toy suite from hand-written cells, without a model: ``cells`` maps
    ``(method, seed)`` to one ``anytime`` entry per example (a list of n, or one for every
    example; ``"drop"`` writes a record without one, as before trajectories). Each record's own
    accuracy is its trajectory's last point's; ``stopped``: ``(method, index)`` of the records
    whose run its budget stopped; ``scores``: ``(method, seed)`` -> each record's own accuracy (graded
    scores, in place of the trajectory's last point); ``groups``: each example's ``meta["group"]``."""
    import json
    from pathlib import Path

    from thoughtloom import tasks
    from thoughtloom.eval.reproduce import card as cards
    from thoughtloom.eval.reproduce import run as runs
    from thoughtloom.eval.reproduce import suites

    plan = runs.make_plan(suites.parse(suite.encode(), "toy.toml"), Path(root), n=n, seeds=seeds)
    for (method, seed), entries in cells.items():
        entries = entries if isinstance(entries, list) else [entries] * n
        folder = runs.Cell(plan.datasets[0], plan.suite.method(method), seed).folder(plan.out)
        folder.mkdir(parents=True, exist_ok=True)
        records = []
        for i, entry in enumerate(entries):
            last = entry["points"][-1] if isinstance(entry, dict) and isinstance(entry.get("points"), list) \
                and entry["points"] and isinstance(entry["points"][-1], dict) else {}
            accuracy = last.get("metrics", {}).get("accuracy", 0.0) if isinstance(last.get("metrics"), dict) else 0.0
            if scores is not None and (method, seed) in scores:
                accuracy = scores[method, seed][i]
            record = {"id": f"q{i}", "prediction": "1",
                      "metrics": {"accuracy": accuracy if scores is not None or accuracy in (0, 1) else 0.0},
                      "usage": {"calls": 1, "total_tokens": 10},
                      "stopped": "budget" if (method, i) in stopped else None}
            if entry != "drop":
                record["anytime"] = entry
            if groups is not None:
                record["meta"] = {"group": groups[i]}
            records.append(record)
        (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    sl = runs.Slice(tasks.get("gsm8k"), Path(root) / "baskets.jsonl", [])
    sl.examples = [type("E", (), {"problem": type("P", (), {"id": f"q{i}"})()})() for i in range(n)]
    return cards.collect(plan, {"baskets": sl}, {"command": "thoughtloom reproduce toy"})
