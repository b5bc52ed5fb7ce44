"""VLLMClient: bench-openai's client, reading tool calls and thinking from the text when the server does not.

Everything HTTP (retries, errors, concurrency, pools) is OpenAIClient's; this class overrides the
request body (`build_payload`) and the message parsing (`parse_message`) only.
"""

from __future__ import annotations

from typing import Any

import attrs
from bench_openai.client import OpenAIClient

from bench_kernel import ChatRequest, ChatResponse, ConfigError, ModelConfig, ModelError, ModelHTTPError, get_logger

from .parsing import check_modes, parse_text
from .prompting import inline_tools

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
"""Where `vllm serve` listens unless told otherwise."""
AUTO_TOOL_CHOICE_REFUSAL = "enable-auto-tool-choice"
"""In vLLM's 400 for tool_choice "auto" when it was started without --enable-auto-tool-choice --tool-call-parser."""

log = get_logger()


@attrs.frozen(kw_only=True)
class VLLMOptions:
    """The backend's own options (ModelConfig.options), checked when the client is created."""

    tool_parser: str = "auto"
    """Text formats read for tool calls: auto (all), hermes, mistral, none."""
    reasoning: str = "strip"
    """Think blocks in the content: strip (moved to reasoning only) or keep (also left in the content)."""
    tools_in_prompt: bool = False
    """Describe the tools in the system prompt instead of the `tools` field."""

    @classmethod
    def from_config(cls, config: ModelConfig) -> VLLMOptions:
        """Read and check the options; unknown values are a ConfigError naming the model."""
        options = cls(
            tool_parser=config.options.get("tool_parser", "auto"),
            reasoning=config.options.get("reasoning", "strip"),
            tools_in_prompt=config.options.get("tools_in_prompt", False),
        )
        try:
            check_modes(options.tool_parser, options.reasoning)
        except ConfigError as exc:
            raise ConfigError(f"model {config.model!r}: {exc}") from None
        if not isinstance(options.tools_in_prompt, bool):
            raise ConfigError(f"model {config.model!r}: option tools_in_prompt must be true or false")
        if options.tools_in_prompt and options.tool_parser not in ("auto", "hermes"):
            raise ConfigError(
                f"model {config.model!r}: tools_in_prompt asks for <tool_call> blocks, "
                f"so tool_parser must be auto or hermes, not {options.tool_parser!r}"
            )
        return options


class VLLMClient(OpenAIClient):
    """An OpenAI-protocol client for vLLM that works whether or not the server parses tool calls and thinking.

    Native `tool_calls` are taken as they are. Otherwise Hermes/Qwen `<tool_call>` blocks and
    Mistral `[TOOL_CALLS]` are read from the content, and `<think>` blocks become the reasoning.
    When the server refuses tool_choice "auto" (no tool parser), the request is sent again with
    "none" (the chat template still shows the tools) and every later request of this client too.
    """

    def __init__(self, config: ModelConfig) -> None:
        self.options = VLLMOptions.from_config(config)
        super().__init__(config if config.base_url else attrs.evolve(config, base_url=DEFAULT_BASE_URL))
        self.server_parses_tools = True
        """False once the server refused tool_choice "auto"."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion; falls back to tool_choice "none" once when the server has no tool parser."""
        try:
            return await super().complete(request)
        except ModelHTTPError as exc:
            if not (self._asks_auto(request) and AUTO_TOOL_CHOICE_REFUSAL in exc.body):
                raise
            refused = exc.attempts
        # Not guarded by the flag: requests already in flight when another one flipped it get the same refusal.
        if self.server_parses_tools:
            self.server_parses_tools = False
            log.warning(
                "vllm.no_tool_parser",
                model=self.config.model,
                base_url=self.base_url,
                note='sending tool_choice "none" and reading tool calls from the text',
            )
        try:
            response = await super().complete(request)
        except ModelError as exc:
            exc.attempts += refused
            raise
        return attrs.evolve(response, attempts=response.attempts + refused)

    def build_payload(self, request: ChatRequest) -> dict[str, Any]:
        """The parent's body, with tools in the prompt, "auto" downgraded, or Mistral's tag kept, as configured."""
        if self.options.tools_in_prompt:
            request = inline_tools(request)
        payload = super().build_payload(request)
        if "tools" in payload:
            if not self.server_parses_tools and payload.get("tool_choice", "auto") == "auto":
                payload["tool_choice"] = "none"
            if self.options.tool_parser == "mistral":
                # [TOOL_CALLS] is a special token: vLLM drops it from the text unless asked not to.
                payload.setdefault("skip_special_tokens", False)
        return payload

    def parse_message(self, message: dict[str, Any]) -> ChatResponse:
        """Native tool calls as they are; otherwise calls read from the content; thinking moved to reasoning."""
        response = super().parse_message(message)
        tool_parser = "none" if response.tool_calls else self.options.tool_parser
        parsed = parse_text(response.content, tool_parser=tool_parser, reasoning=self.options.reasoning, parse_arguments=self.parse_arguments)
        reasoning = "\n\n".join(r for r in (response.reasoning, parsed.reasoning) if r) or None
        return attrs.evolve(response, content=parsed.content, tool_calls=[*response.tool_calls, *parsed.tool_calls], reasoning=reasoning)

    def _asks_auto(self, request: ChatRequest) -> bool:
        """True when the request sends tools with tool_choice "auto" (vLLM's default when tools are given)."""
        return bool(request.tools) and not self.options.tools_in_prompt and request.tool_choice in (None, "auto")
