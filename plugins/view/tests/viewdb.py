"""Names in the viewer tests' results database (built by conftest.py)."""

FAILING = "llm/agent/plan_price_question/0"
"""A conversation of the LLM agent: a tool error, then a failed task; hand-added channel and goal events."""
SHIFTED_RUN = "shifts"
"""The oracle with one goal shift per conversation (GSRT), two trials."""
