"""One end-to-end DecomP run on the embedded model (SmolLM2-135M).

The small model rarely writes a well-formed program; the test checks that
whatever it writes, the run finishes with a known end state, every LLM call
is traced and malformed steps are counted, never raised.
"""

import pytest

from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem
from thoughtloom.lm import Metered, open_lm
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.tasks import get as get_task


@pytest.mark.integration
async def test_decomp_letter_cat_on_the_embedded_model(embedded_path, tmp_path):
    lm = open_lm("embedded", cache_path=tmp_path / "c.sqlite")
    trace = Trace()
    metered = Metered(lm, trace=trace)
    ctx = Context(lm=metered, task=get_task("letter_cat"), trace=trace)
    cls = get("decomp")
    try:
        result = await cls(cls.Config(max_steps=4, max_retries=1)).run(
            Problem("q", 'Take the letters at position 1 of the words in "Ada Lee" and '
                         'concatenate them using a space.'), ctx)
    finally:
        await lm.aclose()
    assert result.details["status"] in {"ok", "malformed", "step_limit"}
    assert len(trace.of_type("llm_call")) == metered.totals.calls >= 1
    assert result.details["format_errors"] == len(trace.of_type("malformed"))
    assert result.text.startswith("QC: Take the letters")
