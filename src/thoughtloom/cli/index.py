"""``thoughtloom index build|search|eval`` and the ``--index`` / ``--entail`` options of run and eval.

The services those options open are built by :mod:`thoughtloom.eval.services`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ..core.errors import ConfigError
from .conventions import quiet
from .render import notes, out, shown

index_app = typer.Typer(help="Build, search and evaluate local passage indexes.", no_args_is_help=True)

IndexDir = Annotated[Optional[Path], typer.Option(
    "--index", envvar="THOUGHTLOOM_INDEX",
    help="Index folder (from `thoughtloom index build`) that strategies retrieve from.")]
EntailSpec = Annotated[str, typer.Option(
    "--entail", envvar="THOUGHTLOOM_ENTAIL",
    help="Entailment judge: 'llm' (asks the --model; options as llm:mode=votes,votes=5), "
         "'lexical' (approximate word overlap), cross:PATH (a local CrossEncoder NLI model folder) or 'none'.")]


def parse_settings(sets: list[str] | None) -> dict[str, dict[str, str]]:
    """``--set bm25.k1=1.2 --set fusion.dense_weight=0.5`` -> nested settings, as text: the
    index's settings classes read them with the one options coercer (each key's declared type,
    bounds and choices; :mod:`thoughtloom.core.options`), so a bad or unknown one is named."""
    settings: dict[str, dict[str, str]] = {}
    for item in sets or []:
        key, sep, value = item.partition("=")
        part, dot, name = key.strip().partition(".")
        if not sep or not dot or part not in ("bm25", "dense", "fusion", "links") or not name:
            raise ConfigError(f"bad --set {item!r}",
                              hint="use --set bm25.KEY=V, dense.KEY=V, fusion.KEY=V or links.KEY=V")
        settings.setdefault(part, {})[name] = value.strip()
    return settings


@index_app.command("build")
def build(
    corpus: Annotated[list[Path], typer.Option("--corpus", "-c", help="Corpus file or folder; repeat to pool.")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Index folder to write.")],
    kind: Annotated[str, typer.Option("--kind", "-k", help="bm25, dense or hybrid.")] = "bm25",
    fmt: Annotated[str, typer.Option("--format", "-f", help="auto, jsonl, json, csv, dir, hotpotqa, 2wiki, "
                                                         "ircot, musique, hipporag or fever.")] = "auto",
    sets: Annotated[Optional[list[str]], typer.Option(
        "--set", "-s", help="Index setting, e.g. bm25.k1=1.2, bm25.stemmer=none, dense.dtype=float32, "
                            "fusion.dense_weight=0.5 (repeatable).")] = None,
    skip_bad: Annotated[bool, typer.Option("--skip-bad", help="Skip malformed records (counted) instead of failing.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing index in --out.")] = False,
) -> None:
    """Read a corpus (pooled and deduplicated) and write an index folder."""
    from ..retrieval import build_index, disk_size, read_corpus

    if out_dir.exists() and not out_dir.is_dir():  # say so before reading a large corpus
        raise ConfigError(f"index folder {out_dir} is a file", hint="choose another --out")
    t0 = time.perf_counter()
    corp = read_corpus(corpus, fmt, skip_bad=skip_bad)
    read_s = time.perf_counter() - t0
    notes.print(f"read {len(corp)} passages from {corp.read} records in {read_s:.1f}s "
                f"({corp.duplicates} duplicates merged, {corp.skipped} skipped)")
    for problem in corp.problems:
        notes.print(f"  [yellow]skipped[/] {shown(problem)}", highlight=False)
    if corp.skipped > len(corp.problems):
        notes.print(f"  ... and {corp.skipped - len(corp.problems)} more skipped")
    manifest = build_index(corp, kind, out_dir, parse_settings(sets), overwrite=overwrite,
                           show_progress=not quiet() and notes.is_terminal)  # no tqdm bars in a pipe or a log
    size = disk_size(out_dir)
    out.print(f"[bold]{kind}[/] index of {len(corp)} passages in {out_dir} "
              f"({size / 1e6:.1f} MB; built in {sum(manifest['build'].values()):.1f}s)")


@index_app.command("search")
def search(
    index_dir: Annotated[Path, typer.Argument(help="Index folder.")],
    query: Annotated[list[str], typer.Argument(help="One or more queries.")],
    k: Annotated[int, typer.Option("-k", min=1, help="Passages per query.")] = 5,
    kind: Annotated[Optional[str], typer.Option(help="Open a hybrid index as only its bm25 or dense half.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Search an index and print the top passages for each query."""
    from ..retrieval import open_index

    index = open_index(index_dir, kind=kind)
    t0 = time.perf_counter()
    results = index.search_sync(query, k)
    seconds = time.perf_counter() - t0
    if as_json:
        out.print_json(json.dumps({"seconds": round(seconds, 4), "results": [
            {"query": q, "hits": [{"rank": h.rank, "score": round(h.score, 6), "id": h.passage.id,
                                   "title": h.passage.title, "text": h.passage.text} for h in hits]}
            for q, hits in zip(query, results)]}, ensure_ascii=False))
        return
    for q, hits in zip(query, results):
        table = Table(title=f"{shown(q)}  [dim]({index.kind}, {len(index)} passages)[/]", title_justify="left")
        for col in ("#", "score", "title", "text"):
            table.add_column(col, overflow="fold")
        for h in hits:
            text = h.passage.text if len(h.passage.text) <= 160 else h.passage.text[:157] + "..."
            table.add_row(str(h.rank + 1), f"{h.score:.3f}", shown(h.passage.title), shown(text))
        if not hits:
            table.add_row("-", "-", "(no match)", "")
        out.print(table)


@index_app.command("eval")
def evaluate(
    index_dir: Annotated[Path, typer.Argument(help="Index folder.")],
    data: Annotated[list[Path], typer.Option("--data", "-d", help="QA file with supporting titles; repeatable.")],
    ks: Annotated[str, typer.Option("-k", help="Comma-separated cut-offs.")] = "1,2,5,10,20",
    kind: Annotated[Optional[str], typer.Option(help="Open a hybrid index as only its bm25 or dense half.")] = None,
    limit: Annotated[Optional[int], typer.Option(min=1, help="Only the first N questions.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Recall of all / any supporting titles in the top k (HotpotQA, 2Wiki, IRCoT, MuSiQue, HippoRAG files)."""
    from ..retrieval import open_index, read_questions
    from ..retrieval.evaluate import evaluate_index

    try:
        cutoffs = sorted({int(x) for x in ks.split(",") if x.strip()})
    except ValueError:
        raise ConfigError(f"bad -k {ks!r}", hint="use comma-separated integers, e.g. -k 2,5,10") from None
    if not cutoffs or cutoffs[0] < 1:
        raise ConfigError(f"bad -k {ks!r}", hint="cut-offs must be >= 1")
    gold = read_questions(data)  # a question in two files counts once
    gold = gold[:limit] if limit else gold
    if not gold:
        raise ConfigError("no questions with supporting titles in --data")
    index = open_index(index_dir, kind=kind)
    report = evaluate_index(index, gold, cutoffs)
    if as_json:
        out.print_json(json.dumps(report))
        return
    table = Table(title=f"{index.kind} index, {len(index)} passages, {report['n']} questions")
    table.add_column("k", justify="right")
    table.add_column("recall_all", justify="right")
    table.add_column("recall_any", justify="right")
    for k in cutoffs:
        table.add_row(str(k), f"{report[f'recall_all@{k}']:.3f}", f"{report[f'recall_any@{k}']:.3f}")
    out.print(table)
    out.print(f"{report['queries_per_s']} queries/s")
