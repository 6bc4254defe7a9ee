"""Eval progress: counters move at every model call of a running question; the bar's ETA."""

import io

from rich.console import Console

import thoughtloom
from thoughtloom import strategies, tasks
from thoughtloom.core import Problem
from thoughtloom.core.progress import ProgressUpdate
from thoughtloom.eval import EvalResources, RunStats, evaluate
from thoughtloom.eval.rich_progress import RichProgress, RichStatus, clock
from thoughtloom.lm.meter import UsageTotals
from thoughtloom.strategies import make_config
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

GSM = tasks.get("gsm8k")


class Recorder:
    """An eval Progress that notes what it was told, and when."""

    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def start(self, stats):
        self.seen.append(("start", stats.done))

    def live(self, update, stats):
        self.seen.append(("live", update.question, update.kind, stats.usage.calls, stats.usage_so_far().calls,
                          stats.in_flight))

    def update(self, record, stats):
        self.seen.append(("done", record["id"], stats.usage.calls, stats.usage_so_far().calls))


async def test_counters_move_at_every_call_of_a_running_question(tmp_path):
    cls = strategies.get("cot-sc")
    strategy = cls(make_config(cls, {"n": "3"}))
    examples = [Example(Problem(f"q{i}", f"What is {i} plus 2?"), "4") for i in range(2)]
    recorder = Recorder()
    lm = ScriptedLM(lambda req: "The answer is: 4")
    summary = await evaluate(strategy, GSM, examples, EvalResources(lm), tmp_path, progress=recorder)
    seen = recorder.seen
    assert seen[:4] == [("start", 0), ("live", "q0", "start", 0, 0, 0), ("live", "q0", "phase", 0, 0, 0),
                        ("live", "q0", "sent", 0, 0, 3)]  # the three samples go out as one batch
    # mid-question: nothing finished yet (usage 0), while the live total climbs call by call
    assert [s[3:] for s in seen if s[:3] == ("live", "q0", "call")] == [(0, 1, 0), (0, 2, 0), (0, 3, 0)]
    first_done = seen.index(("done", "q0", 3, 3))
    assert [s[3:] for s in seen[first_done:] if s[:3] == ("live", "q1", "call")] == [(3, 4, 0), (3, 5, 0),
                                                                                    (3, 6, 0)]
    assert seen[-1] == ("done", "q1", 6, 6) and summary["this_run"]["calls"] == 6


def test_usage_so_far_and_eta():
    stats = RunStats(total=10, done=4, new=2, usage=UsageTotals(calls=5, cached_calls=1, prompt_tokens=100,
                                                                  completion_tokens=20))
    assert stats.eta_s(60.0) == 180.0  # 30 s a question, 6 to go
    stats.running["q7"] = ProgressUpdate("q7", "call", "rollout 2/8", calls=3, prompt_tokens=40, completion_tokens=9)
    so_far = stats.usage_so_far()
    assert (so_far.calls, so_far.cached_calls, so_far.total_tokens) == (8, 1, 169)
    assert stats.usage.calls == 5  # finished questions only
    assert RunStats(total=3).eta_s(10.0) is None  # nothing finished yet: no pace to go by


def test_the_eval_bar_shows_live_counters_the_running_phase_and_an_eta():
    bar = RichProgress("accuracy", console=Console(file=io.StringIO()))
    stats = RunStats(total=10, done=4, new=2, metric_sum=1.0, metric_n=2, usage=UsageTotals(calls=5))
    bar.start(stats)
    update = ProgressUpdate("q7", "sent", "rollout 2/8", calls=3, prompt_tokens=40, in_flight=2)
    stats.running["q7"] = update
    bar.live(update, stats)
    info = bar.info(stats, elapsed_s=60.0)
    assert info == "accuracy 0.500 · 8 calls, 2 in flight · 40 tok · q7: rollout 2/8 · ETA 0:03:00"
    del stats.running["q7"]  # finished: its phase is no longer shown
    assert "q7" not in bar.info(stats, elapsed_s=60.0)


def test_the_status_line_draws_on_a_terminal_and_stays_silent_elsewhere():
    terminal = io.StringIO()
    with RichStatus(Console(file=terminal, force_terminal=True, color_system=None, width=120)) as status:
        status(ProgressUpdate("q", "sent", "sampling 5", in_flight=5))
        status(ProgressUpdate("q", "call", "sampling 5", calls=2, prompt_tokens=300, completion_tokens=34))
    drawn = terminal.getvalue()
    assert "starting" in drawn and "sampling 5 · 2 calls · 334 tok" in drawn
    assert drawn.endswith("\x1b[2K")  # transient: the line is erased when the question ends
    piped = io.StringIO()
    with RichStatus(Console(file=piped, force_terminal=False)) as status:
        status(ProgressUpdate("q", "call", "sampling 5", calls=2))
    assert piped.getvalue() == ""


def test_clock():
    assert clock(0) == "0:00:00" and clock(3725.4) == "1:02:05"


def test_solve_and_evaluate_take_progress(tmp_path):
    updates = []
    solution = thoughtloom.solve("cot-sc", "2 + 2?", task="gsm8k", n=2, progress=updates.append,
                                 model=ScriptedLM(lambda req: "The answer is: 4"))
    assert solution.answer == "4"
    assert [(u.kind, u.phase, u.calls) for u in updates] == [
        ("start", "", 0), ("phase", "sampling 2", 0), ("sent", "sampling 2", 0), ("call", "sampling 2", 1),
        ("call", "sampling 2", 2)]

    class RecordsOnly:  # an eval display without live(): it hears of finished questions alone
        def __init__(self):
            self.done = []

        def start(self, stats):
            pass

        def update(self, record, stats):
            self.done.append(record["id"])

    shown = RecordsOnly()
    thoughtloom.evaluate("cot", "gsm8k", limit=2, out=tmp_path / "o", progress=shown,
                         model=ScriptedLM(lambda req: "The answer is: 4"))
    assert len(shown.done) == 2
