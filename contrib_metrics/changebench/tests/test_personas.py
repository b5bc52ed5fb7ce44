"""Persona keys become texts per domain; AgentChangeBench's own persona file overrides ours; --persona applies to any task;
a key no text is known for is still the conversations' persona attribute."""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs
import pytest
from bench_changebench import PersonaTransform

from bench_kernel import ConfigError, RunConfig, Store, collect, get_plugin_manager, load_domain, run

ACB = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "agentchangebench"


def airline_tasks() -> Path:
    path = ACB / "airline" / "tasks_new.json"
    if not path.is_file():
        pytest.skip(f"AgentChangeBench's task files are not at {ACB} (they live in ../shared/reference)")
    return path


def test_keys_get_our_texts_per_domain_and_the_key_is_kept() -> None:
    registry = collect(get_plugin_manager(["airline", "changebench"]))
    data = load_domain(registry, RunConfig(domain="airline", tasks_file=str(airline_tasks())))
    task = data.tasks[0]
    assert task.attributes["persona"] == "EASY_1"
    assert "flight reservations" in (task.user_scenario.persona or "")


def test_agentchangebenchs_persona_file_overrides_our_texts() -> None:
    registry = collect(get_plugin_manager(["airline", "changebench"]))
    config = RunConfig(
        domain="airline", tasks_file=str(airline_tasks()), plugin_settings={"persona_file": str(ACB / "airline" / "user_personas.json")}
    )
    data = load_domain(registry, config)
    texts = json.loads((ACB / "airline" / "user_personas.json").read_text())
    assert data.tasks[0].user_scenario.persona == texts[data.tasks[0].attributes["persona"]]


def test_persona_applies_to_any_domains_tasks_and_is_stored(tmp_path: Path) -> None:
    config = RunConfig(domain="mock", plugins=["mock"], plugin_settings={"persona": "Hard"}, baseline=False, num_tasks=2)
    summary = run(config, tmp_path / "r.db")  # the persona setting loads bench-changebench with the plugins named
    store = Store(tmp_path / "r.db")
    try:
        rows = store.conversations(summary.run_id)
    finally:
        store.close()
    assert [json.loads(r["attributes_json"])["persona"] for r in rows] == ["Hard", "Hard"]
    with pytest.raises(ConfigError, match="unknown persona 'MEDIUM_9'"):
        run(RunConfig(domain="mock", plugins=["mock"], plugin_settings={"persona": "MEDIUM_9"}), tmp_path / "s.db")


def test_a_key_no_text_is_known_for_is_still_the_persona_attribute_and_a_text_is_not() -> None:
    registry = collect(get_plugin_manager(["mock", "changebench"]))
    data = load_domain(registry, RunConfig(domain="mock"))
    first, second = data.tasks[:2]
    keyed = attrs.evolve(first, user_scenario=attrs.evolve(first.user_scenario, persona="ZZZ_9"))
    texted = attrs.evolve(second, user_scenario=attrs.evolve(second.user_scenario, persona="A calm retired sailor."))
    played = PersonaTransform().tasks(data, [keyed, texted], {}, registry)
    assert played[0].attributes["persona"] == "ZZZ_9" and played[0].user_scenario.persona == "ZZZ_9"
    assert "persona" not in played[1].attributes
