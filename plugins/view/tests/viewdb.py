"""Names in the viewer tests' results database (built by conftest.py)."""

from pathlib import Path

import bench_mock

FAILING = "llm/agent/plan_price_question/0"
"""A conversation of the LLM agent: a tool error, then a failed task; hand-added channel and goal events."""
SHIFTED_RUN = "shifts"
"""The oracle with one goal shift per conversation (GSRT), two trials."""
SLOPPY_RUN = "sloppy"
"""The sloppy agent (tests/sloppy.py) on the mock tasks renamed 1..12: failed checks with wrong arguments."""
MOCK_TASKS = Path(bench_mock.__file__).parent / "data" / "tasks.json"
ATTRIBUTED = "sloppy/agent/2/0"
"""A sloppy conversation given a failure attribution by hand."""
REVIEWED = "sloppy/agent/2/0"
"""A sloppy conversation with a review (findings) and a failed review."""
