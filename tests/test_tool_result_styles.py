"""Which domains send tau2's tool-result rendering (its tool messages, byte for byte) and which send plain JSON."""

from __future__ import annotations

import json

import pytest

import bench_kernel


def loaded(plugin: str) -> bench_kernel.DomainData:
    registry = bench_kernel.collect(bench_kernel.get_plugin_manager([plugin]))
    domain: bench_kernel.Domain = registry.get("domain", plugin)
    return domain.load(bench_kernel.DomainOptions(vocabulary=bench_kernel.task_vocabulary(registry)))


@pytest.mark.parametrize(
    ("plugin", "style"), [("airline", "tau2"), ("retail", "tau2"), ("telecom", "tau2"), ("banking", "tau2"), ("mock", "json"), ("services", "json")]
)
def test_tau2_domains_keep_tau2s_rendering_and_our_own_send_plain_json(plugin: str, style: str) -> None:
    data = loaded(plugin)
    assert data.tool_results == style
    assert build_env_style(data) == style


def build_env_style(data: bench_kernel.DomainData) -> str:
    return bench_kernel.build_environment(data, data.tasks[0]).tool_results


def test_a_mock_tool_result_keeps_its_numbers() -> None:
    data = loaded("mock")
    env = bench_kernel.build_environment(data, None)
    call = bench_kernel.ToolCall(id="c1", name="list_plans", arguments={}, requestor="assistant")
    plans = json.loads(env.execute(call).content or "null")
    assert any(
        isinstance(value, float | int) and not isinstance(value, bool)
        for plan in (plans if isinstance(plans, list) else plans.values())
        for value in plan.values()
    ), plans
