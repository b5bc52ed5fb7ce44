"""What a realtime adapter's tests use: fake realtime servers on 127.0.0.1 and the adapters' conformance suite."""

from .fake_realtime import FakeGeminiLiveServer, FakeOpenAIRealtimeServer, FakeRealtimeServer, ScriptedCall, ScriptedResponse, voice
from .realtime_conformance import (
    RealtimeConformance,
    check_audio,
    check_connection_failures,
    check_dropped_socket,
    check_function_call,
    check_interruption,
    check_malformed_event,
    check_server_error,
    check_setup,
    check_user_audio,
    conformance_settings,
)

__all__ = [
    "FakeGeminiLiveServer",
    "FakeOpenAIRealtimeServer",
    "FakeRealtimeServer",
    "RealtimeConformance",
    "ScriptedCall",
    "ScriptedResponse",
    "check_audio",
    "check_connection_failures",
    "check_dropped_socket",
    "check_function_call",
    "check_interruption",
    "check_malformed_event",
    "check_server_error",
    "check_setup",
    "check_user_audio",
    "conformance_settings",
    "voice",
]
