"""DecomP programs as nested steps: each step's handler (marked symbolic,
prompt, retrieval or program), its question and inputs, its answer and
cost; the sub-programs a step ran indented beneath it."""

from __future__ import annotations

from typing import Any

from .markup import Raw, answer_text, clip, h, table, text_block
from .programs import ProgramRun, ProgramStep

#: A step's sub-programs are shown open when it ran at most this many.
OPEN_UP_TO = 4
KIND_NAMES = {"symbolic": "symbolic", "prompt": "prompt", "retrieval": "retrieval", "program": "sub-program"}


def programs_section(runs: list[ProgramRun]) -> Raw:
    legend = h("p", {"class": "legend"}, "Each line is one step of the program: its handler, what it asked, what it "
                                         "answered. ", [h("span", {"class": f"badge {k}"}, v) for k, v in
                                                        KIND_NAMES.items()],
               " mark who answered. Sub-programs are indented under the step that ran them.")
    return h("section", {"class": "programs"}, h("h2", None, "Program"), legend, [_run(r, open_=True) for r in runs])


def _run(run: ProgramRun, open_: bool = False) -> Raw:
    status = run.status or "unfinished"
    badge = "correct" if status == "ok" else "error"
    summary = [h("b", None, run.program or "program"), f" · run {run.id} · ",
               h("span", {"class": f"badge {badge}"}, status), f" · {len(run.steps)} steps"]
    if run.question is not None:
        summary += [" · ", h("span", {"class": "muted"}, clip(answer_text(run.question), 80))]
    body: list[Any] = [_step(s) for s in run.steps]
    if run.reason:
        body.append(h("p", {"class": "note"}, f"stopped at {run.reason}"))
    if run.malformed:
        body.append(h("details", None, h("summary", None, f"{len(run.malformed)} unreadable decomposer replies"),
                      table(["attempt", "reason", "reply"], [[str(m.get("attempt", "")), str(m.get("reason", "")),
                                                               text_block(m.get("raw", ""))] for m in run.malformed])))
    return h("details", {"class": "run", "id": f"pr-{run.id}", "open": open_}, h("summary", None, summary), body)


def _step(step: ProgramStep) -> Raw:
    kind = step.kind or "handler"
    line = [h("b", None, f"{step.number}. "), h("span", {"class": f"badge {step.kind}"}, KIND_NAMES.get(kind, kind)),
            " ", h("code", None, step.handler),
            h("span", {"class": "muted"}, f" [{step.operator}]") if step.operator and step.operator != "select" else "",
            " ", step.question, " → ", h("b", None, clip(answer_text(step.answer), 160))]
    cost = f"{step.calls} call{'' if step.calls == 1 else 's'}, {step.tokens} tokens" if step.calls else "no model call"
    extra: list[Any] = [h("span", {"class": "muted"}, f" ({cost})")]
    if step.error:
        extra.append(h("span", {"class": "badge error"}, f"error: {clip(step.error, 120)}"))
    inputs = ""
    if len(step.inputs) > 1 or (step.inputs and step.inputs[0] != step.question):
        label = "the input, expanded" if len(step.inputs) == 1 else f"{len(step.inputs)} inputs (one per item)"
        inputs = h("details", None, h("summary", None, label),
                   h("ol", None, [h("li", None, answer_text(i)) for i in step.inputs]))
    few = len(step.children) <= OPEN_UP_TO
    children = h("div", {"class": "indent"}, [_run(c, open_=few) for c in step.children]) if step.children else ""
    return h("div", {"class": "step"}, h("div", None, line, extra), inputs, children)
