"""Energy-based voice-activity detection on 8 kHz mu-law, driven by a Realtime session's `turn_detection`.

The OpenAI Realtime `server_vad` settings map onto frame energy as follows:

- `threshold` (0..1, default 0.5) sets the level a 20 ms frame must reach to count as voiced:
  `level_dbfs = -55 + 50 * threshold` (0.5 -> -30 dBFS; 0 -> -55 dBFS; 1 -> -5 dBFS). Speech at tau2's reference
  level (RMS 3000, about -21 dBFS) is voiced at the default; background noise at tau2's 15 dB SNR (about -36 dBFS)
  is not; the kernel's text-paced tone (about -27 dBFS) is voiced up to threshold 0.55.
- Speech starts once voiced frames have lasted `MIN_SPEECH_MS` in a row (a click or the edge of a dropped frame
  does not start a turn); `audio_start_ms` is the first voiced frame minus `prefix_padding_ms` (default 300).
- Speech stops once `silence_duration_ms` (default 500) of unvoiced frames follow; `audio_end_ms` is the end of the
  last voiced frame. The utterance handed to the recogniser runs from `audio_start_ms` to the moment the stop is
  detected (so it ends with the silence that confirmed it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from .audio import bytes_to_ms, level_dbfs, ms_to_bytes

FRAME_MS = 20
MIN_SPEECH_MS = 60
"""Voiced audio needed in a row before speech starts."""
FLOOR_DBFS, SPAN_DB = -55.0, 50.0


def threshold_dbfs(threshold: float) -> float:
    """The frame level (dBFS) a Realtime VAD threshold (0..1) stands for."""
    return FLOOR_DBFS + SPAN_DB * min(1.0, max(0.0, threshold))


@attrs.frozen(kw_only=True)
class VadSettings:
    """The session's server VAD settings (OpenAI's defaults)."""

    threshold: float = 0.5
    prefix_padding_ms: int = 300
    silence_duration_ms: int = 500

    @classmethod
    def from_turn_detection(cls, data: Mapping[str, Any] | None) -> VadSettings:
        """Settings from a `turn_detection` object (missing keys keep their defaults)."""
        data = data or {}
        default = cls()
        return cls(threshold=float(data.get("threshold", default.threshold)),
                   prefix_padding_ms=int(data.get("prefix_padding_ms", default.prefix_padding_ms)),
                   silence_duration_ms=int(data.get("silence_duration_ms", default.silence_duration_ms)))

    def as_turn_detection(self) -> dict[str, Any]:
        """The settings as a `turn_detection` object."""
        return {"type": "server_vad", "threshold": self.threshold, "prefix_padding_ms": self.prefix_padding_ms,
                "silence_duration_ms": self.silence_duration_ms, "create_response": True, "interrupt_response": True}


@attrs.frozen(kw_only=True)
class VadEvent:
    """Speech started or stopped, on the session's input audio clock; a stop carries the utterance's audio."""

    kind: Literal["started", "stopped"]
    audio_start_ms: int
    audio_end_ms: int | None = None
    audio: bytes = b""


@attrs.define
class EnergyVad:
    """Streaming detector: feed it audio, get speech starts and stops."""

    settings: VadSettings = attrs.field(factory=VadSettings)
    position_ms: int = 0
    """Input audio analysed so far."""
    in_speech: bool = False
    _partial: bytearray = attrs.field(factory=bytearray)
    _kept: bytearray = attrs.field(factory=bytearray)
    """Audio from `_kept_from_ms` on: the prefix padding window, or the utterance under way."""
    _kept_from_ms: int = 0
    _voiced_ms: int = 0
    _silent_ms: int = 0
    _first_voiced_ms: int = 0
    _last_voiced_end_ms: int = 0
    _start_ms: int = 0

    def feed(self, audio: bytes) -> list[VadEvent]:
        """Analyse more input audio (any length); the events it completes, in order."""
        self._partial += audio
        frame = ms_to_bytes(FRAME_MS)
        events: list[VadEvent] = []
        while len(self._partial) >= frame:
            chunk = bytes(self._partial[:frame])
            del self._partial[:frame]
            found = self._frame(chunk)
            if found is not None:
                events.append(found)
        return events

    def flush(self) -> VadEvent | None:
        """End speech under way now (an explicit commit), or None when there is none."""
        return self._stop() if self.in_speech else None

    def clear(self) -> None:
        """Forget the audio kept so far (input_audio_buffer.clear)."""
        self._kept.clear()
        self._kept_from_ms = self.position_ms
        self.in_speech, self._voiced_ms, self._silent_ms = False, 0, 0

    def _frame(self, chunk: bytes) -> VadEvent | None:
        start = self.position_ms
        self.position_ms += FRAME_MS
        self._kept += chunk
        voiced = level_dbfs(chunk) >= threshold_dbfs(self.settings.threshold)
        if self.in_speech:
            return self._during_speech(voiced)
        self._voiced_ms = self._voiced_ms + FRAME_MS if voiced else 0
        if voiced and self._voiced_ms == FRAME_MS:
            self._first_voiced_ms = start
        if self._voiced_ms >= MIN_SPEECH_MS:
            return self._start()
        self._trim_to(self.position_ms - self.settings.prefix_padding_ms - MIN_SPEECH_MS)
        return None

    def _during_speech(self, voiced: bool) -> VadEvent | None:
        if voiced:
            self._silent_ms = 0
            self._last_voiced_end_ms = self.position_ms
            return None
        self._silent_ms += FRAME_MS
        return self._stop() if self._silent_ms >= self.settings.silence_duration_ms else None

    def _start(self) -> VadEvent:
        self.in_speech, self._silent_ms = True, 0
        self._last_voiced_end_ms = self.position_ms
        self._start_ms = max(self._kept_from_ms, self._first_voiced_ms - self.settings.prefix_padding_ms)
        self._trim_to(self._start_ms)
        return VadEvent(kind="started", audio_start_ms=self._start_ms)

    def _stop(self) -> VadEvent:
        audio = bytes(self._kept)
        event = VadEvent(kind="stopped", audio_start_ms=self._start_ms, audio_end_ms=self._last_voiced_end_ms, audio=audio)
        self.in_speech, self._voiced_ms, self._silent_ms = False, 0, 0
        self._kept.clear()
        self._kept_from_ms = self.position_ms
        return event

    def _trim_to(self, from_ms: int) -> None:
        # Outside speech only the prefix padding (and a speech start under way) is kept.
        if from_ms <= self._kept_from_ms:
            return
        drop = ms_to_bytes(from_ms - self._kept_from_ms)
        del self._kept[:drop]
        self._kept_from_ms += bytes_to_ms(drop)
