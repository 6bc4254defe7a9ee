"""A reproduction card as Markdown and as HTML, from one document outline.

:func:`outline` turns :class:`~.card.CardData` into blocks (headings,
paragraphs, lists, code, tables) and each writer renders the same blocks, so
the two files never say different things. Every text that reaches HTML is
escaped (suite notes, settings, the command line, paths); Markdown table
cells have their pipes escaped and their newlines folded. The one thing only
the HTML has is each dataset's figure of anytime curves, which the caller
draws (``write_card(..., figures=)``; :mod:`thoughtloom.view.card_curves`
draws them for ``thoughtloom reproduce``): eval renders no SVG of its own.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

from ... import strategies, tasks
from ...core import csp
from ...strategies.config import FROM_TASK
from ...retrieval import spell_settings
from ...tasks.odqa import POOLED_INDEX
from ..results import atomic_write
from ..inference import PairedTest
from ..stats import Estimate
from .card import CardData, CellResult, ClaimResult
from .sections import OVERALL, grid_search, per_step
from .run import SuitePlan

Block = Union[tuple[str, str], tuple[str, list[str]], tuple[str, list[str], list[list[str]]]]

CARD_MD = "card.md"
CARD_HTML = "card.html"


def pct(e: Estimate | PairedTest | None, *, signed: bool = False) -> str:
    """``62.0 [48.0, 75.0]``: a mean and its interval in percent (points for a difference)."""
    if e is None or e.n == 0 or math.isnan(e.mean):
        return "–"
    sign = "+" if signed else ""
    if math.isnan(e.ci_low) or math.isnan(e.ci_high):  # no interval (a stratum of one example)
        return f"{100 * e.mean:{sign}.1f} [no interval]"
    return f"{100 * e.mean:{sign}.1f} [{100 * e.ci_low:{sign}.1f}, {100 * e.ci_high:{sign}.1f}]"


def _settings(cell: CellResult) -> str:
    """The method's strategy and options, then the ones it took from the task (the rest: its
    defaults); a preset is spelt out (the values it set), so the card says which values ran,
    not only the preset's name."""
    m = cell.method
    opts = ", ".join(f"{k}={v}" for k, v in m.settings.items() if k != "preset")
    if "preset" in m.settings:
        preset = strategies.get(m.strategy).presets.get(str(m.settings["preset"]), {})
        spelt = ", ".join(f"{k}={v}" for k, v in preset.items() if k not in m.settings)
        opts = f"preset={m.settings['preset']}: {spelt}" + (f"; {opts}" if opts else "")
    data = "; ".join(f"{k}={' + '.join(files)}" for k, files in m.data_settings.items())
    if data:  # files under the data root
        opts = f"{opts}; {data} (under the data root)" if opts else f"{data} (under the data root)"
    taken = _from_task(cell)
    return (f"{m.strategy}" + (f" ({opts})" if opts else "")
            + (f"; from the task: {', '.join(f'{k}={v}' for k, (v, _) in taken.items())}" if taken else ""))


def _from_task(cell: CellResult) -> dict[str, tuple[Any, str]]:
    """The options this cell's strategy took from its task's search settings: value and source."""
    strategy = cell.method.build(tasks.get(cell.dataset.task))
    return {k: (getattr(strategy.config, k), src.split(": ", 1)[-1])
            for k, src in strategy.sources.items() if src.startswith(FROM_TASK)}


def _task_settings(cells: Sequence[CellResult]) -> Block | None:
    """Every task setting some method of the dataset took, with where it comes from."""
    seen: dict[str, tuple[Any, str]] = {}
    for c in cells:
        seen.update(_from_task(c))
    if not seen:
        return None
    return ("list", [f"{k} = {v} (search setting of task {cells[0].dataset.task}, taken by the tree "
                     f"strategies the suite does not set it for): {src}" for k, (v, src) in seen.items()])


def _paper(card: CardData, cell: CellResult) -> str:
    figures = card.plan.suite.figures_for(cell.dataset.id, cell.method.id)
    return "; ".join(f"{f.value:g} {f.metric}{f' ({f.stratum})' if f.stratum else ''} — {f.model}, {f.source}"
                     + (f", {f.setting}" if f.setting else "") for f in figures) or "–"


def _flags(cell: CellResult) -> str:
    parts = [f"{cell.errors} errors" if cell.errors else "", f"{cell.budget_stopped} budget-stopped"
             if cell.budget_stopped else "", f"{cell.truncated} truncated" if cell.truncated else "",
             f"{cell.cut_off} with a reply cut off at max_tokens" if cell.cut_off else "",
             f"{cell.limited} with an evaluation held to the task's rubric (score_limits)" if cell.limited else "",
             f"incomplete: {cell.n} of {cell.total}" if cell.seeds and not cell.complete else "",
             "per role: " + "; ".join(f"{role} {calls:.1f} calls / {tokens:,.0f} tokens"
                                      for role, (calls, tokens) in cell.by_role.items()) if cell.by_role else ""]
    return ", ".join(p for p in parts if p) or "–"


def made_by(card: CardData, cell: CellResult) -> str:
    """The sittings that added examples to a cell (any of its seeds): ``1 (+6), 3 (+2)``."""
    base = f"{cell.dataset.id}/{cell.method.id}"
    parts = []
    for i, s in enumerate(card.provenance.get("sittings", [])):
        added = s.get("added") if isinstance(s, dict) and isinstance(s.get("added"), dict) else {}
        count = sum(v for k, v in added.items() if (k == base or k.startswith(base + "-seed")) and isinstance(v, int))
        if count:
            parts.append(f"{i + 1} (+{count})")
    return ", ".join(parts) or "–"


def _results_table(card: CardData, cells: Sequence[CellResult]) -> Block:
    d = cells[0].dataset
    others = [m for m in d.metrics if m != d.primary]
    headers = (["method", "strategy (settings)", "paper (model, source)", f"ours: {d.primary} % [95% CI]"]
               + [f"{m} % [95% CI]" for m in others]
               + ["n", "no answer", "seeds", "calls / example", "tokens / example", "tokens / solved", "notes",
                  "sittings (+examples)"])
    rows = []
    for c in cells:
        if not c.seeds:
            rows.append([c.method.label, _settings(c), _paper(card, c), "not run"] + ["–"] * (len(others) + 8))
            continue
        rows.append([c.method.label, _settings(c), _paper(card, c), pct(c.metrics[d.primary])]
                    + [pct(c.metrics[m]) for m in others]
                    + [str(c.n), str(c.no_answer), str(c.seeds), f"{c.calls:.1f}", f"{c.tokens:,.0f}",
                       f"{c.tokens_per_solved:,.0f}" if c.tokens_per_solved is not None else "– (none solved)",
                       _flags(c), made_by(card, c)])
    return ("table", headers, rows)


def _strata_table(cells: Sequence[CellResult]) -> Block:
    names = ("long", "medium", "short", "overall")
    rows = [[c.method.label] + [f"{pct(c.strata.get(s))} (n={c.strata[s].n})" if s in c.strata else "–"
                                for s in names] for c in cells]
    return ("table", ["method"] + [f"{s} %" for s in names], rows)


def _p_cell(r: ClaimResult) -> str:
    if r.difference is None or r.judgement is None or not r.difference.n:
        return "–"
    p, j = r.difference.p_value, r.judgement
    return f"{p:.3g}" + (f" ({j.p_adjusted:.3g})" if j.family > 1 else "")


def _power_cell(r: ClaimResult) -> str:
    """The smallest difference this n detects with 80% power, and the n each paper difference needs."""
    t = r.difference
    if t is None or not t.n:
        return "–"
    if t.mde is not None and t.mde <= 1:
        parts = [f"detects ≥ {100 * t.mde:.1f} pts at n = {t.n}"]
    elif t.mde is not None:
        parts = [f"no difference up to 100 pts is detected with 80% power at n = {t.n}"]
    elif t.se > 0:
        parts = [f"none detectable at n = {t.n}: the test cannot reach 0.05"]
    else:
        parts = [f"no spread at n = {t.n} (every pair tied): nothing to size it on"]
    for model, delta, needed in r.paper_n():
        if delta <= 0:
            parts.append(f"{model}'s difference is {100 * delta:+.1f} pts, not the claim's way")
        elif needed is not None:
            parts.append(f"{model}'s {100 * delta:+.1f} pts needs n ≈ {needed:,}")
    return "; ".join(parts)


def _claims_table(claims: Sequence[ClaimResult]) -> Block:
    rows = []
    for r in claims:
        where = f" [{r.claim.stratum}]" if r.claim.stratum else ""
        paper = "; ".join(f"{model}: {b:g} vs {w:g}" for model, b, w in r.paper) or "–"
        t = r.difference
        ours = f"{pct(t, signed=True)} pts (n={t.n})" if t is not None else "–"
        verdict = r.verdict + (f": {r.judgement.reason}" if r.judgement and r.verdict == "inconclusive" else "")
        rows.append([r.claim.statement + where, f"{r.claim.better} > {r.claim.worse} on {r.metric}",
                     r.claim.source, paper, ours, t.short if t is not None and t.n else "–", _p_cell(r), verdict,
                     _power_cell(r), r.along])
    return ("table", ["claim", "checked as", "source", "paper", "ours: difference [95% CI]", "test",
                      "p (Holm-adjusted)", "verdict", "power (80%, α = 0.05)",
                      "along the call budget (descriptive)"], rows)


#: How :func:`..curves.run_curves` begins its note on where a cut run's curve ends.
CUT = "examples cut by the run's budget"


def budget_mark(plan: SuitePlan) -> tuple[int, str] | None:
    """The call budget a card's curves mark, and its label: the paper's where the suite declares
    it (``paper_budget``), else the suite's own equal budget; None with neither."""
    paper = plan.suite.paper_budget
    if paper is not None:
        return paper[0], f"paper: {paper[0]:,} calls ({paper[1]})"
    if plan.budget.max_calls:
        return plan.budget.max_calls, f"this card's equal budget: {plan.budget.max_calls:,} calls"
    return None


def _curve_notes(card: CardData) -> list[str]:
    """What the descriptive budget column and the curves rest on, per cell where it is not every example
    exactly (the curves module's own notes: left out, batch boundaries, cut by the budget)."""
    where = ("the paper's budget as the suite declares it" if card.plan.suite.paper_budget else
             "the suite's own equal budget (the suite declares no paper budget)")
    out = ["\"Along the call budget\" is descriptive, not a test: at 1 call and at every larger call budget, up to "
           "the suite's, at which some example's answer changes, the sign of the claim's mean paired difference "
           "(the claimed better method ahead, behind or tied), each holding until the next; an example's score at "
           "a budget is what its run had answered by then (its anytime trajectory), i.e. what a run capped there "
           "answers. Dozens of budgets are dozens of looks, so no verdict is read from them: the verdict is taken "
           "once, at the suite's budget (the \"verdict\" column). card.html draws each method's primary metric "
           "against calls with its 95% band" + (f" and marks {where}." if budget_mark(card.plan) else ".")]
    for c in card.cells:
        seen: list[str] = []
        for seed in c.curves:  # a cell cut at the suite's budget is every card's case: the phrase says the rest
            seen += [n for n in (seed.notes if seed.recorded else []) if n not in seen and not n.startswith(CUT)]
        out += [f"{c.method.label} on {c.dataset.id}: {n}" for n in seen]
    return out


def outline(card: CardData) -> list[Block]:
    plan, suite, prov = card.plan, card.plan.suite, card.provenance
    budget = plan.budget
    limits = [f"{budget.max_calls} calls" if budget.max_calls else "", f"{budget.max_tokens:,} tokens"
              if budget.max_tokens else ""]
    blocks: list[Block] = [
        ("h1", f"Reproduction card: {suite.name}"),
        ("p", suite.title),
        ("list", [f"Paper: {suite.paper}",
                  f"Model: {', '.join(card.models) or 'none yet (no cell has run)'}" + "".join(
                      f"; {role}: {model} (methods whose {role} is on a model of its own)"
                      for role, model in card.role_models),
                  f"thoughtloom {prov.get('version', '?')}, commit {prov.get('commit') or 'unknown (not a git checkout)'}",
                  f"Card generated: {prov.get('generated', '?')}",
                  f"n = {plan.n} examples per dataset, seeds = {plan.seeds}; budget per example, every method alike: "
                  + (" and ".join(x for x in limits if x) or "the runner's default"),
                  f"Entailment judge: {prov.get('entail', 'none')}; retrieval: "
                  + (f"the index {prov['index']}" if prov.get("index") else
                     f"BM25 over the data file's pooled paragraphs where it has them ({spell_settings(POOLED_INDEX)} "
                     "unless a dataset says otherwise), else none (closed book)"),
                  f"Suite file: {suite.source} (sha256 {suite.digest[:12]})"]),
        ("h2", "Commands"),
        ("code", "\n".join([f"# sitting {i + 1} ({s.get('kind', 'run')}, {s.get('started', '?')}, "
                            f"model {s.get('model') or 'none opened'}, commit {s.get('commit') or '?'}):\n{s.get('command', '?')}"
                            for i, s in enumerate(prov.get("sittings", []))]
                           + [f"# this card:\n{prov.get('command', '?')}"])),
    ]
    for d in plan.datasets:
        if d.id not in card.slices:
            blocks += [("h2", f"{d.id}: task {d.task}, {d.data}"),
                       ("p", f"No data here: {card.missing.get(d.id, 'not loaded')}")]
            continue
        cells = [c for c in card.cells if c.dataset.id == d.id]
        sl = card.slices[d.id]
        if sl.sample:
            blocks += [("h2", f"{d.id}: task {d.task}, the packaged sample {sl.path.name}, "
                              f"examples 1–{len(sl.examples)}"),
                       ("p", f"The task's packaged sample stands in for {d.data} (no --data-root): a few dozen "
                             "examples to try the suite on, not the suite's slice.")]
        else:
            blocks += [("h2", f"{d.id}: task {d.task}, {d.data}, "
                              f"examples {d.offset + 1}–{d.offset + len(sl.examples)}")]
        if d.note:
            blocks.append(("p", d.note))
        if d.index and not prov.get("index"):  # the pooled index's own settings, every method alike
            blocks.append(("p", f"Retrieval for every method: BM25 over the pooled paragraphs, built with "
                                f"{spell_settings(d.index)}."))
        blocks += [_results_table(card, cells), ("figure", d.id)]
        settings = _task_settings(cells)
        if settings is not None:
            blocks.append(settings)
        if d.strata:
            blocks += [("h3", f"{d.primary} by question length"), _strata_table(cells), ("p", OVERALL)]
        blocks += per_step(cells, d.primary)
        blocks += grid_search([g for g in card.grids if g.dataset.id == d.id])
        claims = [r for r in card.claims if r.dataset.id == d.id]
        if claims:
            blocks += [("h3", "The paper's claims"), _claims_table(claims)]
    notes = list(suite.notes) + [f"{m.label}: {m.note}" for m in suite.methods if m.note] + [
        "Figures are percentages. Ours: the mean over examples with a 95% percentile bootstrap interval "
        "(10,000 replicates; with several seeds, examples and seeds are resampled together). The paper's "
        "figures come from its own model and set-up; compare orderings, not levels.",
        "A claim \"A beats B\" is tested on the paired difference A − B over the examples both scored, each "
        "example's score averaged over seeds first: for 0/1 scores by the exact McNemar test on the discordant "
        "pairs, with Newcombe's (method 10) interval; for graded scores (or seed means) by the paired sign-flip "
        "permutation test, exact up to 16 non-zero differences, with a BCa bootstrap interval; where the task "
        "groups examples (several questions over one context), whole groups are flipped and resampled. It holds "
        "(or does not hold, the difference the other way) only when the test rejects \"no difference\" at "
        "α = 0.05 after Holm's correction across "
        + (f"this card's {sum(1 for r in card.claims if r.judgement)} tested claims" if card.claims else
           "the card's claims")
        + "; otherwise it is inconclusive, with the reason (the smallest p-value this n allows, or the "
          "p-value found). Power: the smallest true difference detected with 80% power at α = 0.05 at this n "
          "(for 0/1 scores exact, given the discordant pairs seen; none below 6 of them), and the n needed to "
          "detect the paper's own difference. How each figure is made, with its sources: docs/verdicts.md in thoughtloom.",
        "n: the examples every seed of the cell has scored; \"sittings (+examples)\": the sittings (numbered as "
        "under Commands) that added examples to the cell, and how many (a sitting logged before this count "
        "existed is not listed).",
        "\"no answer\": examples scored as no answer, every method alike: an error, a reply cut off at "
        "max_tokens, or a prediction in which the task's reader finds no answer (for the math tasks a "
        "chain of thought with no \"answer is\" statement, or a reply with no number; for DecomP also a "
        "program that stopped before [EOQ]).",
        *_curve_notes(card),
        "Notes column: \"truncated\" examples gave no answer because a reply was cut off at max_tokens "
        "(scored as no answer); \"with a reply cut off\" counts examples where any model call of the run "
        "was, whatever the answer."
        + (" \"Held to the task's rubric\" counts examples where the search lowered an evaluation the model "
           "scored above the task's own rubric (score_limits, a symbolic check: a crossword clue with blanks "
           "scores at most 5/10)." if any(c.limited for c in card.cells) else ""),
    ]
    blocks += [("h2", "Notes"), ("list", notes)]
    return blocks


def _md_cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def to_markdown(blocks: list[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2", "h3"):
            out.append("#" * int(kind[1]) + " " + " ".join(str(block[1]).split()))
        elif kind == "p":
            out.append(str(block[1]))
        elif kind == "list":
            out.append("\n".join(f"- {' '.join(str(item).split())}" for item in block[1]))
        elif kind == "code":
            fence = "````" if "```" in str(block[1]) else "```"
            out.append(f"{fence}\n{block[1]}\n{fence}")
        elif kind == "table":
            headers, rows = block[1], block[2]  # type: ignore[misc]
            lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
            out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


_STYLE = ("body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem}"
          "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .5rem;"
          "text-align:left;vertical-align:top}pre{background:#f6f6f6;padding:.8rem;overflow-x:auto}")


def to_html(blocks: list[Block], title: str, figures: Mapping[str, str] | None = None) -> str:
    """The page; ``figures``: markup (written and escaped by its maker) by dataset id."""
    e = html.escape
    out = [f"<!doctype html>\n<html><head><meta charset=\"utf-8\">"
           f"<meta http-equiv=\"Content-Security-Policy\" content=\"{e(csp.policy(styles=[_STYLE]))}\">"
           f"<title>{e(title)}</title>"
           f"<style>{_STYLE}</style></head><body>"]
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2", "h3", "p"):
            out.append(f"<{kind}>{e(str(block[1]))}</{kind}>")
        elif kind == "list":
            out.append("<ul>" + "".join(f"<li>{e(str(item))}</li>" for item in block[1]) + "</ul>")
        elif kind == "code":
            out.append(f"<pre><code>{e(str(block[1]))}</code></pre>")
        elif kind == "figure":
            out.append(str((figures or {}).get(str(block[1]), "")))
        elif kind == "table":
            headers, rows = block[1], block[2]  # type: ignore[misc]
            head = "".join(f"<th>{e(str(h))}</th>" for h in headers)
            body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in rows)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    out.append("</body></html>\n")
    return "\n".join(out)


def write_card(card: CardData, out: Path, figures: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """``OUT/card.md`` and ``OUT/card.html``, each replaced atomically; ``figures``: the HTML's
    curves by dataset id (:func:`thoughtloom.view.card_curves.card_figures`)."""
    blocks = outline(card)
    out.mkdir(parents=True, exist_ok=True)
    md, page = out / CARD_MD, out / CARD_HTML
    atomic_write(md, to_markdown(blocks))
    atomic_write(page, to_html(blocks, f"Reproduction card: {card.plan.suite.name}", figures))
    return md, page


def verdict_counts(card: CardData) -> dict[str, Any]:
    """How many claims got each verdict (for the CLI's last line)."""
    counts: dict[str, int] = {}
    for r in card.claims:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    return counts
