"""Reading a FEVER verdict (SUPPORTS / REFUTES / NOT ENOUGH INFO) from a model's words.

Every method's answer goes through :func:`read_fever_label` (via ``FEVER.extract_answer``):
the baselines' samples, self-ask's and ReAct's final answers and HGOT's thoughts alike,
so two arms of a comparison are read by one reader.

The reading, on the text after the last answer marker (else the whole reply):

1. A reply naming all three labels is an echo of the options, not a verdict: None.
2. *Not-enough-information wording* ("not enough info", "insufficient evidence",
   "cannot be verified", "neither supports nor refutes", "no evidence", "NEI", ...)
   is a NOT ENOUGH INFO verdict, and the words of its clause after it are its object
   ("not enough info to support or refute" names no other verdict).
3. *Evidence words* (support, confirm / refute, contradict, disprove) give SUPPORTS /
   REFUTES; negated ("is not supported", "does not contradict", "unsupported") they say
   the passages do not settle the claim: NOT ENOUGH INFO. Our decision: absence of
   support is not a refutation, as FEVER separates REFUTES from NOT ENOUGH INFO.
4. *Truth words* (true, correct, accurate / false, incorrect, wrong) give SUPPORTS /
   REFUTES; negated they flip ("the claim is not true" -> REFUTES).
5. The last verdict named wins ("passage 1 supports it, but passage 2 refutes it, so the
   claim is refuted" -> REFUTES). A negator counts when it is at most three words before
   the verdict word in the same clause (clauses end at . ; : ! ? , and at but / however).
"""

from __future__ import annotations

import bisect
import re

from ..core.bounded import clip
from .answers import marked_answer

SUPPORTS, REFUTES, NEI = "SUPPORTS", "REFUTES", "NOT ENOUGH INFO"

_NEI = re.compile(
    r"\bNOT\s+ENOUGH\s+(?:INFO\w*|EVIDENCE|DATA|CONTEXT|DETAILS?)\b|\bNEI\b|\bNOT[\s_-]+ENOUGH[\s_-]+INFO\b"
    r"|\b(?:INSUFFICIENT|INADEQUATE|LACK\s+OF|NO|NOT\s+ANY|NOT\s+SUFFICIENT)\s+(?:\w+\s+)?(?:INFO\w*|EVIDENCE)\b"
    r"|\b(?:CANNOT|CAN\s*NOT|CAN'T|COULD\s+NOT|COULDN'T|UNABLE\s+TO)\s+(?:BE\s+)?(?:VERIF\w*|DETERMIN\w*|CONFIRM\w*|TELL|DECIDE\w*|ASCERTAIN\w*|SAY)\b"
    r"|\bUNVERIFI\w*|\bNOT\s+VERIFIABLE\b|\bINCONCLUSIVE\b|\bUNDETERMIN\w*|\bUNKNOWN\b|\bUNCLEAR\b"
    r"|\bNEITHER\s+(?:\w+\s+)?(?:SUPPORT\w*|CONFIRM\w*|PROVE\w*)\s+NOR\s+(?:\w+\s+)?(?:REFUTE\w*|CONTRADICT\w*|DENY\w*|DISPROVE\w*)")
_EVIDENCE = re.compile(r"\b(?:(SUPPORT(?:S|ED|ING)?|CONFIRM(?:S|ED|ING)?|CORROBORAT\w*|VERIFIE[SD])"
                       r"|(REFUTE[SD]?|REFUTING|CONTRADICT\w*|DISPROV\w*|DEBUNK\w*))\b")
_UNSUPPORTED = re.compile(r"\b(?:UNSUPPORTED|UNCONFIRMED|UNCORROBORATED|UNREFUTED)\b")
_TRUTH = re.compile(r"\b(?:(TRUE|CORRECT|ACCURATE|VALID)|(FALSE|INCORRECT|INACCURATE|WRONG|UNTRUE|INVALID))\b")
_NEGATOR = re.compile(r"\b(?:NOT|NO|NEVER|NOR|NEITHER|NOTHING|NONE|CANNOT|WITHOUT|LACKS?|FAILS?\s+TO)\b|N'T\b")
_CLAUSE_END = re.compile(r"[.;:!?,\n]|\bBUT\b|\bHOWEVER\b|\bALTHOUGH\b|\bWHEREAS\b")
_OPTIONS = (re.compile(r"\bSUPPORTS\b"), re.compile(r"\bREFUTES\b"), re.compile(r"\bNOT\s+ENOUGH\s+INFO\b"))


def _negated(text: str, start: int, ends: list[int]) -> bool:
    """A negator at most three words before ``start``, in the same clause (``ends``: the
    sorted end offsets of the clause breaks)."""
    i = bisect.bisect_right(ends, start)
    cut = ends[i - 1] if i else 0
    words = text[max(cut, start - 80):start].split()[-4:]
    return bool(_NEGATOR.search(" ".join(words)))


def read_fever_label(text: str) -> str | None:
    """The FEVER label ``text`` states, or None when it states none (see the module doc)."""
    span = marked_answer(text) or clip(text)
    s = " ".join(span.upper().replace("\u2019", "'").split())
    if all(p.search(s) for p in _OPTIONS):
        return None
    breaks = [(m.start(), m.end()) for m in _CLAUSE_END.finditer(s)]
    starts, ends = [a for a, _ in breaks], [b for _, b in breaks]
    hits: list[tuple[int, str]] = []
    masked = [False] * (len(s) + 1)  # inside a not-enough-information clause
    for m in _NEI.finditer(s):
        hits.append((m.start(), NEI))
        i = bisect.bisect_left(starts, m.end())
        stop = starts[i] if i < len(starts) else len(s)
        masked[m.start():stop] = [True] * (stop - m.start())

    def free(pos: int) -> bool:
        return not masked[pos]

    for m in _UNSUPPORTED.finditer(s):
        if free(m.start()):
            hits.append((m.start(), NEI))
    for m in _EVIDENCE.finditer(s):
        if free(m.start()):
            positive = SUPPORTS if m.group(1) else REFUTES
            hits.append((m.start(), NEI if _negated(s, m.start(), ends) else positive))
    for m in _TRUTH.finditer(s):
        if free(m.start()):
            says_true = bool(m.group(1)) != _negated(s, m.start(), ends)
            hits.append((m.start(), SUPPORTS if says_true else REFUTES))
    return max(hits)[1] if hits else None
