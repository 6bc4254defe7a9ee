"""The embedded engine's admission bookkeeping (lm/llamacpp_slots.py), without a model."""

from dataclasses import dataclass

from thoughtloom.lm.llamacpp_slots import KVLedger, common_prefix, pick_next


@dataclass
class W:
    prompt: list[int]
    passed: int = 0


def test_common_prefix():
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([7, 8], [7, 8]) == 2


def test_the_request_sharing_the_longest_cached_prefix_goes_next_oldest_among_equals():
    waiting = [W([9, 9, 1]), W([1, 2, 3, 4]), W([1, 2, 3, 5])]
    assert pick_next(waiting, [[1, 2, 3, 7]], patience=8) == 1
    assert [w.passed for w in waiting] == [1, 0, 0]  # only the older one skipped counts a pass
    assert pick_next([W([5]), W([6])], [], patience=8) == 0  # nothing cached: arrival order


def test_two_preambles_interleaved_are_admitted_preamble_by_preamble():
    """A1 B1 A2 B2 A3 B3 into 3 slots: each admitted prompt is cached for the next pick."""
    a = [[1, 1, 1, 1, i] for i in range(3)]
    b = [[2, 2, 2, i] for i in range(3)]
    waiting = [W(p) for pair in zip(a, b) for p in pair]
    cached, order = [], []
    while waiting:
        w = waiting.pop(pick_next(waiting, cached, patience=8))
        cached.append(w.prompt)
        order.append(w.prompt)
    assert order == a + b


def test_a_request_passed_over_patience_times_goes_next():
    """A stream of requests over one preamble cannot starve a question over another."""
    cached = [[1, 1, 1]]
    starved = W([2, 2])
    waiting = [starved] + [W([1, 1, 1, i]) for i in range(10)]
    picks = []
    for _ in range(4):
        picks.append(waiting.pop(pick_next(waiting, cached, patience=3)))
    assert picks.index(starved) == 3 and starved.passed == 3


def test_a_copied_prefix_is_counted_once():
    ledger = KVLedger(capacity=1000)
    first = ledger.hold(extent=400)  # a 300-token prompt and 100 tokens of reply
    ledger.hold(extent=400, parent=first, shared=299)  # a sample of it: the prompt copied
    assert ledger.in_use() == 400 + 101
    assert ledger.fits(400, shared=299) and not ledger.fits(600)


def test_an_ended_sequence_keeps_counting_the_prefix_others_copied():
    """seq_rm untags the ended sequence's cells; those another sequence copied stay."""
    ledger = KVLedger(capacity=1000)
    first = ledger.hold(extent=400)
    second = ledger.hold(extent=350, parent=first, shared=250)
    ledger.end(first)
    assert ledger.in_use() == 250 + 100  # first's copied prefix, second's own cells
    ledger.end(second)
    assert ledger.in_use() == 0 and ledger.holdings == []


def test_a_chain_of_copies_is_released_when_its_last_holder_ends():
    ledger = KVLedger(capacity=10_000)
    live = ledger.hold(extent=500)
    resident = ledger.hold(extent=300, parent=live, shared=300)  # its prompt kept after it ends
    ledger.end(live)
    later = ledger.hold(extent=400, parent=resident, shared=200)
    assert ledger.in_use() == 300 + 0 + 200
    ledger.end(resident)
    assert ledger.in_use() == 200 + 200  # only the 200 cells "later" copied are still tagged
    ledger.end(later)
    assert ledger.in_use() == 0 and ledger.holdings == []
