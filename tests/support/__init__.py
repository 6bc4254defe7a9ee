"""Helpers shared by the tests (and some benchmarks), not tests themselves.

- ``fuzz_harness``: hostile model replies and corpora against every strategy (tests/test_fuzz.py,
  benchmarks/fuzz.py);
- ``search_toy``: a scripted tree-search world for the kernel and its strategies;
- ``view_runs``: small run folders made by the real runner, for the inspector's tests;
- ``toy_suite``: a reproduction suite on a scripted model, for the card's tests;
- ``commaqa_kb``, ``decomp_prompt_files``: reading CommaQA facts and DecomP's prompt files, to check
  the shipped example programs.
"""
