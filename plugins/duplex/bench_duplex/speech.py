"""Speech without a speech engine, and how speech is scored: text-paced audio, word error rate.

A text takes as long as a person needs to say it (about 15 characters a second) and its audio is a quiet,
deterministic tone, so a full-duplex conversation has real timing offline and in tests. A speech channel
(bench-voice) replaces this with synthesised speech.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

from .audio import SAMPLE_RATE, fit, tick_bytes, ulaw_byte
from .seams import Chunk, Side, Utterance

CHARS_PER_SECOND = 15.0
"""About 150 words a minute."""


def _tone(side: Side, tick_ms: int) -> bytes:
    # A side's own pitch, so the two voices can be told apart in a recording.
    hz = 140.0 if side == "agent" else 210.0
    n = tick_bytes(tick_ms)
    return bytes(ulaw_byte(int(2000 * math.sin(2 * math.pi * hz * i / SAMPLE_RATE))) for i in range(n))


_TONES: dict[tuple[str, int], bytes] = {}


def tone(side: Side, tick_ms: int) -> bytes:
    """One tick of the side's tone (computed once per side and tick length)."""
    key = (side, tick_ms)
    if key not in _TONES:
        _TONES[key] = _tone(side, tick_ms)
    return _TONES[key]


def utterance_id(side: Side, index: int, text: str) -> str:
    """A stable id for an utterance (the same text said at the same place gets the same id)."""
    return hashlib.sha256(f"{side}:{index}:{text}".encode()).hexdigest()[:16]


def spread(text: str, n_chunks: int) -> list[str]:
    """The text over n chunks, character i in chunk floor(i * n / len) (as tau2 spreads an utterance)."""
    parts = [""] * n_chunks
    for i, char in enumerate(text):
        parts[i * n_chunks // len(text)] += char
    return parts


def paced_utterance(text: str, side: Side, *, tick_ms: int, index: int) -> Utterance:
    """The text as tick chunks of a tone lasting as long as the text takes to say."""
    seconds = len(text) / CHARS_PER_SECOND
    n = max(1, math.ceil(seconds * 1000 / tick_ms))
    uid = utterance_id(side, index, text)
    audio = fit(tone(side, tick_ms), tick_ms)
    chunks = tuple(Chunk(audio=audio, text=part, speech=True, utterance=uid) for part in spread(text, n))
    return Utterance(chunks=chunks, text=text)


NUMBER_WORDS = {
    "zero": "0",
    "oh": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
}
CONTROL_TOKENS = re.compile(r"###[A-Z-]+###")


def speech_words(text: str) -> list[str]:
    """Text as comparable spoken tokens: lower case, punctuation and control tokens dropped, a digit or digit word each one."""
    tokens = re.findall(r"[a-z]+|\d", CONTROL_TOKENS.sub(" ", text).lower().replace("'", ""))
    return [NUMBER_WORDS.get(token, token) for token in tokens]


def edit_distance(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Word-level Levenshtein distance (substitutions, deletions and insertions cost 1)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, start=1):
        current = [i]
        for j, hyp in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Edit distance between the spoken tokens over the reference's length (an empty reference: 0, or 1 if anything was heard)."""
    ref, hyp = speech_words(reference), speech_words(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    return edit_distance(ref, hyp) / len(ref)
