"""The model-driven judge (llm-judge): grades a conversation against its natural-language assertions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import (
    AssistantMessage,
    ChatRequest,
    Check,
    Judge,
    JudgeRequest,
    Message,
    ModelResponseError,
    ToolMessage,
    UserMessage,
)

from .chat import require_model
from .jsontext import first_json
from .prompts import judge_prompt

SPEAKERS = {"assistant": "agent", "user": "customer"}


def transcript(messages: Sequence[Message]) -> str:
    """The conversation as one readable text: who spoke, which tools each side called, what the tools returned."""
    lines = []
    for m in messages:
        if isinstance(m, AssistantMessage | UserMessage):
            who = SPEAKERS[m.role]
            if m.has_text():
                lines.append(f"{who}: {m.content}")
            for call in m.tool_calls or []:
                lines.append(f"{who} calls {call.name}({json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)})")
        elif isinstance(m, ToolMessage):
            lines.append(f"tool result for the {SPEAKERS[m.requestor]}{' (error)' if m.error else ''}: {m.content or ''}")
    return "\n".join(lines)


def read_verdicts(text: str | None, assertions: Sequence[str]) -> list[Check]:
    """One check per assertion from the judge's reply; ModelResponseError when it cannot be read or misses one."""
    try:
        value = first_json(text or "")
    except ValueError:
        raise ModelResponseError(f"the judge's reply is not JSON: {(text or '')[:300]!r}") from None
    entries = value.get("verdicts", value.get("results")) if isinstance(value, dict) else value
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ModelResponseError(f"the judge's reply has no list of verdicts: {(text or '')[:300]!r}")
    by_index = _by_index(entries, len(assertions))
    return [_check(assertion, by_index[i]) for i, assertion in enumerate(assertions, start=1)]


def _by_index(entries: list[dict[str, Any]], count: int) -> dict[int, dict[str, Any]]:
    # Numbered verdicts may come in any order; unnumbered ones are taken in order.
    numbered = all(isinstance(e.get("index"), int) for e in entries)
    found = {e["index"]: e for e in entries} if numbered else dict(enumerate(entries, start=1))
    missing = [i for i in range(1, count + 1) if i not in found]
    if missing:
        raise ModelResponseError(f"the judge gave no verdict for statements {missing} (of {count})")
    return found


def _check(assertion: str, entry: dict[str, Any]) -> Check:
    met = entry.get("met", entry.get("metExpectation"))
    if isinstance(met, str) and met.strip().lower() in ("true", "yes", "false", "no"):
        met = met.strip().lower() in ("true", "yes")
    if not isinstance(met, bool):
        raise ModelResponseError(f"the judge's verdict on {assertion!r} has no true/false \"met\"")
    return Check(subject=assertion, met=met, detail=str(entry.get("reasoning") or ""))


@attrs.define(kw_only=True)
class ModelJudge(Judge):
    """Asks the run's judge model whether each assertion holds on the conversation."""

    name: str = "llm-judge"
    description: str = "Model judge: grades each NL assertion from the transcript, answering in JSON."
    model_roles: tuple[str, ...] = ("judge",)

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """One check per assertion, in order, with the model's reasoning as the detail."""
        require_model(request.models, "judge", f"judge {self.name!r}")
        chat = ChatRequest(messages=judge_prompt(request.profile, transcript(request.messages), request.assertions),
                           response_format={"type": "json_object"}, seed=request.seed)
        response = await request.models.complete("judge", chat)
        return read_verdicts(response.content, request.assertions)
