"""The `framework` agent: an agent object from another framework, run turn by turn with its own loop.

bench's contract asks an agent to *return* tool calls, while a framework *runs* them in its own loop.
The session inverts that: the framework's turn runs in a task; whenever it invokes a tool, `respond`
returns the calls its model proposed (the tool side, tools.py), bench executes them, and the next
`respond` resolves the awaiting invocations with the results. The framework's model calls go to the
bridge's endpoint (endpoint.py), which sends them through the run's model access.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import socket
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    BudgetExceededError,
    ChatRequest,
    ChatResponse,
    ConfigError,
    ConversationSetup,
    Message,
    Mode,
    ModelError,
    ModelUnavailableError,
    ParticipantError,
    Profile,
    ToolCall,
    ToolMessage,
    UserMessage,
    agent_instructions,
    done_tool_name,
)

from .context import AGENT, Factory, FactoryContext, factory_spec, load_factory, probe_context
from .endpoint import Endpoint
from .net import loopback_socket
from .runners import (
    Runner,
    framework_version,
    opening_state,
    reset_current_context,
    runner_for,
    set_current_context,
)
from .tools import CallsTurn, Failure, StopTurn, ToolExchange, tool_functions
from .wire import opening_messages

INFRASTRUCTURE = (BudgetExceededError, ModelUnavailableError)
"""Failures that are not the agent's: they end the conversation as an infrastructure error, re-run on resume."""
DEFAULT_WAIT_S = 600.0
"""How long the bridge waits for the framework's next step (a tool call or its answer), and a tool for its result."""
CLOSE_WAIT_S = 5.0


@attrs.define
class BridgeSession(AgentSession):
    """One conversation with a framework's agent object."""

    setup: ConversationSetup
    runner: Runner
    agent: Any
    context: FactoryContext
    exchange: ToolExchange
    endpoint: Endpoint
    model: str
    wait_s: float = DEFAULT_WAIT_S
    state: Any = None
    task: asyncio.Task[tuple[str, Any]] | None = None
    failure: BaseException | None = None
    """An infrastructure failure the endpoint met: every later model call gets it at once, and `respond` raises it."""
    model_error: ModelError | None = None
    """The last model error of the running turn (what a framework failure is recorded as, when there is one)."""
    responses: list[ChatResponse] = attrs.field(factory=list)
    """Model replies since the agent last spoke (their usage and reasoning go on its next message)."""
    mcp_socket: socket.socket | None = None
    """Bound at start (so the factory knows `mcp_url`); the MCP server takes it before the first turn."""
    mcp: contextlib.AsyncExitStack | None = None
    opened: bool = False
    """Whether the framework's history was started from the conversation's opening."""

    # ----------------------------------------------------------------------- the model side (called by the endpoint)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One of the framework's model calls, through the run's model access as the agent role."""
        if self.failure is not None:
            raise self.failure
        if request.seed is None:
            request = attrs.evolve(request, seed=self.setup.seed)
        try:
            response = await self.setup.models.complete("agent", request)
        except INFRASTRUCTURE as exc:
            self.failure = exc
            self.exchange.fail(exc)
            raise
        except ModelError as exc:
            self.model_error = exc
            raise
        calls = [c if c.id else attrs.evolve(c, id=self.exchange.call_id()) for c in response.tool_calls]
        response = attrs.evolve(response, tool_calls=calls)
        self.responses.append(response)
        self.exchange.proposed(calls)
        return response

    # ----------------------------------------------------------------------- the turn side (called by the orchestrator)

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """Start a framework turn on what the user said, or hand it tool results; return its next step."""
        if self.failure is not None:
            raise self.failure
        if self.task is None:
            self.model_error = None
            await self._serve_mcp()
            text = self._user_text(incoming)
            if not self.opened:  # the framework's history starts with the conversation's opening (the greeting)
                self.state, self.opened = opening_state(self.runner, self.context.history), True
            token = set_current_context(self.context)  # the task copies the context: the runner sees this conversation's
            try:
                self.task = asyncio.create_task(self.runner.turn(self.agent, self.state, text))
            finally:
                reset_current_context(token)
        else:
            self.exchange.deliver([m for m in incoming if isinstance(m, ToolMessage) and m.requestor == "assistant"])
        return await self._next_step()

    async def _serve_mcp(self) -> None:
        """Serve the conversation's tools over MCP at `context.mcp_url` from the first turn on (when asked)."""
        if self.mcp_socket is None or self.mcp is not None:
            return
        from .mcp_server import serve_tools

        self.mcp = contextlib.AsyncExitStack()
        await self.mcp.enter_async_context(serve_tools(self.context.tools, name=self.setup.domain, sock=self.mcp_socket))

    def _user_text(self, incoming: Sequence[Message]) -> str:
        """What the framework hears: the user's words since the agent last spoke (the ticket, in the no-user mode)."""
        said = [m.content for m in incoming if isinstance(m, UserMessage) and m.has_text() and m.content]
        if said:
            return "\n\n".join(said)
        if self.setup.mode is Mode.NO_USER and self.setup.task.ticket:
            return self.setup.task.ticket
        raise ParticipantError("the bridge has no user message to start the framework's turn with")

    async def _next_step(self) -> AssistantMessage:
        assert self.task is not None
        step = asyncio.ensure_future(self.exchange.steps.get())
        try:
            done, _ = await asyncio.wait({self.task, step}, timeout=self.wait_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not step.done():
                step.cancel()
        if step in done:
            return self._step_message(step.result())
        if self.task in done:
            return self._final_message()
        raise ParticipantError(f"{self.runner.name}: no tool call and no answer within {self.wait_s:g} s")

    def _step_message(self, step: CallsTurn | StopTurn | Failure) -> AssistantMessage:
        if isinstance(step, Failure):
            raise step.error
        if isinstance(step, StopTurn):
            extra = {"dropped_tool_calls": [c.name for c in step.dropped]} if step.dropped else {}
            return self._message(self.setup.profile.solo_stop_token, None, extra)
        return self._message(None, step.calls, {})

    def _final_message(self) -> AssistantMessage:
        assert self.task is not None
        task, self.task = self.task, None
        if task.cancelled():
            raise ParticipantError(f"{self.runner.name}: the framework's turn was cancelled")
        error = task.exception()
        if error is not None:
            if self.failure is not None:
                raise self.failure from error
            if self.model_error is not None:
                raise self.model_error from error
            raise ParticipantError(f"{self.runner.name}: {type(error).__name__}: {error}") from error
        text, self.state = task.result()
        if self.setup.mode is Mode.NO_USER:
            # The final answer ends the solo agent's work: it becomes the profile's stop, the answer kept beside it.
            return self._message(self.setup.profile.solo_stop_token, None, {"final_output": text})
        if not text or not text.strip():
            raise ParticipantError(f"{self.runner.name}: the framework's turn ended without an answer")
        return self._message(text, None, {})

    def _message(self, content: str | None, calls: list[ToolCall] | None, extra: dict[str, Any]) -> AssistantMessage:
        """The assistant message, with the usage and reasoning of the model calls made since the agent last spoke."""
        responses, self.responses = self.responses, []
        usage = {"prompt_tokens": sum(r.prompt_tokens or 0 for r in responses), "completion_tokens": sum(r.completion_tokens or 0 for r in responses)}
        reasoning = [r.reasoning for r in responses if r.reasoning]
        raw = {**extra, "framework": self.runner.name, "model_calls": len(responses), **({"reasoning": "\n\n".join(reasoning)} if reasoning else {})}
        return AssistantMessage(content=content, tool_calls=calls or None, usage=usage if responses else None, raw_data=raw)

    def is_stop(self, message: AssistantMessage) -> bool:
        """In the no-user mode the agent's final answer (or its `done` call) ends the conversation."""
        return self.setup.mode is Mode.NO_USER and not message.tool_calls and self.setup.profile.solo_stop_token in (message.content or "")

    async def close(self) -> None:
        """Cancel a turn still running, give the token back and close the context's client."""
        self.exchange.cancel()
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, CLOSE_WAIT_S)
        self.endpoint.unregister(self.context.api_key)
        with contextlib.suppress(Exception):
            await self.context.aclose()
        if self.mcp is not None:
            with contextlib.suppress(Exception):
                await self.mcp.aclose()
        elif self.mcp_socket is not None:
            self.mcp_socket.close()


@attrs.define(kw_only=True)
class FrameworkAgent(Agent):
    """An agent built by the user's factory with OpenAI Agents SDK, LangGraph or pydantic-ai, played by its own loop."""

    name: str = AGENT
    description: str = (
        "An agent object from another framework (--agent-option factory=MODULE:FUNCTION), with its own "
        "tool loop; its tools and model calls go through bench."
    )
    model_roles: tuple[str, ...] = ("agent",)
    _factories: dict[str, Factory] = attrs.field(factory=dict, init=False, repr=False)

    def factory(self, options: Mapping[str, Any]) -> Factory:
        """The factory the options name, loaded once per process."""
        spec = factory_spec(options)
        if spec not in self._factories:
            self._factories[spec] = load_factory(spec)
        return self._factories[spec]

    def fingerprint(self, options: Any) -> dict[str, str]:
        """The factory, its module's source hash and the framework's name and version, for the run's identity and header.

        Called before the run starts: a factory that is missing, cannot be imported, fails or returns an object no
        runner plays is refused here, in one line. `options` are the agent options (or a run configuration holding them).
        """
        options = getattr(options, "agent_options", options) or {}
        factory = self.factory(options)
        if _serves_mcp(options) and importlib.util.find_spec("mcp") is None:
            raise ConfigError(f"agent {AGENT!r}: --agent-option mcp=true needs the MCP SDK: pip install 'bench-bridge[mcp]'")
        try:
            built = factory.function(probe_context(options))
            if inspect.isawaitable(built):
                close = getattr(built, "close", None)
                if callable(close):
                    close()
                raise ConfigError(
                    f"agent {AGENT!r}: the factory {factory.spec!r} is a coroutine function; make it a plain function returning the agent"
                )
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(f"agent {AGENT!r}: the factory {factory.spec!r} raised {type(exc).__name__}: {exc}") from exc
        runner = runner_for(built)
        return {
            "factory": factory.spec,
            "factory_sha256": factory.source_sha256,
            "framework": runner.name,
            "framework_version": framework_version(runner) or "unknown",
        }

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str] | None:
        """Its own agent loop, and what its first model request in a probe turn lacks of the profile (probe.py)."""
        from .probe import framework_deviations

        return await framework_deviations(self.factory(options), options, profile)

    def start(self, setup: ConversationSetup) -> AgentSession:
        """Bind the conversation's token and tools, build the framework's agent with the factory, find its runner."""
        options = dict(setup.options.get("agent") or {})
        factory = self.factory(options)
        exchange = ToolExchange(
            tool_names=frozenset(), raise_errors=_tool_errors(options) == "raise", wait_s=float(options.get("timeout_s", DEFAULT_WAIT_S))
        )
        if setup.mode is Mode.NO_USER:
            done = done_tool_name(setup.profile)
            if any(s["function"]["name"] == done for s in setup.agent_tools):
                raise ConfigError(f"the domain has a tool named {done!r}, which agent {AGENT!r} reserves to end the work in the no-user mode")
            exchange.done_tool = done
        schemas = [dict(s) for s in setup.agent_request_tools()]  # llm-fc's tools array: the profile's, byte for byte
        exchange.tool_names = frozenset(s["function"]["name"] for s in schemas)
        endpoint = Endpoint.shared()
        model = setup.models.config("agent").model
        context = FactoryContext(
            model=model,
            base_url=endpoint.base_url,
            api_key="",
            tools=tool_functions(schemas, exchange),
            tool_schemas=schemas,
            instructions=agent_instructions(setup),
            mode=setup.mode.value,
            ticket=setup.task.ticket if setup.mode is Mode.NO_USER else None,
            setup=setup,
            options=options,
            tool_choice=setup.agent_tool_choice(),
            history=opening_messages(setup.history),
            invoke=exchange.invoke,
        )
        session = BridgeSession(
            setup=setup,
            runner=None,  # type: ignore[arg-type]
            agent=None,
            context=context,
            exchange=exchange,
            endpoint=endpoint,
            model=model,
            wait_s=exchange.wait_s,
        )
        if _serves_mcp(options):
            session.mcp_socket = loopback_socket()
            context.mcp_url = f"http://127.0.0.1:{session.mcp_socket.getsockname()[1]}/mcp"
        context.api_key = endpoint.register(session)
        try:
            session.agent = factory.function(context)
            session.runner = runner_for(session.agent)
        except BaseException:
            endpoint.unregister(context.api_key)
            if session.mcp_socket is not None:
                session.mcp_socket.close()
            raise
        return session


def _serves_mcp(options: Mapping[str, Any]) -> bool:
    """`--agent-option mcp=true`: the conversation's tools are also served over MCP at `context.mcp_url`."""
    value = options.get("mcp", False)
    if not isinstance(value, bool):
        raise ConfigError(f"agent {AGENT!r}: mcp must be true or false, not {value!r}")
    return value


def _tool_errors(options: Mapping[str, Any]) -> str:
    value = options.get("tool_errors", "return")
    if value not in ("return", "raise"):
        raise ConfigError(
            f"agent {AGENT!r}: tool_errors must be 'return' (the error text is the tool's result) or "
            f"'raise' (the tool raises bench_bridge.ToolFailed), not {value!r}"
        )
    return str(value)
