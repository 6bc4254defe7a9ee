"""A reader of CommaQA-E fact sets and of the single-hop questions our prompts ask, for tests.

It answers a sub-question from the facts alone, so a prompt's worked example
can be checked against its own facts and a decomposer example's ``#k`` against
the knowledge base the example describes; ``gold_program`` and ``oracle`` are a
model that is always right, for runs whose prompts must be as long as a right
run's. Test-only: no strategy uses it.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

#: fact sentence -> relation; the relation holds (subject, object) pairs
_FACTS = [
    (r"movie: (.+?) ; (?:directed by|director): (.+)", "directed_by"),
    (r"movie: (.+?) ; (?:award|awarded): (.+)", "movie_award"),
    (r"movie: (.+?) ; (?:release year|year): (.+)", "year"),
    (r"movie: (.+?) ; (?:writer|written by): (.+)", "written_by"),
    (r"award: (.+?) ; winner: (.+)", "award_winner"),
    (r"(.+?) was awarded to (.+)", "award_winner"),
    (r"person: (.+?) ; award: (.+)", "person_award"),
    (r"(.+?) won the (.+) award", "person_award"),
    (r"(.+?) (?:acted in|was an actor in) the movie (.+)", "acted"),
    (r"(.+?) was born in (?:the year )?(\d{4})", "born"),
    (r"(.+?) (?:is from the country of|grew up in the nation of) (.+)", "country"),
    (r"(.+?) (?:was one of the producers of the movie (.+)|produced the movie (.+?) with others)", "produced"),
    (r"(.+?) (?:wrote for the movie (.+)|was one of the writers for the movie (.+))", "wrote"),
]


def read_kb(facts: str) -> dict[str, set[tuple[str, str]]]:
    kb: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for sentence in filter(None, (s.strip() for s in facts.split(". "))):
        sentence = sentence.rstrip(".")
        for pattern, rel in _FACTS:
            m = re.fullmatch(pattern, sentence)
            if m:
                subj, *rest = [g for g in m.groups() if g is not None]
                kb[rel].add((subj, rest[0]))
                break
        else:
            raise ValueError(f"unread fact {sentence!r}")
    return kb


def _subjects(kb, rel, obj):
    return sorted(s for s, o in kb[rel] if o == obj)


def _objects(kb, rel, subj):
    return sorted(o for s, o in kb[rel] if s == subj)


#: the single-hop questions our CommaQA prompts ask -> how the facts answer them
_QUESTIONS = [
    (r"Who were born in the year (\d{4})\?", lambda kb, x: _subjects(kb, "born", x)),
    (r"Who is from the country (.+)\?", lambda kb, x: _subjects(kb, "country", x)),
    (r"For which movies was (.+) the producer\?", lambda kb, x: _objects(kb, "produced", x)),
    (r"Which movies did (.+) direct\?", lambda kb, x: _subjects(kb, "directed_by", x)),
    (r"Which movies did (.+) act in\?", lambda kb, x: _objects(kb, "acted", x)),
    (r"Which movies did (.+) write\?",
     lambda kb, x: sorted(set(_objects(kb, "wrote", x)) | set(_subjects(kb, "written_by", x)))),
    (r"Who acted in the movie (.+)\?", lambda kb, x: _subjects(kb, "acted", x)),
    (r"Who directed the movie (.+)\?", lambda kb, x: _objects(kb, "directed_by", x)),
    (r"Which awards were given to (.+)\?",
     lambda kb, x: sorted(set(_objects(kb, "movie_award", x)) | set(_objects(kb, "person_award", x))
                          | set(_subjects(kb, "award_winner", x)))),
    (r"Who won the award (.+)\?",
     lambda kb, x: sorted(set(_objects(kb, "award_winner", x)) | set(_subjects(kb, "person_award", x)))),
    (r"Which movies won the award (.+)\?", lambda kb, x: _subjects(kb, "movie_award", x)),
]


def answer(kb, question: str) -> list[str]:
    for pattern, fn in _QUESTIONS:
        m = re.fullmatch(pattern, question.strip())
        if m:
            return fn(kb, m.group(1))
    raise ValueError(f"not a question our prompts ask: {question!r}")


#: CommaQA-E's twelve question templates (both test splits) -> the single-hop chain that answers them
CHAINS = [
    (r"What movies have people from the country (.+) acted in\?", ["Who is from the country {}?", "Which movies did {} act in?"]),
    (r"What awards have movies produced by people born in (\d+) won\?",
     ["Who were born in the year {}?", "For which movies was {} the producer?", "Which awards were given to {}?"]),
    (r"What movies have the directors from (.+) directed\?", ["Who is from the country {}?", "Which movies did {} direct?"]),
    (r"What awards did the movies directed by the (.+) winners receive\?",
     ["Who won the award {}?", "Which movies did {} direct?", "Which awards were given to {}?"]),
    (r"What awards have movies written by people born in (\d+) won\?",
     ["Who were born in the year {}?", "Which movies did {} write?", "Which awards were given to {}?"]),
    (r"What awards have the actors of the (.+) winning movies received\?",
     ["Which movies won the award {}?", "Who acted in the movie {}?", "Which awards were given to {}?"]),
    (r"What movies have the people from (.+) written\?", ["Who is from the country {}?", "Which movies did {} write?"]),
    (r"What awards have movies produced by people from (.+) won\?",
     ["Who is from the country {}?", "For which movies was {} the producer?", "Which awards were given to {}?"]),
    (r"What awards have movies written by people from (.+) won\?",
     ["Who is from the country {}?", "Which movies did {} write?", "Which awards were given to {}?"]),
    (r"What movies have people born in (\d+) acted in\?", ["Who were born in the year {}?", "Which movies did {} act in?"]),
    (r"What awards have the directors of the (.+) winning movies received\?",
     ["Which movies won the award {}?", "Who directed the movie {}?", "Which awards were given to {}?"]),
    (r"What awards have movies directed by people born in (\d+) won\?",
     ["Who were born in the year {}?", "Which movies did {} direct?", "Which awards were given to {}?"]),
]


def solve(kb, question: str) -> list[str]:
    """The answer to a CommaQA-E question over ``kb``, hop by hop (each hop over every item)."""
    for pattern, hops in CHAINS:
        m = re.fullmatch(pattern, question.strip())
        if m:
            current = [m.group(1)]
            for hop in hops:
                current = list(dict.fromkeys(a for x in current for a in answer(kb, hop.format(x))))
            return current
    raise ValueError(f"not a CommaQA-E question: {question!r}")


#: The knowledge base the CommaQA decomposer examples describe (the decomposer never sees it).
DECOMPOSER_KB = read_kb(
    "movie: Tovtovbel ; director: Novkel. movie: Zelpla ; director: Gorselyor. "
    "movie: Pelithrast ; directed by: Wenumb. movie: Corpla ; director: Wenumb. "
    "movie: Tovtovbel ; award: Quinumb. movie: Zelpla ; award: Quinumb. "
    "movie: Pelithrast ; awarded: Raststriith. movie: Corpla ; award: Quinumb. "
    "Novkel won the Ithumb award. Ithumb was awarded to Gorselyor. "
    "movie: Tovtovbel ; release year: 2000. movie: Zelpla ; release year: 1976. "
    "movie: Pelithrast ; release year: 2018. movie: Corpla ; year: 2017. "
    "Wenumb acted in the movie Tovtovbel. Gorselyor was an actor in the movie Tovtovbel. "
    "Wenumb acted in the movie Zelpla. Gorselyor was an actor in the movie Zelpla. "
    "Novkel was an actor in the movie Pelithrast. Gorselyor acted in the movie Pelithrast. "
    "Wenumb was an actor in the movie Corpla. Gorselyor acted in the movie Corpla. "
    "Wenumb was born in 1944. Gorselyor was born in the year 1944. Novkel was born in 1985. "
    "Wenumb is from the country of Corstri. Gorselyor is from the country of Corstri. "
    "Novkel grew up in the nation of Lumnov. "
    "Wenumb was one of the producers of the movie Tovtovbel. "
    "Novkel was one of the producers of the movie Tovtovbel. "
    "Wenumb produced the movie Zelpla with others. "
    "Gorselyor produced the movie Zelpla with others. "
    "Gorselyor produced the movie Pelithrast with others. "
    "Novkel was one of the producers of the movie Pelithrast. "
    "Gorselyor produced the movie Corpla with others. "
    "Wenumb was one of the producers of the movie Corpla. "
    "Gorselyor was one of the writers for the movie Tovtovbel. "
    "Novkel was one of the writers for the movie Zelpla. movie: Zelpla ; written by: Wenumb. "
    "movie: Pelithrast ; writer: Wenumb. movie: Corpla ; written by: Wenumb. "
    "movie: Corpla ; written by: Novkel."
)


#: which fine reader answers each single-hop question (the decomposer's handler names)
FINE_READER = [(r"Who (were born|is from)", "simp_qa"), (r"Which awards|Who won|Which movies won", "aw_qa"),
               (r".", "pos_qa")]


def gold_program(question: str, coarse: bool = False) -> list[str]:
    """The QS lines a decomposer that is right writes for a CommaQA-E question: one line per hop,
    each hop after the first over the answer before it (as the worked examples write them)."""
    for pattern, hops in CHAINS:
        m = re.fullmatch(pattern, question.strip())
        if m:
            lines = []
            for k, hop in enumerate(hops):
                reader = "qa" if coarse else next(h for p, h in FINE_READER if re.match(p, hop))
                if k == 0:
                    lines.append(f'({reader}) "{hop.format(m.group(1))}"')
                else:
                    lines.append(f'({reader}) [project_values_flat_unique] "{hop.format(f"#{k}")}"')
            return lines
    raise ValueError(f"not a CommaQA-E question: {question!r}")


def oracle(prompt: str, next_step: str) -> str:
    """What a model that is always right replies to a CommaQA prompt of ours: the decomposer's next
    line (``next_step`` marks a decomposer prompt), a reader's JSON list, or a CoT chain that states
    each hop's answers and ends "So the answer is: [...]"."""
    if next_step in prompt:
        program = prompt.split(next_step, 1)[1]
        question = program.split("QC: ", 1)[1].split("\n", 1)[0]
        lines = gold_program(question, coarse="(qa)" in prompt)
        done = program.count("\nA: ")
        return lines[done] if done < len(lines) else "[EOQ]"
    facts, rest = prompt.rsplit("\nFacts: ", 1)[1].split("\nQ: ", 1)
    question = rest.split("\n", 1)[0]
    kb = read_kb(facts)
    if "So the answer is" not in prompt:
        return json.dumps(answer(kb, question))
    pattern, hops = next((p, h) for p, h in CHAINS if re.fullmatch(p, question))
    current, said = [re.fullmatch(pattern, question).group(1)], []
    for hop in hops:  # each hop's question as its label: longer than the labels the prompt teaches
        current = list(dict.fromkeys(a for x in current for a in answer(kb, hop.format(x))))
        said.append(f"{hop.format('them')[:-1]}: {', '.join(current) or 'none'}.")
    return " ".join(said) + f" So the answer is: {json.dumps(current)}"
