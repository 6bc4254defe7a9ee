"""Every CLI mistake is one line on stderr, exit 2, no traceback -- and no model call.

The runs go through ``main()`` (the console script's path, with its error
rendering) in-process; one case also runs as a real subprocess.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

from thoughtloom.cli.main import main

GOOD = '{"question": "What is 1 plus 1?", "answer": "#### 2"}\n'
NO_SERVER = ["--model", "openai:m@http://127.0.0.1:9/v1"]  # nothing listens: a model call would fail loudly


def call_main(monkeypatch, capsys, args):
    monkeypatch.setattr(sys, "argv", ["thoughtloom", *args])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return info.value.code, captured.out, captured.err


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(GOOD)
    return path


def ev(data, *extra):
    return ["eval", "-S", "io", "-t", "gsm8k", "-d", str(data), "--no-cache", *NO_SERVER, *extra]


# each case: (name, args built from tmp_path and a good data file, text the one line must hold)
CASES = [
    ("limit negative", lambda t, d: ev(d, "--limit", "-1"), "--limit"),
    ("limit not a number", lambda t, d: ev(d, "--limit", "abc"), "--limit"),
    ("concurrency zero", lambda t, d: ev(d, "--concurrency", "0"), "--concurrency"),
    ("max-calls zero", lambda t, d: ev(d, "--max-calls", "0"), "--max-calls"),
    ("max-tokens zero", lambda t, d: ev(d, "--max-tokens", "0"), "--max-tokens"),
    ("timeout zero", lambda t, d: ev(d, "--timeout", "0"), "--timeout"),
    ("timeout nan", lambda t, d: ev(d, "--timeout", "nan"), "--timeout"),
    ("example-timeout negative", lambda t, d: ev(d, "--example-timeout", "-1"), "--example-timeout"),
    ("unknown option", lambda t, d: ev(d, "--bogus"), "--bogus"),
    ("missing argument", lambda t, d: ["run"], "Missing argument"),
    ("missing option", lambda t, d: ["eval", "-S", "io"], "Missing option"),
    ("unknown command", lambda t, d: ["evaluate"], "No such command"),
    ("set max_tokens negative", lambda t, d: ev(d, "--set", "max_tokens=-5"), "max_tokens: -5"),
    ("set max_tokens zero", lambda t, d: ev(d, "--set", "max_tokens=0"), "max_tokens: 0"),
    ("set shots negative", lambda t, d: ev(d, "--set", "shots=-1"), "shots: -1"),
    ("set n zero", lambda t, d: ["run", "cot-sc", "q", "--set", "n=0", *NO_SERVER], "n: 0"),
    ("set temperature nan", lambda t, d: ["run", "cot-sc", "q", "--set", "temperature=nan", *NO_SERVER],
     "temperature: nan"),
    ("set temperature inf", lambda t, d: ["run", "cot-sc", "q", "--set", "temperature=1e400", *NO_SERVER],
     "temperature: inf"),
    ("set temperature negative", lambda t, d: ["run", "cot-sc", "q", "--set", "temperature=-0.5", *NO_SERVER],
     "temperature: -0.5"),
    ("set rollouts negative", lambda t, d: ["run", "sculpt-mcts", "q", "--set", "rollouts=-3", *NO_SERVER],
     "rollouts: -3"),
    ("set bad --set", lambda t, d: ["run", "cot", "q", "--set", "max_tokens"], "--set"),
    ("demo n zero", lambda t, d: ["demo", "--n", "0"], "--n"),
    ("out is a file", lambda t, d: ev(d, "--out", str(d)), "is a file"),
    ("at-calls empty", lambda t, d: ["compare", str(t), "--at-calls", ""], "--at-calls"),
    ("at-calls empty item", lambda t, d: ["compare", str(t), "--at-calls", "10,,20"], "--at-calls"),
    ("at-calls negative", lambda t, d: ["compare", str(t), "--at-calls", "10,-5"], "--at-calls: '-5'"),
    ("at-calls not a number", lambda t, d: ["compare", str(t), "--at-calls", "ten"], "--at-calls: 'ten'"),
    ("at-tokens past int's digits", lambda t, d: ["compare", str(t), "--at-tokens", "9" * 5000], "--at-tokens: '999"),
    ("at-tokens fraction", lambda t, d: ["compare", str(t), "--at-tokens", "1.5"], "--at-tokens: '1.5'"),
    ("cache below a file", lambda t, d: ["eval", "-S", "io", "-t", "gsm8k", "-d", str(d), *NO_SERVER,
                                        "--out", str(t / "o"), "--cache", str(d / "c.sqlite")], "cannot open cache"),
]


@pytest.mark.parametrize("name,build,needle", CASES, ids=[c[0] for c in CASES])
def test_cli_mistake_is_one_line_exit_2(monkeypatch, capsys, tmp_path, data, name, build, needle):
    code, out, err = call_main(monkeypatch, capsys, build(tmp_path, data))
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith("error:") and needle in lines[0], lines[0]
    assert "Traceback" not in err + out


def write_bytes(path, raw):
    path.write_bytes(raw)
    return path


def test_invalid_utf8_data_file_names_file_and_line(monkeypatch, capsys, tmp_path):
    bad = write_bytes(tmp_path / "bad.jsonl", GOOD.encode() + b'{"question": "caf\xe9", "answer": "#### 1"}\n')
    code, _, err = call_main(monkeypatch, capsys, ev(bad, "--out", str(tmp_path / "o")))
    assert code == 2 and err.count("\n") == 1 and f"{bad}:2: not valid UTF-8 (byte 0xe9" in err
    bad_json = write_bytes(tmp_path / "bad.json", b'[\n{"sQuestion": "\xff"}]')
    code, _, err = call_main(monkeypatch, capsys, ["eval", "-S", "io", "-t", "multiarith", "-d", str(bad_json),
                                                   "--no-cache", *NO_SERVER])
    assert code == 2 and err.count("\n") == 1 and f"{bad_json}:2: not valid UTF-8" in err


@pytest.mark.parametrize("skip_bad", [False, True])
def test_invalid_utf8_corpus(monkeypatch, capsys, tmp_path, skip_bad):
    corpus = write_bytes(tmp_path / "c.json", b'[{"title": "A", "text": "ok"},\n{"title": "B", "text": "\xff"}]')
    args = ["index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "idx")]
    code, _, err = call_main(monkeypatch, capsys, args + (["--skip-bad"] if skip_bad else []))
    assert code == 2 and err.count("\n") == 1 and f"{corpus}:2: not valid UTF-8" in err


def test_invalid_utf8_jsonl_corpus_line_is_skipped_with_skip_bad(tmp_path):
    from thoughtloom.core import DataError
    from thoughtloom.retrieval import read_corpus

    corpus = write_bytes(tmp_path / "c.jsonl", b'{"text": "good one"}\n{"text": "\xff bad"}\n{"text": "good two"}\n')
    with pytest.raises(DataError, match=r"c.jsonl:2: not valid UTF-8"):
        read_corpus(corpus)
    read = read_corpus(corpus, skip_bad=True)
    assert len(read) == 2 and read.skipped == 1 and "c.jsonl:2: not valid UTF-8" in read.problems[0]


@pytest.fixture(scope="module")
def built_index(tmp_path_factory):
    pytest.importorskip("bm25s")
    from thoughtloom.retrieval import build_index, read_corpus

    folder = tmp_path_factory.mktemp("idx")
    corpus = folder.parent / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"p{i}", "title": f"T{i}", "text": f"passage number {i} about cats"})
                              + "\n" for i in range(5)))
    build_index(read_corpus(corpus), "bm25", folder / "idx")
    return folder / "idx"


def damage_manifest(idx):
    (idx / "manifest.json").write_text('{"kind": "bm25", ')


def damage_manifest_fields(idx):
    (idx / "manifest.json").write_text('{"format_version": 1, "kind": "bm25"}')


def damage_offsets(idx):
    (idx / "offsets.npy").write_bytes(b"not numpy")


def damage_offsets_values(idx):
    np.save(idx / "offsets.npy", np.array([0, 10, 5]))


def damage_bm25(idx):
    import shutil

    shutil.rmtree(idx / "bm25")


def damage_passages(idx):
    raw = (idx / "passages.jsonl").read_bytes()
    (idx / "passages.jsonl").write_bytes(raw[: len(raw) // 2])


@pytest.mark.parametrize("damage,needle", [
    (damage_manifest, "manifest.json is not readable JSON"),
    (damage_manifest_fields, "manifest.json lacks"),
    (damage_offsets, "offsets.npy unreadable"),
    (damage_offsets_values, "offsets.npy"),
    (damage_bm25, "bm25/ is missing"),
    (damage_passages, "truncated"),
])
def test_corrupt_index_folder_is_one_line(monkeypatch, capsys, tmp_path, built_index, damage, needle):
    import shutil

    idx = tmp_path / "idx"
    shutil.copytree(built_index, idx)
    code, _, err = call_main(monkeypatch, capsys, ["index", "search", str(idx), "cats"])
    assert code == 0, err  # the copy works before it is damaged
    damage(idx)
    code, out, err = call_main(monkeypatch, capsys, ["index", "search", str(idx), "cats"])
    assert code == 2 and err.count("\n") == 1, err
    assert f"index {idx} is damaged" in err and needle in err and "rebuild" in err
    code, _, err = call_main(monkeypatch, capsys, ["run", "io", "q", "--index", str(idx), *NO_SERVER, "--no-cache"])
    assert code == 2 and "is damaged" in err


def test_usage_error_through_the_console_script_path():
    r = subprocess.run([sys.executable, "-m", "thoughtloom", "eval", "--limit", "-1", "-S", "io", "-t", "gsm8k",
                        "-d", "x"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error:"), r.stderr
    assert "Traceback" not in r.stderr


def test_second_eval_on_a_locked_folder_says_who_holds_it(monkeypatch, capsys, tmp_path, data):
    from thoughtloom.eval import OutputLock

    out = tmp_path / "o"
    with OutputLock(out):
        code, _, err = call_main(monkeypatch, capsys, ev(data, "--out", str(out)))
    assert code == 2 and err.count("\n") == 1 and "in use by another run (pid" in err


def test_index_out_that_is_a_file(monkeypatch, capsys, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "a passage"}\n')
    code, _, err = call_main(monkeypatch, capsys, ["index", "build", "--corpus", str(corpus), "--out", str(corpus)])
    assert code == 2 and err.count("\n") == 1 and "is a file" in err
