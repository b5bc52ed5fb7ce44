"""Both adapters pass the kernel's realtime conformance suite against the fake server of their protocol."""

from __future__ import annotations

from bench_duplex.testing import FakeGeminiLiveServer, FakeOpenAIRealtimeServer, RealtimeConformance
from bench_realtime.gemini import GeminiLiveAdapter
from bench_realtime.openai import OpenAIRealtimeAdapter


class TestOpenAIRealtime(RealtimeConformance):
    adapter = OpenAIRealtimeAdapter
    server = FakeOpenAIRealtimeServer


class TestGeminiLive(RealtimeConformance):
    adapter = GeminiLiveAdapter
    server = FakeGeminiLiveServer
