"""The one prompt loader: every packaged prompt file, DecomP's included, by its path; overrides per file."""

import pytest

from thoughtloom import prompts
from thoughtloom.core.errors import ConfigError


def test_roles_and_decomp_programs_are_read_by_path():
    assert "$question" in prompts.read("cot")
    assert "QS:" in prompts.read("decomp/decomposers/letter_cat")
    assert prompts.read("decomp/handlers/no_such") is None
    assert {"qa", "merge"} <= prompts.names("decomp/handlers")
    assert "letter_cat" in prompts.names("decomp/decomposers")


def test_a_file_in_prompt_dir_replaces_ours_alone(tmp_path):
    (tmp_path / "cot.txt").write_text("MINE $question", encoding="utf-8")
    (tmp_path / "decomp" / "handlers").mkdir(parents=True)
    (tmp_path / "decomp" / "handlers" / "qa.txt").write_text("my qa", encoding="utf-8")
    (tmp_path / "decomp" / "handlers" / "extra.txt").write_text("new", encoding="utf-8")
    assert prompts.render("cot", tmp_path, question="q") == "MINE q"
    assert prompts.read("decomp/handlers/qa", tmp_path) == "my qa"
    assert prompts.read("decomp/handlers/merge", tmp_path) == prompts.read("decomp/handlers/merge")
    assert prompts.names("decomp/handlers", tmp_path) == prompts.names("decomp/handlers") | {"extra"}


def test_an_unknown_template_is_a_config_error():
    with pytest.raises(ConfigError, match="no prompt template named 'nope'"):
        prompts.render("nope")


def test_the_tree_kernels_prompts_are_tree_named_and_an_old_sculpt_override_still_applies(tmp_path):
    """ToT and Self-Refine run on the kernel's prompts, so they are named tree_*, not sculpt_*; a user's
    override written under the old name keeps working, and the new name wins where a folder has both."""
    assert prompts.read("tree_evaluate") and prompts.read("sculpt_evaluate") is None
    (tmp_path / "sculpt_evaluate.txt").write_text("OLD $solution", encoding="utf-8")
    assert prompts.render("tree_evaluate", tmp_path, solution="s") == "OLD s"
    (tmp_path / "tree_evaluate.txt").write_text("NEW $solution", encoding="utf-8")
    assert prompts.render("tree_evaluate", tmp_path, solution="s") == "NEW s"
