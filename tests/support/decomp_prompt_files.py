"""Readers of the shipped DecomP prompt files, for the tests that check them.

``worked_examples`` reads a decomposer prompt's worked examples, ``qa_pairs`` a
handler prompt's examples, ``symbolic_answer`` what a handler's exact Python
twin answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from thoughtloom import prompts
from thoughtloom.strategies.decomp.functions import symbolic_function
from thoughtloom.strategies.decomp.handlers import split_header


@dataclass
class Worked:
    question: str
    lines: list[str]  # the QS lines, without "QS: "
    answers: list[str]  # the A: lines, without "A: "


def worked_examples(name: str) -> list[Worked]:
    text = split_header(prompts.read(f"decomp/decomposers/{name}"))[1]
    out = []
    for block in text.split("\n\n"):
        rows = block.strip().splitlines()
        if not rows or not rows[0].startswith("QC: "):
            continue
        body = rows[1:]
        assert body[-1] == "QS: [EOQ]", f"{name}: {rows[0]} does not end with QS: [EOQ]"
        steps, answers = body[:-1:2], body[1:-1:2]
        assert all(s.startswith("QS: ") for s in steps) and all(a.startswith("A: ") for a in answers), rows[0]
        out.append(Worked(rows[0][4:], [s[4:] for s in steps], [a[3:] for a in answers]))
    assert out, f"{name} has no worked example"
    return out


def qa_pairs(name: str) -> list[tuple[str, str, str]]:
    """(facts, question, answer) of each example of a handler prompt (facts '' where it has none)."""
    text = split_header(prompts.read(f"decomp/handlers/{name}"))[1]
    out, facts = [], ""
    for line in text.splitlines():
        if line.startswith("Facts: "):
            facts = line[7:]
        elif line.startswith("Q: "):
            question = line[3:]
        elif line.startswith("A: ") and "$question" not in question:
            out.append((facts, question, line[3:]))
    return out


def symbolic_answer(name, question):
    fn = symbolic_function(name)
    assert fn is not None, f"no symbolic twin for {name}"
    return fn(question)


def arm_prompts(program: str) -> dict[str, str]:
    """Every prompt file a program's model may read, by relative path -> its demonstrations (the
    text under the header, the template lines ``$question``/``$context`` left out): its
    decomposer's, every handler's it may call (the file the program names for it,
    ``Program.prompt_files``), nested programs' included, and for a fixed program every handler
    its steps name."""
    import re

    from thoughtloom.strategies.decomp.catalogue import PROGRAMS, get_program

    found: dict[str, str] = {}
    todo, seen = [program], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        p = get_program(name)
        handlers = list(p.handlers)
        if p.decomposer:
            found[f"decomposers/{p.decomposer}"] = _demos(prompts.read(f"decomp/decomposers/{p.decomposer}"))
        else:
            handlers += [m.group(1) for step in p.reference("") if (m := re.match(r"\((\w+)\)", step))]
        for h in handlers:
            if h in PROGRAMS:
                todo.append(h)
            elif (text := prompts.read(f"decomp/handlers/{p.prompt_file(h)}")) is not None:
                found[f"handlers/{p.prompt_file(h)}"] = _demos(text)
    return found


def _demos(text: str) -> str:
    body = split_header(text)[1]
    return "\n".join(line for line in body.splitlines() if "$question" not in line and "$context" not in line)


def worked_hops(decomposer: str) -> list[tuple[str, str]]:
    """(handler, sub-question) of every step input of a decomposer's worked examples, each ``#k``
    replaced by each item of the example's own answer k (a foreach asks once per item), in order,
    without repeats: the single-hop questions the examples send their handlers."""
    import re

    from thoughtloom.strategies.decomp.language import parse_value

    out: list[tuple[str, str]] = []
    for example in worked_examples(decomposer):
        for line in example.lines:
            handler, question = re.match(r'\((\w+)\)(?: \[\w+\])? "(.*)"$', line).groups()
            ref = re.search(r"#(\d+)", question)
            items = parse_value(example.answers[int(ref.group(1)) - 1]) if ref else [None]
            for item in items:
                hop = (handler, question.replace(ref.group(0), item) if ref else question)
                if hop not in out:
                    out.append(hop)
    return out
