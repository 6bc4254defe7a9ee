"""A generated report in a real browser: headless Chromium opens it from disk and the DOM is checked
after its script ran (``--dump-dom``): the run page's table is wired up, navigating to an example
draws its tree, and model text holding ``<script>`` and ``<img onerror=...>`` ran nothing.

Needs Debian's ``chromium`` package (``.ci/run`` installs it); skipped where it is absent.
"""

import base64
import hashlib
import html
import json
import re
import shutil
import subprocess

import pytest

from thoughtloom.view import write_report
from thoughtloom.view.rundir import RunFolder
from thoughtloom.view.trees import search_tree

from support import view_runs

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="headless Chromium is not installed "
                                                        "(apt-get install chromium; .ci/run installs it)")


def dom(url: str, profile) -> str:
    """The page's DOM once its scripts ran (virtual time lets the async page inflation finish)."""
    done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                           "--virtual-time-budget=5000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    tree, sampling = view_runs.tree_run(root / "tree"), view_runs.sampling_run(root / "sampling")
    return {"tree": write_report(tree, replicates=200), "sampling": write_report(sampling, replicates=200)}


def test_the_run_page_loads_and_its_script_runs(reports, tmp_path):
    page = dom(reports["tree"].resolve().as_uri(), tmp_path / "profile")
    assert re.search(r'<span id="filter-count"[^>]*>2 of 2</span>', page)  # set by the report's script
    assert page.count('<tr data-status="') == 2 and 'href="#example=game24-a"' in page
    assert re.search(r'<section id="example" hidden', page)


def test_navigation_to_an_example_draws_its_tree(reports, tmp_path):
    page = dom(reports["tree"].resolve().as_uri() + "#example=game24-a", tmp_path / "profile")
    assert 'data-showing="game24-a"' in page and re.search(r'<section id="run" hidden', page)
    run = RunFolder.open(reports["tree"].parent)
    tree = search_tree(dict(run.trace_blocks())["game24-a"])
    drawn = re.findall(r'<g class="gnode([^"]*)" data-node="([^"]+)"', page)
    assert len(drawn) == len(tree.nodes) + len(tree.rejected)
    assert [n for classes, n in drawn if "chosen" in classes] == [str(tree.chosen)]
    assert all(f'id="tn-{n}"' in page for n in tree.nodes)
    assert not re.search(r'<details class="node[^"]*" id="tn-1"[^>]* open', page)
    linked = dom(reports["tree"].resolve().as_uri() + "#example=game24-a&node=tn-1", tmp_path / "profile")
    assert re.search(r'<details class="node[^"]*" id="tn-1"[^>]* open', linked)  # the link opened node 1


def test_model_text_with_script_runs_nothing(reports, tmp_path):
    for report, example in ((reports["tree"], "game24-a"), (reports["sampling"], "gsm8k-0")):
        page = dom(report.resolve().as_uri() + f"#example={example}", tmp_path / "profile")
        assert f'data-showing="{example}"' in page  # the page with the hostile text is in the DOM
        assert "pwned" not in page.split("<body", 1)[0]  # the injected script did not set the title
        assert "data-pwned" not in page.split(">", 2)[1] and 'data-pwned="1"' not in page  # onerror never ran
        assert "<img" not in page and "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in page


#: Appended to a copy of a page: writes each drawn curve's length and box into the DOM, so the dump
#: shows what Chromium laid out (an SVG it could not read has no geometry).
MEASURE = """<script>
document.body.setAttribute('data-curves', JSON.stringify(
  Array.from(document.querySelectorAll('svg.curve')).map(svg => ({
    axis: svg.dataset.axis, box: [svg.getBoundingClientRect().width, svg.getBoundingClientRect().height],
    lines: Array.from(svg.querySelectorAll('path.curve-line')).map(p => {
      const b = p.getBBox(); return [Math.round(p.getTotalLength()), Math.round(b.width)]; }),
    bands: Array.from(svg.querySelectorAll('path.curve-band')).map(p => Math.round(p.getBBox().width)),
    marks: Array.from(svg.querySelectorAll('g.curve-mark line')).map(l => Math.round(l.getBBox().height))}))));
</script>"""


def _allowing(page, script):
    """``page`` with ``script`` (an inline ``<script>...</script>``) added to its Content-Security-Policy,
    which lets only the report's own script run."""
    body = script.removeprefix("<script>").removesuffix("</script>")
    digest = "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
    page, n = re.subn(r"script-src ('none'|[^;]*)", lambda m: "script-src " + (digest if m.group(1) == "'none'"
                                                                              else f"{m.group(1)} {digest}"), page, 1)
    assert n == 1, "the page has no Content-Security-Policy"
    return page


def _measured(page_path, tmp_path):
    copy = tmp_path / "measured.html"
    page = _allowing(page_path.read_text(encoding="utf-8"), MEASURE)
    copy.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    page = dom(copy.resolve().as_uri(), tmp_path / "profile")
    found = re.search(r'data-curves="([^"]*)"', page)
    assert found, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


def test_the_anytime_curves_render_in_the_report_and_the_comparison(tmp_path):
    from thoughtloom.view.compare import compare_runs, comparison_page

    cot = view_runs.with_anytime(view_runs.sampling_run(tmp_path / "cot", strategy="cot", answers=("16",)),
                                 lambda r: [])
    sc = view_runs.with_anytime(view_runs.sampling_run(tmp_path / "sc"), lambda r: [(1, 30, 1.0), (2, 60, 0.0)])
    report = write_report(sc, replicates=200)
    drawn = _measured(report, tmp_path)
    assert [d["axis"] for d in drawn] == ["calls", "tokens"]
    for d in drawn:
        assert d["box"] == [640, 240] and len(d["lines"]) == 1 and len(d["bands"]) == 1
        length, width = d["lines"][0]
        assert width > 500 and length > width  # spans the plot, with steps up and down
    page = tmp_path / "compare.html"
    page.write_text(comparison_page(compare_runs([cot, sc], replicates=200), page), encoding="utf-8")
    drawn = _measured(page, tmp_path)
    assert [len(d["lines"]) for d in drawn] == [2, 2]  # one line per run on each axis
    flat, stepped = drawn[0]["lines"]
    assert flat[0] == flat[1] and stepped[0] > stepped[1]  # cot never changes; cot-sc steps


def test_a_cards_curves_render_with_the_budget_marked(tmp_path):
    from thoughtloom.eval.reproduce.render import write_card
    from thoughtloom.view.card_curves import card_figures
    from support.toy_suite import toy_card, trajectory

    card = toy_card(tmp_path, {("cot", 0): trajectory((3, 1)), ("io", 0): trajectory((1, 0))})
    _, page = write_card(card, tmp_path / "card", card_figures(card, replicates=200))
    (drawn,) = _measured(page, tmp_path)
    assert drawn["axis"] == "calls" and drawn["box"] == [640, 240] and len(drawn["lines"]) == 2
    (cot_length, cot_width), (io_length, io_width) = drawn["lines"]
    assert cot_width > 500 and cot_length > cot_width and io_length == io_width  # CoT steps up at 3; IO stays 0
    assert len(drawn["bands"]) == 2 and drawn["marks"] == [194]  # the rule spans the plot's height (240-10-36)



def test_the_content_security_policy_blocks_an_inline_handler_and_script_but_not_the_reports_own(reports, tmp_path):
    """Issue 40: the reports sent no Content-Security-Policy. Markup that got into a report by any
    way (an inline handler, a script of its own, a remote image) must not run or load; the report's
    own script (its table, its example pages) still runs."""
    page = reports["tree"].read_text(encoding="utf-8")
    hostile = ('<img src="x" onerror="document.body.setAttribute(\'data-pwned\', \'handler\')">'
               "<script>document.body.setAttribute('data-pwned', 'script')</script>")
    copy = tmp_path / "hostile.html"
    copy.write_text(page.replace("</body>", hostile + "</body>"), encoding="utf-8")
    after = dom(copy.resolve().as_uri(), tmp_path / "profile")
    assert not re.search(r"<body[^>]*data-pwned", after), re.search(r"<body[^>]*>", after).group()
    assert 'data-sort="' in after or "<tbody" in after  # the report's own script drew the run page
