"""What plugin authors test with: the conformance kit, pytest fixtures and a fake OpenAI server."""

from bench_kernel.cli import cli
from bench_kernel.testing.fake_openai import FakeOpenAIServer, ReceivedRequest, Reply, echo_responder

__all__ = ["FakeOpenAIServer", "ReceivedRequest", "Reply", "cli", "echo_responder"]
