"""A user's own data, metric and task, from a fresh folder: the CLI in a subprocess against a fake
OpenAI-compatible server, and the Python API in a subprocess on ScriptedLM. The task module and data
files are the ones docs/tasks.md lays out, so the page is what is tested."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO
from test_docs import doc_files
from thoughtloom.testing.fake_server import FakeOpenAIServer

ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}  # the checkout's package, wherever the test runs from


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=ENV)


def reply(prompt):
    """Answers as a model would: the capital, a number, a sum; evaluations as JSON."""
    if "JSON" in prompt:
        return json.dumps({"score": 10 if "3 + 12 + 5" in prompt else 3, "feedback": "add up the numbers"})
    if "Target: 20" in prompt:
        return "3 + 12 + 5 makes 20.\nSum: 3 + 12 + 5"
    if "capital of France" in prompt.split("Q:")[-1]:
        return "The capital is Paris.\nThe answer is: paris"
    if "6 times 7" in prompt.split("Q:")[-1]:
        return "6 * 7 = 42.\nThe answer is: 42"
    return "I think so.\nThe answer is: 9 legs"


@pytest.fixture
def folder(tmp_path):
    for name, text in {**doc_files("tasks.md")}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.fixture
def model():
    with FakeOpenAIServer(reply) as server:
        yield f"openai:m@{server.base_url}"


def summary(folder, out):
    return json.loads((folder / out / "summary.json").read_text())


def test_eval_on_my_jsonl_with_my_metric_function(folder, model):
    r = cli("eval", "-S", "cot", "--task", "qa", "--data", "my.jsonl", "--metric", "my_metrics:close",
            "--model", model, "--no-cache", "--out", "o", cwd=folder)
    assert r.returncode == 0, r.stderr
    s = summary(folder, "o")
    assert s["metrics"] == {"close": 0.5} and s["n"] == 2  # Paris found; '9 legs' holds neither 8 nor eight
    records = [json.loads(x) for x in (folder / "o" / "results.jsonl").read_text().splitlines()]
    assert {r["id"] for r in records} == {"qa-1", "spider"}
    run = json.loads((folder / "o" / "run.json").read_text())
    assert run["config"]["task_options"]["metric"] == "my_metrics:close"


def test_eval_on_my_csv_with_declared_fields_and_a_builtin_metric(folder, model):
    r = cli("eval", "-S", "cot", "--task", "qa", "--data", "my.csv", "--input-field", "q", "--gold-field", "a",
            "--metric", "numeric", "--model", model, "--no-cache", "--out", "o", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert summary(folder, "o")["metrics"] == {"numeric": 0.5}  # 42 right; 9 is not 7


def test_a_resume_with_another_metric_is_refused(folder, model):
    args = ["eval", "-S", "cot", "--task", "qa", "--data", "my.jsonl", "--model", model, "--no-cache", "--out", "o"]
    assert cli(*args, cwd=folder).returncode == 0
    r = cli(*args, "--metric", "contains", cwd=folder)
    assert r.returncode == 2 and "was made with task_options metric em, this run asks for contains" in r.stderr


@pytest.mark.parametrize("spec,says", [
    ("nowhere:fn", "--metric nowhere:fn: no module named 'nowhere' in the working folder"),
    ("my_metrics:far", "--metric my_metrics:far: my_metrics has no 'far' (it defines: close)"),
    ("my_metrics", "unknown metric 'my_metrics'"),
    ("broken:fn", "--metric broken:fn: importing broken failed: ZeroDivisionError"),
])
def test_a_metric_that_cannot_be_imported_is_one_line(folder, spec, says):
    (folder / "broken.py").write_text("1 / 0\n")
    r = cli("eval", "-S", "cot", "--task", "qa", "--data", "my.jsonl", "--metric", spec, cwd=folder)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_missing_field_names_file_line_and_flag(folder):
    r = cli("eval", "-S", "cot", "--task", "qa", "--data", "my.csv", cwd=folder)
    assert r.returncode == 2
    assert "my.csv:2: no field 'question' (fields: 'q', 'a') (name the right one with --input-field)" in r.stderr


def test_fields_and_metric_belong_to_the_qa_task(folder):
    r = cli("eval", "-S", "cot", "--task", "gsm8k", "--metric", "f1", cwd=folder)
    assert r.returncode == 2 and "applies to the task qa" in r.stderr


def test_evaluate_from_python_with_examples_and_a_metric_function(folder):
    script = """
import thoughtloom
from thoughtloom.testing import ScriptedLM

def close(prediction, gold):
    return prediction is not None and str(gold).lower() in prediction.lower()

lm = ScriptedLM(lambda r: "The answer is: Paris" if "France" in r.messages[-1].content else "The answer is: 6")
s = thoughtloom.evaluate("cot", examples=[{"question": "What is the capital of France?", "answer": "Paris"},
                                          ("How many legs has a spider?", "8")], metric=close, model=lm, out="o")
print(s["metrics"], s["n"])
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=folder, env=ENV,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "{'close': 0.5} 2"


@pytest.mark.parametrize("strategy", ["sculpt-mcts", "tot-bfs"])
def test_the_worked_search_task_runs_under_the_tree_searches(folder, model, strategy):
    r = cli("run", strategy, "--task", "subset_sum:SubsetSum", "3 8 12 5 -> 20", "--set", "rollouts=2"
            if strategy == "sculpt-mcts" else "beam=2", "--model", model, "--no-cache", cwd=folder)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^answer: 3 \+ 12 \+ 5$", r.stdout, re.M), r.stdout
    assert "check: the numbers add up to the target" in r.stdout


def test_a_wrong_answer_to_the_worked_task_says_so_and_exits_4(folder):
    with FakeOpenAIServer(lambda p: '{"score": 9, "feedback": "ok"}' if "JSON" in p else "Sum: 3 + 8") as s:
        r = cli("run", "tot-bfs", "--task", "subset_sum:SubsetSum", "3 8 12 5 -> 20", "--model",
                f"openai:m@{s.base_url}", "--no-cache", cwd=folder)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "check: not a solution" in r.stdout


def test_the_worked_search_task_evaluates_from_a_file_and_from_python(folder, model):
    r = cli("eval", "-S", "sculpt-mcts", "--task", "subset_sum:SubsetSum", "--data", "sums.txt", "--limit", "1",
            "--set", "rollouts=1", "--model", model, "--no-cache", "--out", "o", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert summary(folder, "o")["metrics"] == {"solved": 1.0}
    script = f"""
import thoughtloom
from subset_sum import SubsetSum
solution = thoughtloom.solve("sculpt-mcts", "3 8 12 5 -> 20", task=SubsetSum(), rollouts=1, model={model!r})
print(solution.answer)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=folder, env=ENV,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "3 + 12 + 5", r.stderr


def test_a_task_spec_that_is_no_task_is_refused(folder):
    r = cli("run", "cot", "--task", "my_metrics:close", "hi", cwd=folder)
    assert r.returncode == 2 and "is not a thoughtloom Task" in r.stderr


@pytest.mark.parametrize("metric,name", [("contains", "contains"), ("my_metrics:close", "close")])
def test_view_and_compare_read_the_metric_each_run_recorded(folder, model, metric, name):
    """Issue 39: an own-data run scored with anything but em failed in view and compare ("no metric 'em'
    in the record of example ..."): the report took the task's primary metric, not the run's."""
    for strategy, out in (("cot", "runs/cot"), ("io", "runs/io")):
        r = cli("eval", "-S", strategy, "--task", "qa", "--data", "my.jsonl", "--metric", metric,
                "--model", model, "--no-cache", "--out", out, cwd=folder)
        assert r.returncode == 0, r.stderr
    r = cli("compare", "runs/cot", "runs/io", "--at-calls", "1", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert f"{name} " in r.stdout, r.stdout
    r = cli("compare", "runs/cot", "runs/io", "--json", cwd=folder)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert [run["primary_metric"] for run in result["runs"]] == [name, name]
    assert list(result["runs"][0]["metrics"]) == [name]
    r = cli("view", "runs/cot", "runs/io", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert (folder / "runs" / "cot" / "report.html").is_file() and (folder / "runs" / "compare.html").is_file()


def test_a_report_reads_the_metric_of_evaluate_with_a_function(folder):
    """Issue 39: ``evaluate(..., metric=close)`` then the report and comparison of its folder."""
    script = """
import thoughtloom
from thoughtloom.testing import ScriptedLM
from thoughtloom.view import write_report
from thoughtloom.view.compare import compare_runs

def close(prediction, gold):
    return prediction is not None and str(gold).lower() in prediction.lower()

lm = ScriptedLM(lambda r: "The answer is: Paris" if "France" in r.messages[-1].content else "The answer is: 6")
qs = [{"question": "What is the capital of France?", "answer": "Paris"}, ("How many legs has a spider?", "8")]
for out in ("a", "b"):
    thoughtloom.evaluate("cot", examples=qs, metric=close, model=lm, out=out)
write_report("a")
c = compare_runs(["a", "b"])
print(c["runs"][0]["primary_metric"], c["runs"][0]["metrics"]["close"]["mean"])
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=folder, env=ENV,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "close 0.5"


@pytest.mark.parametrize("strategy", ["hgot", "retrieve-then-read"])
def test_a_retrieval_method_on_own_questions_says_it_runs_closed_book(folder, model, strategy):
    """Issue 39: `hgot -t qa` without --index ran closed book and nothing in the output said so."""
    r = cli("run", strategy, "What is the capital of France?", "--task", "qa", "--max-calls", "2",
            "--model", model, "--no-cache", cwd=folder)
    said = [line for line in r.stderr.splitlines() if "closed book" in line]
    assert len(said) == 1 and "give it passages with --index DIR" in said[0], r.stderr
    plain = cli("run", "cot", "What is the capital of France?", "--task", "qa", "--model", model,
                     "--no-cache", cwd=folder)
    assert "closed book" not in plain.stderr  # cot retrieves nothing


def test_decomp_on_own_questions_runs_the_qa_program_and_says_so(folder, model):
    """Issue 39: `eval -S decomp -t qa` was refused ('no default program for task qa')."""
    r = cli("eval", "-S", "decomp", "--task", "qa", "--data", "my.jsonl", "--metric", "contains",
            "--max-calls", "4", "--model", model, "--no-cache", "--out", "o", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert "decomp runs program qa_decomp on task qa" in r.stderr and "closed book" not in r.stderr
    assert summary(folder, "o")["n"] == 2


def test_run_interrupted_says_so(folder):
    """Issue 39 §10: `run` interrupted exited 130 and printed nothing."""
    import signal
    import time

    started = []

    def slow(prompt):
        started.append(1)
        time.sleep(30)
        return "The answer is: x"

    with FakeOpenAIServer(slow) as server:
        proc = subprocess.Popen([sys.executable, "-m", "thoughtloom", "run", "cot", "hi", "--model",
                                 f"openai:m@{server.base_url}", "--no-cache"], cwd=folder, env=ENV,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not started and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted: no answer" in stderr and "Traceback" not in stderr, stderr
