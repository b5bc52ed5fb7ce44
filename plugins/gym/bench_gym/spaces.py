"""The environments' spaces: chat observations, and assistant messages as actions (with a random sampler)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

WORDS = (
    "hello",
    "please",
    "account",
    "plan",
    "thanks",
    "help",
    "ticket",
    "change",
    "booking",
    "refund",
    "why",
    "now",
    "yes",
    "no",
    "the",
    "my",
    "order",
    "line",
    "phone",
    "done",
)
"""What random text is made of."""
MAX_DEPTH = 3


class ChatObservation(gymnasium.Space[dict[str, Any]]):
    """A dict whose `messages` are the new chat messages (with `tools`, `instructions`, ... on reset)."""

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Chat messages are not arrays."""
        return False

    def contains(self, x: Any) -> bool:
        """A dict with a list of messages."""
        return isinstance(x, dict) and isinstance(x.get("messages"), list)

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        """An observation with nothing new (observations come from conversations, not from chance)."""
        return {"messages": []}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatObservation)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return "ChatObservation()"


class ChatAction(gymnasium.Space[dict[str, Any]]):
    """An assistant message (text and/or tool calls) as a dict or its JSON text; `sample()` draws a random one.

    A random message calls one of `tools` (arguments drawn from its JSON schema) or says a few random words; with
    `stop` set it says that (a stop token) one time in ten. The environment sets `tools` and `stop` on every reset.
    """

    def __init__(self, tools: Sequence[Mapping[str, Any]] = (), stop: str | None = None, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(None, None, seed)
        self.tools = [dict(t) for t in tools]
        self.stop = stop

    @property
    def is_np_flattenable(self) -> bool:
        """Messages are not arrays."""
        return False

    def contains(self, x: Any) -> bool:
        """Text, or a dict with content or tool calls."""
        return isinstance(x, str) or (isinstance(x, dict) and ("content" in x or "tool_calls" in x))

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        """A random message: a tool call (seven times in ten, when there are tools), else random words or the stop."""
        rng = self.np_random
        if self.stop is not None and rng.random() < 0.1:
            return {"role": "assistant", "content": self.stop}
        if self.tools and rng.random() < 0.7:
            function = self.tools[int(rng.integers(len(self.tools)))]["function"]
            arguments = random_value(function.get("parameters") or {"type": "object"}, rng)
            call = {"type": "function", "function": {"name": function["name"], "arguments": json.dumps(arguments)}}
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        words = rng.choice(WORDS, size=int(rng.integers(1, 8)))
        return {"role": "assistant", "content": " ".join(str(w) for w in words)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatAction) and other.tools == self.tools and other.stop == self.stop

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"ChatAction({len(self.tools)} tools)"


def random_value(schema: Mapping[str, Any], rng: np.random.Generator, depth: int = 0) -> Any:
    """A value of the JSON schema's type (enums, unions, arrays and objects included), drawn from rng."""
    if schema.get("enum"):
        return schema["enum"][int(rng.integers(len(schema["enum"])))]
    choices = schema.get("anyOf") or schema.get("oneOf")
    if choices:
        return random_value(choices[int(rng.integers(len(choices)))], rng, depth)
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return _random_object(schema, rng, depth) if depth < MAX_DEPTH else {}
    if kind == "array":
        size = int(rng.integers(0, 3)) if depth < MAX_DEPTH else 0
        return [random_value(schema.get("items") or {}, rng, depth + 1) for _ in range(size)]
    return _random_scalar(kind, rng)


def _random_object(schema: Mapping[str, Any], rng: np.random.Generator, depth: int) -> dict[str, Any]:
    required = set(schema.get("required") or ())
    properties = schema.get("properties") or {}
    return {name: random_value(sub, rng, depth + 1) for name, sub in properties.items() if name in required or rng.random() < 0.3}


def _random_scalar(kind: str, rng: np.random.Generator) -> Any:
    if kind == "integer":
        return int(rng.integers(0, 10))
    if kind == "number":
        return float(rng.integers(0, 1000)) / 10
    if kind == "boolean":
        return bool(rng.random() < 0.5)
    if kind == "null":
        return None
    return f"{WORDS[int(rng.integers(len(WORDS)))]}-{int(rng.integers(100))}"
