"""Realtime rates (USD per million tokens, tau2's pricing table of 2026-08-04) and the cost of a usage record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

PRICING_VERSION = "2026-08-04"


@attrs.frozen
class RealtimeRate:
    """USD per million tokens by modality; `cached` None: cached input is billed at the input rates."""

    text_in: float
    audio_in: float
    cached: float | None
    text_out: float
    audio_out: float


RATES: dict[tuple[str, str], RealtimeRate] = {
    ("openai", "gpt-realtime"): RealtimeRate(4.0, 32.0, 0.40, 16.0, 64.0),
    ("gemini", "gemini-3.1-flash-live"): RealtimeRate(0.75, 3.0, None, 4.5, 12.0),
    ("gemini", "gemini-2.5-flash-native-audio"): RealtimeRate(0.5, 3.0, None, 2.0, 12.0),
    ("gemini", "gemini-live-2.5-flash-native-audio"): RealtimeRate(0.5, 3.0, None, 2.0, 12.0),
}
"""`gpt-realtime` covers gpt-realtime-1.5 and dated snapshots: the longest key that prefixes the model wins."""


def rate_of(provider: str, model: str) -> RealtimeRate | None:
    """The rate of a provider's model: exact, else the longest name that prefixes it; None when unknown."""
    model = model.removeprefix("models/")
    if (provider, model) in RATES:
        return RATES[(provider, model)]
    names = [name for p, name in RATES if p == provider and model.startswith(name)]
    return RATES[(provider, max(names, key=len))] if names else None


def cost_of(record: Mapping[str, Any]) -> float | None:
    """USD of one usage record; None when the model has no rate or a modality's count is unknown (never 0 by default)."""
    if record.get("billable") is False:
        return 0.0
    rate = rate_of(str(record.get("provider", "")), str(record.get("model", "")))
    if rate is None:
        return None
    parts = _split(record)
    if parts is None:
        return None
    text_in, audio_in, cached_text, cached_audio, text_out, audio_out = parts
    cached_text_rate = rate.cached if rate.cached is not None else rate.text_in
    cached_audio_rate = rate.cached if rate.cached is not None else rate.audio_in
    usd = (
        text_in * rate.text_in
        + audio_in * rate.audio_in
        + cached_text * cached_text_rate
        + cached_audio * cached_audio_rate
        + text_out * rate.text_out
        + audio_out * rate.audio_out
    )
    return usd / 1_000_000


def _split(record: Mapping[str, Any]) -> tuple[int, int, int, int, int, int] | None:
    """Uncached text and audio in, cached text and audio in, text and audio out; None when the record cannot be split."""
    text_in, audio_in = record.get("input_text_tokens"), record.get("input_audio_tokens")
    text_out, audio_out = record.get("output_text_tokens"), record.get("output_audio_tokens")
    if text_in is None and audio_in is None and record.get("input_tokens"):
        return None
    if text_out is None and audio_out is None and record.get("output_tokens"):
        return None
    text_in, audio_in, text_out, audio_out = (v or 0 for v in (text_in, audio_in, text_out, audio_out))
    cached_text = record.get("input_cached_text_tokens")
    cached_audio = record.get("input_cached_audio_tokens")
    if cached_text is None and cached_audio is None:
        # Only a total of cached tokens: it is attributed to text input (the share a prompt cache holds first).
        cached_text, cached_audio = min(record.get("input_cached_tokens") or 0, text_in), 0
    cached_text, cached_audio = min(cached_text or 0, text_in), min(cached_audio or 0, audio_in)
    # The per-modality input counts include their cached share: bill that share at the cached rate only.
    return text_in - cached_text, audio_in - cached_audio, cached_text, cached_audio, text_out, audio_out
