"""The seam conformance kits pass this repository's own plugins: contrib metrics and sections, bench-llm participants."""

from __future__ import annotations

from typing import ClassVar

import pytest
from bench_llm.testing import ScriptedModel, ScriptedModelPlugin

from bench_kernel import ChatResponse, Mode, ModelConfig
from bench_kernel.testing import AgentConformance, MetricConformance, ReportSectionConformance, UserSimulatorConformance


@pytest.mark.parametrize(
    "plugin, name",
    [
        ("gsrt", "gsrt"),
        ("mmtap", "mmtap"),
        ("changebench", "tsr"),
        ("changebench", "tue"),
        ("changebench", "tcrr"),
        ("atod", "mra"),
        ("atod", "ntc"),
        ("atod", "pe"),
    ],
)
def test_contrib_metrics_conform(plugin: str, name: str):
    class Kit(MetricConformance):
        pass

    Kit.plugin, Kit.name = plugin, name
    kit = Kit()
    kit.test_conformance_registration()
    kit.test_conformance_scores()
    kit.test_conformance_run()
    kit.test_conformance_summary_of_an_empty_run()


class TestAtodSection(ReportSectionConformance):
    plugin = "atod"


SCRIPTED = ScriptedModel(
    scripts={
        "agent-m": lambda request: ChatResponse(content="Your note is saved."),
        "user-m": lambda request: ChatResponse(content="Thanks, that's all. ###STOP###"),
    }
)


class TestLlmFunctionCallingAgent(AgentConformance):
    plugin = "llm"
    name = "llm-fc"
    extra = (("scripted-model", ScriptedModelPlugin(SCRIPTED)),)
    models: ClassVar[dict[str, ModelConfig]] = {"agent": ModelConfig(backend="scripted", model="agent-m")}
    modes = (Mode.DEFAULT,)
    expect_stop = True  # the scripted user stops


class TestLlmUser(UserSimulatorConformance):
    plugin = "llm"
    name = "llm-user"  # bench-llm also registers voice-user (full duplex only: the kit plays turn-based conversations)
    extra = (("scripted-model", ScriptedModelPlugin(SCRIPTED)),)
    models: ClassVar[dict[str, ModelConfig]] = {"user": ModelConfig(backend="scripted", model="user-m")}
