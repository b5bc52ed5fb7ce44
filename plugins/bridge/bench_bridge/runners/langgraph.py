"""The LangGraph runner: one user message through a compiled graph whose state has `messages`.

The factory returns what `langchain.agents.create_agent` (or the older `langgraph.prebuilt.create_react_agent`)
builds, or any compiled graph with a `messages` channel. The history the runner keeps is the graph's own
`messages` list. Nothing here imports LangGraph until a turn runs.
"""

from __future__ import annotations

import functools
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

_GRAPH_CLASSES = frozenset({"Pregel", "CompiledStateGraph"})


class LangGraphRunner:
    """Runs LangGraph agents: the graph keeps its own tool loop, this class feeds it one user message at a time."""

    name = "langgraph"
    distribution = "langgraph"

    def matches(self, agent: object) -> bool:
        """True for a compiled LangGraph graph with a `messages` channel; decided without importing LangGraph."""
        if "langgraph" not in sys.modules:
            return False
        compiled = any(cls.__name__ in _GRAPH_CLASSES and cls.__module__.startswith("langgraph.") for cls in type(agent).__mro__)
        return compiled and "messages" in (getattr(agent, "channels", None) or {})

    def opening(self, messages: list[dict[str, Any]]) -> list[Any]:
        """The opening as LangChain messages (`AIMessage` for the greeting), the start of the graph's `messages`."""
        from langchain_core.messages import convert_to_messages

        return list(convert_to_messages(messages))

    async def turn(self, agent: object, state: Any, message: str) -> tuple[str, Any]:
        """Run the graph on the history plus `message`; returns the last AI text and the graph's new `messages`."""
        from langchain_core.messages import HumanMessage

        graph: Any = agent
        _report_tool_errors(graph)
        history = list(state or [])
        result = await graph.ainvoke({"messages": [*history, HumanMessage(message)]}, config=_config(graph))
        messages = list(result["messages"])
        return _final_text(messages), messages


def _config(graph: Any) -> dict[str, Any]:
    # A graph compiled with a checkpointer refuses to run without a thread; a fresh one per turn keeps
    # the history this runner passes in the only history the graph sees.
    if getattr(graph, "checkpointer", None):
        return {"configurable": {"thread_id": f"bench-{uuid.uuid4().hex}"}}
    return {}


def _final_text(messages: list[Any]) -> str:
    """The text of the last AI message after the last human one ("" when the graph ended without answering)."""
    for message in reversed(messages):
        if message.type == "human":
            return ""
        if message.type == "ai":
            return str(message.text)
    return ""


def _report_tool_errors(graph: Any) -> None:
    """Make the graph's async tools hand their exceptions to the model instead of ending the run.

    LangGraph's ToolNode re-raises any exception from a tool by default, which would end the turn; a
    `ToolException` with `handle_tool_error` set becomes an error ToolMessage the model reads and the loop goes
    on. Tools whose author chose a `handle_tool_error` are left as they are; wrapping is idempotent.
    """
    from langgraph.prebuilt import ToolNode

    graphs = [graph, *(sub for _, sub in graph.get_subgraphs(recurse=True))]
    for each in graphs:
        for node in getattr(each, "nodes", {}).values():
            bound = getattr(node, "bound", None)
            if isinstance(bound, ToolNode):
                for tool in bound.tools_by_name.values():
                    _report_errors_of(tool)


def _report_errors_of(tool: Any) -> None:
    from langchain_core.tools import StructuredTool

    if isinstance(tool, StructuredTool) and tool.coroutine is not None and not tool.handle_tool_error:
        tool.coroutine = _raising_tool_exceptions(tool.coroutine)
        tool.handle_tool_error = True


def _raising_tool_exceptions(coroutine: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    from langchain_core.tools import ToolException
    from langgraph.errors import GraphBubbleUp

    @functools.wraps(coroutine)  # keeps the signature LangChain inspects for `config` and `callbacks`
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await coroutine(*args, **kwargs)
        except (GraphBubbleUp, ToolException):
            raise  # interrupts are control flow; a ToolException is already what LangChain reports
        except Exception as exc:
            raise ToolException(str(exc) or type(exc).__name__) from exc

    return call
