"""The LLM reranker: a judge role rates each retrieved document 0-10 for the query; low ones are dropped.

As tau2's pointwise reranker: one chat call per document (the query and the whole document in one user
message, a JSON answer `{"relevance_score": int}` asked for with a JSON schema), calls in flight bounded,
a score clamped to 0-10, documents under the threshold or whose call failed dropped, the rest sorted by
score (ties keep the retrieval order). The rating prompt is the text `knowledge_rerank` (texts.py; a profile
may replace it).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, Protocol

from bench_kernel import ChatRequest, ChatResponse, ModelConfig, ModelError, get_logger

log = get_logger()
RELEVANCE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "RelevanceScore",
        "schema": {
            "properties": {"relevance_score": {"title": "Relevance Score", "type": "integer"}},
            "required": ["relevance_score"],
            "title": "RelevanceScore",
            "type": "object",
            "additionalProperties": False,
        },
        "strict": True,
    },
}
"""What the OpenAI SDK sends for tau2's structured output (a model with one integer field)."""


class ChatModels(Protocol):
    """What the reranker needs of a conversation's model access."""

    def config(self, role: str) -> ModelConfig: ...

    async def complete(self, role: str, request: ChatRequest) -> ChatResponse: ...


def relevance_score(reply: ChatResponse) -> int:
    """The score a reply gives, clamped to 0-10; ValueError when it gives none."""
    try:
        data = json.loads(reply.content or "")
    except ValueError:
        raise ValueError(f"the reply is not JSON: {reply.content!r:.80}") from None
    score = data.get("relevance_score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or score != int(score):
        raise ValueError(f"no integer relevance_score in {reply.content!r:.80}")
    return max(0, min(10, int(score)))


def rating_request(prompt: str, config: ModelConfig) -> ChatRequest:
    """The chat request for one rating (tau2 asks gpt-5 models for low reasoning effort)."""
    sampling = {"reasoning_effort": "low"} if config.model.startswith("gpt-5") and "reasoning_effort" not in config.sampling else {}
    return ChatRequest(messages=[{"role": "user", "content": prompt}], response_format=RELEVANCE_FORMAT, sampling=sampling)


async def rerank(models: ChatModels, role: str, prompts: Sequence[tuple[int, str]], *, min_score: int, concurrency: int) -> list[tuple[int, float]]:
    """Rate each (index, prompt); keep those scoring at least `min_score`, best first, as (index, score)."""
    config = models.config(role)
    gate = asyncio.Semaphore(concurrency)

    async def rate(index: int, prompt: str) -> tuple[int, int] | None:
        async with gate:
            try:
                return index, relevance_score(await models.complete(role, rating_request(prompt, config)))
            except (ModelError, ValueError) as exc:
                log.info("knowledge.rerank_dropped", index=index, error=str(exc)[:200])
                return None

    rated = await asyncio.gather(*(rate(index, prompt) for index, prompt in prompts))
    kept = [(index, float(score)) for found in rated if found is not None for index, score in [found] if score >= min_score]
    kept.sort(key=lambda hit: hit[1], reverse=True)
    return kept
