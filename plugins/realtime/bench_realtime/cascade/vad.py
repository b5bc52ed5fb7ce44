"""Energy-based voice-activity detection on 8 kHz mu-law, driven by a Realtime session's `turn_detection`.

Each 20 ms frame's RMS level is compared with two levels, each the highest of an absolute level set by the session's
`threshold` and two measures of the line's background noise:

- `threshold` (0..1, default 0.5) sets the absolute level that starts speech, `start = -55 + 50 * threshold` dBFS
  (0.5 -> -30; 0 -> -55; 1 -> -5), and the lower level that keeps it going, `hold = start - 25` (0.5 -> -55 dBFS):
  a higher threshold always needs louder speech both to start and to continue a turn. Speech at tau2's reference
  level (RMS 3000, about -21 dBFS) starts a turn at the default and its unvoiced stretches (-30..-50 dBFS for hundreds
  of ms) keep it; the kernel's text-paced tone (about -27 dBFS) starts one up to threshold 0.55.
- The noise floor is the quietest frame of the last `NOISE_WINDOW_MS` of audio that was not speech (outside a turn,
  frames below the start level; within one, its pauses below the hold level): a minimum that falls at once and rises
  only as quiet frames age out, so it follows drifting noise but never speech. The noise ceiling is the loudest frame
  of the last `NOISE_WINDOW_MS` heard outside speech. Speech starts only `START_MARGIN_DB` above the floor and above
  the ceiling, and continues only `HOLD_MARGIN_DB` above the floor and at the ceiling, so background noise (tau2's
  15 dB SNR, about -36 dBFS) neither starts a turn nor keeps one from ending. Frames with 5 ms or
  more of digital silence (a silent line, a dropped frame) update neither: they say nothing about the noise.
- Speech starts once frames at the start level have lasted `MIN_SPEECH_MS` in a row (a click or the edge of a
  dropped frame does not start a turn); `audio_start_ms` is the first of them minus `prefix_padding_ms` (default 300).
- Speech stops once `silence_duration_ms` (default 500) of frames below the hold level follow (the hangover);
  `audio_end_ms` is the end of the last frame at the hold level. The utterance handed to the recogniser runs from
  `audio_start_ms` to the moment the stop is detected (so it ends with the silence that confirmed it).

Per frame this is one RMS and a few comparisons over ten block extremes: pure Python, and deterministic.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from .audio import bytes_to_ms, level_dbfs, ms_to_bytes

FRAME_MS = 20
MIN_SPEECH_MS = 60
"""Frames at the start level needed in a row before speech starts."""
FLOOR_DBFS, SPAN_DB = -55.0, 50.0
HOLD_DB = 25.0
"""How far below the start level speech, once started, still counts as speech (hysteresis)."""
START_MARGIN_DB = 12.0
"""Speech starts only this far above the noise floor."""
HOLD_MARGIN_DB = 6.0
"""Speech continues only this far above the noise floor."""
NOISE_WINDOW_MS = 2000
"""The noise floor and ceiling are the extremes of this much recent audio (a few syllables and a pause)."""
NOISE_BLOCK_MS = 200
"""The window is kept as the extremes of blocks this long."""
SILENT_RUN = 40
"""Bytes of digital silence (5 ms) that make a frame say nothing about the noise."""
SILENT_BYTES = (b"\xff" * SILENT_RUN, b"\x7f" * SILENT_RUN)
"""mu-law's two codes for zero."""


def threshold_dbfs(threshold: float) -> float:
    """The frame level (dBFS) that starts speech at a Realtime VAD threshold (0..1)."""
    return FLOOR_DBFS + SPAN_DB * min(1.0, max(0.0, threshold))


def hold_dbfs(threshold: float) -> float:
    """The frame level (dBFS) that keeps speech going at a Realtime VAD threshold (0..1)."""
    return threshold_dbfs(threshold) - HOLD_DB


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
        return cls(
            threshold=float(data.get("threshold", default.threshold)),
            prefix_padding_ms=int(data.get("prefix_padding_ms", default.prefix_padding_ms)),
            silence_duration_ms=int(data.get("silence_duration_ms", default.silence_duration_ms)),
        )

    def as_turn_detection(self) -> dict[str, Any]:
        """The settings as a `turn_detection` object."""
        return {
            "type": "server_vad",
            "threshold": self.threshold,
            "prefix_padding_ms": self.prefix_padding_ms,
            "silence_duration_ms": self.silence_duration_ms,
            "create_response": True,
            "interrupt_response": True,
        }


@attrs.frozen(kw_only=True)
class VadEvent:
    """Speech started or stopped, on the session's input audio clock; a stop carries the utterance's audio."""

    kind: Literal["started", "stopped"]
    audio_start_ms: int
    audio_end_ms: int | None = None
    audio: bytes = b""


@attrs.define
class RecentExtreme:
    """The lowest (or highest) frame level of the last `NOISE_WINDOW_MS` taken in, kept as block extremes."""

    highest: bool = False
    blocks: deque[float] = attrs.field(factory=lambda: deque(maxlen=NOISE_WINDOW_MS // NOISE_BLOCK_MS))
    block: list[float] = attrs.field(factory=list)
    """The levels of the block under way."""

    @property
    def dbfs(self) -> float | None:
        """The extreme, or None before any level was taken in."""
        seen = [*self.blocks, *self.block]
        if not seen:
            return None
        return max(seen) if self.highest else min(seen)

    def add(self, level: float) -> None:
        """Take one frame's level in."""
        self.block.append(level)
        if len(self.block) * FRAME_MS >= NOISE_BLOCK_MS:
            self.blocks.append(max(self.block) if self.highest else min(self.block))
            self.block.clear()

    def forget_block(self) -> None:
        """Drop the block under way (it held the onset of speech, not noise)."""
        self.block.clear()


def partly_silent(chunk: bytes) -> bool:
    """The frame holds a run of digital silence: a silent line or the edge of a dropped frame."""
    return any(run in chunk for run in SILENT_BYTES)


@attrs.define
class EnergyVad:
    """Streaming detector: feed it audio, get speech starts and stops."""

    settings: VadSettings = attrs.field(factory=VadSettings)
    position_ms: int = 0
    """Input audio analysed so far."""
    in_speech: bool = False
    floor: RecentExtreme = attrs.field(factory=RecentExtreme)
    """The quietest recent frame."""
    ceiling: RecentExtreme = attrs.field(factory=lambda: RecentExtreme(highest=True))
    """The loudest recent frame outside speech."""
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
        """Forget the audio kept so far (input_audio_buffer.clear); the noise floor is the line's and stays."""
        self._kept.clear()
        self._kept_from_ms = self.position_ms
        self.in_speech, self._voiced_ms, self._silent_ms = False, 0, 0

    def levels(self) -> tuple[float, float]:
        """The levels (dBFS) that start and keep speech now: the absolute ones, or the noise's when higher."""
        start, hold = threshold_dbfs(self.settings.threshold), hold_dbfs(self.settings.threshold)
        floor, ceiling = self.floor.dbfs, self.ceiling.dbfs
        if floor is not None:
            start, hold = max(start, floor + START_MARGIN_DB), max(hold, floor + HOLD_MARGIN_DB)
        if ceiling is not None:  # the start level stays at or above the hold level: hysteresis holds
            start, hold = max(start, ceiling), max(hold, ceiling)
        return start, hold

    def _frame(self, chunk: bytes) -> VadEvent | None:
        start = self.position_ms
        self.position_ms += FRAME_MS
        self._kept += chunk
        level = level_dbfs(chunk)
        start_at, hold_at = self.levels()  # judged against the noise heard before this frame
        self._hear_noise(chunk, level, start_at, hold_at)
        if self.in_speech:
            return self._during_speech(level >= hold_at)
        self._voiced_ms = self._voiced_ms + FRAME_MS if level >= start_at else 0
        if self._voiced_ms == FRAME_MS:
            self._first_voiced_ms = start
        if self._voiced_ms >= MIN_SPEECH_MS:
            return self._start()
        self._trim_to(self.position_ms - self.settings.prefix_padding_ms - MIN_SPEECH_MS)
        return None

    def _hear_noise(self, chunk: bytes, level: float, start_at: float, hold_at: float) -> None:
        # Only what is not speech is noise: outside speech, frames below the start level; in speech, its pauses.
        if partly_silent(chunk):
            return
        if self.in_speech:
            if level < hold_at:
                self.floor.add(level)
        elif level < start_at:
            self.floor.add(level)
            self.ceiling.add(level)

    def _during_speech(self, voiced: bool) -> VadEvent | None:
        if voiced:
            self._silent_ms = 0
            self._last_voiced_end_ms = self.position_ms
            return None
        self._silent_ms += FRAME_MS
        return self._stop() if self._silent_ms >= self.settings.silence_duration_ms else None

    def _start(self) -> VadEvent:
        self.in_speech, self._silent_ms = True, 0
        self.ceiling.forget_block()  # its last frames were the quiet onset of this speech
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
