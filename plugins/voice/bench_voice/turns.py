"""The event one voice turn leaves: what was meant, what was heard, and the critical fields between them."""

from __future__ import annotations

from typing import ClassVar

import attrs


@attrs.frozen(kw_only=True)
class VoiceTurn:
    """One message through the voice channel."""

    kind: ClassVar[str] = "voice.turn"
    speaker: str
    meant: str
    heard: str
    wer: float
    audio_sha256: str
    seconds: float
    snr_db: float | None
    tts_ms: int | None
    asr_ms: int | None
    tts_cached: bool = False
    """The run's speech cache gave the audio: this engine and voice had spoken the text before (tts_ms is then 0)."""
    asr_cached: bool = False
    """The run's speech cache gave the transcript: the very same recording had been recognised before."""
    fields: list[str] = attrs.Factory(list)
    """The critical values said in this turn (phone numbers, emails, order ids), as written."""
    fields_said: int = 0
    fields_heard: int = 0
    misheard: list[dict[str, str]] = attrs.Factory(list)
    """The critical fields said but not heard exactly: kind, meant, heard."""
