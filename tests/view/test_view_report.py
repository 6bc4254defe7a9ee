"""The report file: self-contained, escaped, one lazily opened page per example."""

import base64
import gzip
import json
import re

import pytest

from thoughtloom.core.errors import ConfigError
from thoughtloom.core.events import RENAMED
from thoughtloom.view import RunFolder, build_report, write_report
from thoughtloom.view.figures import figures
from thoughtloom.view.markup import h, Raw

from support import view_runs

PAGE = re.compile(r'<script type="application/x-thoughtloom-page" data-example="([^"]*)">([^<]*)</script>')


def pages(html: str) -> dict[str, str]:
    """Example id -> its page's HTML, inflated as the report's script does."""
    return {example: gzip.decompress(base64.b64decode(data)).decode("utf-8") for example, data in PAGE.findall(html)}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return {"tree": view_runs.tree_run(root / "tree"), "hgot": view_runs.hgot_run(root / "hgot"),
            "decomp": view_runs.decomp_run(root / "decomp"), "sampling": view_runs.sampling_run(root / "sampling")}


def test_the_report_is_one_offline_file_with_a_page_per_example(folders):
    for name, folder in folders.items():
        html = build_report(RunFolder.open(folder), replicates=200)
        assert html.startswith("<!DOCTYPE html>") and "<style>" in html and "<script>" in html
        assert not re.search(r"(src|href)=\"(https?:)?//", html), name  # nothing fetched from a network
        found = pages(html)
        assert set(found) == set(RunFolder.open(folder).records), name
        assert all(f"#example={example}" in html for example in found)  # the table links to each


def test_each_family_s_structure_is_on_its_page(folders):
    tree = pages(build_report(RunFolder.open(folders["tree"]), replicates=200))["game24-a"]
    assert 'data-prefix="tn-"' in tree and 'id="tn-0"' in tree and "gnode chosen" in tree
    assert "gnode rejected" in tree
    # a revision diffed word by word against its parent: "(4 + 9) * 10 - 13" -> "(13 - 9) * (10 - 4)"
    assert ('changes from #0</summary><pre class="text diff"><del>(4</del><ins>(13</ins> <del>+</del><ins>-</ins> '
            '9) * <del>10</del><ins>(10</ins> - <del>13</del><ins>4)</ins></pre>') in tree
    hgot = pages(build_report(RunFolder.open(folders["hgot"]), replicates=200))["hotpotqa-jaws"]
    assert all(f'id="hq-{q}"' in hgot for q in ("1", "1.1", "1.2")) and 'data-prefix="hq-1."' in hgot
    assert "Step 1 → Step 2" in hgot and "Steven Spielberg" in hgot and "marker-end" in hgot
    decomp = pages(build_report(RunFolder.open(folders["decomp"]), replicates=200))["letter_cat-a"]
    assert all(f'id="pr-1.2.{i}"' in decomp for i in (1, 2, 3)) and "badge program" in decomp
    # each step is badged with its handler's kind (letter_cat's split is a prompt handler), not only the legend
    assert '<b>1. </b><span class="badge prompt">prompt</span> <code>split</code>' in decomp
    sampling = pages(build_report(RunFolder.open(folders["sampling"]), replicates=200))["gsm8k-0"]
    assert "Samples and vote" in sampling and sampling.count('class="call"') == 3


def test_model_text_is_escaped_everywhere(folders):
    for folder in (folders["tree"], folders["sampling"]):
        html = build_report(RunFolder.open(folder), replicates=200)
        for page in [html, *pages(html).values()]:
            assert view_runs.HOSTILE not in page and "<img src=x" not in page
            assert "<script>document.title" not in page
        assert any("&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in p for p in pages(html).values())


def test_markup_escapes_text_and_attributes():
    assert h("a", {"href": 'x" onclick="y', "data_node": 3}, "<b>") == \
        '<a href="x&quot; onclick=&quot;y" data-node="3">&lt;b&gt;</a>'
    assert h("p", None, Raw("<i>ours</i>"), "<i>theirs</i>") == "<p><i>ours</i>&lt;i&gt;theirs&lt;/i&gt;</p>"
    assert h("details", {"open": False, "hidden": True}) == "<details hidden></details>"


def test_one_example_report_and_an_unknown_id(folders, tmp_path):
    path = write_report(folders["decomp"], example="letter_cat-b", replicates=200)
    assert path.name == "report-letter_cat-b.html"
    html = path.read_text()
    assert set(pages(html)) == {"letter_cat-b"} and 'data-open="letter_cat-b"' in html
    with pytest.raises(ConfigError, match="no example 'nope'"):
        write_report(folders["decomp"], tmp_path / "x.html", example="nope")
    with pytest.raises(ConfigError, match="not a run folder"):
        write_report(tmp_path)


def test_the_run_page_has_intervals_strata_and_counts(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    records = [{"id": f"q{i}", "input": "?", "prediction": "a", "gold": "a", "error": "boom" if i == 9 else None,
                "metrics": {"em": float(i % 2), "f1": 0.5}, "meta": {"stratum": "long" if i < 4 else "short"},
                "usage": {"calls": 2, "cached_calls": 1, "prompt_tokens": 10, "completion_tokens": 5}}
               for i in range(10)]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "summary.json").write_text(json.dumps({"strategy": "cot", "task": "hotpotqa", "total": 12,
                                                     "complete": False, "this_run": {"wall_s": 3.5}}))
    run = RunFolder.open(folder)
    fig = figures(run, replicates=500)
    assert fig.primary == "em" and fig.metrics["em"].mean == 0.5 and fig.metrics["em"].n == 10
    assert fig.metrics["em"].ci_low < 0.5 < fig.metrics["em"].ci_high
    assert set(fig.strata) == {"long", "short"} and fig.strata["long"]["em"].n == 4
    assert fig.statuses == {"correct": 4, "partial": 0, "wrong": 5, "error": 1} and fig.cached_share == 0.5
    assert fig.tokens_per_correct == 150 / 5 and fig.wall_s == 3.5 and fig.wall_note == "last invocation"
    html = build_report(run, replicates=500)
    assert "incomplete" in html and "10 of 12" in html and ">long<" in html and "em" in html
    assert html.count('<tr data-status="') == 10 and 'data-status="error"' in html
    assert set(pages(html)) == {f"q{i}" for i in range(10)}  # no trace: pages from the records alone


def test_a_damaged_run_folder_still_renders(tmp_path):
    folder = view_runs.sampling_run(tmp_path / "run", n_examples=2)
    with (folder / "results.jsonl").open("a") as fh:
        fh.write('{"id": "half-writ')
    (folder / "summary.json").write_text("{not json")
    run = RunFolder.open(folder)
    assert len(run.records) == 2 and run.summary == {} and run.skipped_lines == 1
    html = build_report(run, replicates=200)
    assert "1 unreadable lines" in html and set(pages(html)) == {"gsm8k-0", "gsm8k-1"}


def test_run_json_names_the_run_where_it_is_recorded(tmp_path):
    folder = view_runs.sampling_run(tmp_path / "run", n_examples=1)
    (folder / "run.json").write_text(json.dumps({
        "command": ["thoughtloom", "eval", "-S", "cot-sc"], "started": "2026-01-01T00:00:00+00:00",
        "config": {"strategy": "cot-sc", "task": "gsm8k", "model": {"id": "gguf:tiny", "backend": "LlamaCpp"},
                   "data": {"path": "test.jsonl", "sha256": "ab12", "offset": 0, "limit": 1}}}))
    run = RunFolder.open(folder)
    assert (run.strategy, run.task_name, run.model, run.data_identity()) == ("cot-sc", "gsm8k", "gguf:tiny",
                                                                              "sha256:ab12")
    html = build_report(run, replicates=100)
    assert "thoughtloom eval -S cot-sc" in html and "model gguf:tiny" in html and "2026-01-01" in html


def test_what_went_wrong_inside_is_said_on_both_pages(tmp_path):
    folder = view_runs.tree_run(tmp_path / "run", readable=False)
    html = build_report(RunFolder.open(folder), replicates=100)
    assert re.search(r"<li>malformed \(unparsed\): \d+ replies in 2 of 2 examples \(tree_evaluation \d+\)</li>", html)
    page = pages(html)["game24-a"]
    assert re.search(r"<li>malformed \(unparsed\): \d+ replies \(tree_evaluation \d+\)</li>", page)
    assert "evaluation unreadable" in page and re.search(r'class="gnode chosen[^"]* failed"', page)


def test_a_run_traced_before_the_tree_events_were_renamed_reads_as_today(tmp_path):
    """Issue 28: the kernel's events were sculpt_* ("old names still readable by the view"):
    the same run with its trace and records written in the old names gives the same report."""
    folder = view_runs.tree_run(tmp_path / "run", readable=False)
    today = build_report(RunFolder.open(folder), replicates=100)
    old_names = {new: old for old, new in RENAMED.items()}
    for name in ("trace.jsonl", "results.jsonl"):
        text = (folder / name).read_text(encoding="utf-8")
        (folder / name).write_text(re.sub(r'"(tree_[a-z_]+)"', lambda m: f'"{old_names.get(m[1], m[1])}"', text),
                                   encoding="utf-8")
    trace = (folder / "trace.jsonl").read_text(encoding="utf-8")
    # every renamed event is in its old name; only events younger than the rename (tree_empty) keep theirs
    assert '"type": "sculpt_node"' in trace and '"what": "sculpt_evaluation"' in trace
    assert not re.search(r'"tree_(?!empty")', trace)
    assert '"sculpt_evaluation"' in (folder / "results.jsonl").read_text(encoding="utf-8")  # step_problems
    assert build_report(RunFolder.open(folder), replicates=100) == today


def test_every_page_has_a_content_security_policy_that_allows_only_its_own_script_and_style(folders, tmp_path):
    """Issue 40: the HTML reports sent no Content-Security-Policy. Each page now says nothing loads
    from anywhere, and its own inline script and style are allowed by hash (no 'unsafe-inline',
    so no inline handler or style= attribute runs); no page of ours needs a style= attribute."""
    import hashlib

    from thoughtloom.view.compare import compare_runs, comparison_page

    def digest(text):
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    html = build_report(RunFolder.open(folders["sampling"]), replicates=200)
    compared = comparison_page(compare_runs([str(folders["tree"]), str(folders["sampling"])]), tmp_path / "c.html")
    for page in (html, compared):
        policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page).group(1)
        policy = policy.replace("&#x27;", "'")
        assert policy.startswith("default-src 'none';") and "unsafe" not in policy
        for tag in ("script", "style"):
            for body in re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.S):
                assert digest(body) in policy, tag
        for inner in [page, *pages(page).values()]:
            assert not re.search(r"<[^>]+\s(style|on[a-z]+)=", inner)
    assert "script-src 'none'" in compared.replace("&#x27;", "'")  # the comparison runs no script


def test_a_huge_line_in_a_run_is_skipped_and_counted_not_held(tmp_path):
    """Issue 40: `view` on a run made from a 1 GB question died with MemoryError at 8 GB. A line
    over the report's limit (16 MiB) is skipped and counted, read past in small pieces."""
    import tracemalloc

    run = tmp_path / "run"
    run.mkdir()
    ok = json.dumps({"id": "q1", "input": "fine", "metrics": {"em": 1.0}}) + "\n"
    huge = '{"id": "q2", "input": "' + "x" * (40 << 20) + '", "metrics": {"em": 0.0}}\n'
    (run / "results.jsonl").write_text(ok + huge + ok.replace("q1", "q3"), encoding="utf-8")
    del huge
    tracemalloc.start()
    folder = RunFolder.open(run)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert list(folder.records) == ["q1", "q3"] and folder.skipped_lines == 1
    assert peak < 40 << 20, f"reading the run held {peak:,} bytes"  # less than the line: never held whole
