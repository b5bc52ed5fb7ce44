"""Prices per million tokens; a model missing here has an unknown cost (None), never 0."""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class Price:
    """USD per million prompt and completion tokens."""

    prompt: float
    completion: float


# Public list prices (USD per 1M tokens) of common hosted models; extend with --price MODEL=IN,OUT.
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
}


def lookup(prices: Mapping[str, Price], model: str) -> Price | None:
    """The price of a model, also for dated snapshots such as gpt-4.1-2025-04-14."""
    if model in prices:
        return prices[model]
    candidates = [name for name in prices if model.startswith(name + "-")]
    return prices[max(candidates, key=len)] if candidates else None


def cost_of(prices: Mapping[str, Price], model: str, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
    """The cost of one call, or None when the price or the token counts are unknown."""
    price = lookup(prices, model)
    if price is None or prompt_tokens is None or completion_tokens is None:
        return None
    return (prompt_tokens * price.prompt + completion_tokens * price.completion) / 1_000_000


def parse_price(text: str) -> tuple[str, Price]:
    """Parse MODEL=PROMPT,COMPLETION (USD per million tokens)."""
    model, _, numbers = text.partition("=")
    parts = numbers.split(",")
    if not model or len(parts) != 2:
        raise ValueError(f"expected MODEL=PROMPT_USD_PER_M,COMPLETION_USD_PER_M, got {text!r}")
    return model, Price(float(parts[0]), float(parts[1]))
