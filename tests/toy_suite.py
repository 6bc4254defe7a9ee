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
