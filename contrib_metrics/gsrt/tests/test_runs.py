"""Goal shifts injected into any domain: the scripted user shifts at a recorded turn and GSRT is measured from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_kernel import RunConfig, Store, run


@pytest.mark.parametrize("domain", ["telecom", "airline", "mock"])
def test_a_run_with_gsrt_gets_one_shift_per_conversation_and_figures_per_persona(tmp_path: Path, domain: str) -> None:
    summary = run(RunConfig(domain=domain, plugins=[domain, "gsrt"], num_tasks=6), tmp_path / "r.db")
    assert summary.status == "complete"
    store = Store(tmp_path / "r.db")
    try:
        events = list(
            store.db.query(
                "select e.message_index, e.data_json, c.id from conversation_events e join conversations c "
                "on c.id = e.conversation_id where e.kind = 'goal.shift' and c.arm = 'agent'"
            )
        )
        values = {
            r["conversation_id"]: (r["value"], json.loads(r["details_json"])["shifts"][0]["transferred"])
            for r in store.db.query(
                "select conversation_id, value, details_json from metric_values where plugin = 'gsrt' and metric = 'gsrt' and value is not null"
            )
        }
        messages = {e["id"]: store.messages(e["id"]) for e in events}
    finally:
        store.close()
    assert len(events) >= 5
    for event in events:
        said = messages[event["id"]][event["message_index"]]
        assert said["role"] == "user"  # the event sits on the message that raised the new goal
        assert json.loads(event["data_json"])["goal_index"] == 1
    # The oracle takes up every new goal; a goal whose gold is a hand-over to a human counts as not recovered (GSRT's rule).
    assert all(value == (0.0 if transferred else 1.0) for value, transferred in (values[e["id"]] for e in events))


def test_an_explicit_plan_and_an_unknown_id_in_it(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"task": "upgrade_by_email", "then": ["wifi_switched_off"]}]))
    summary = run(RunConfig(domain="mock", plugins=["mock", "gsrt"], plugin_settings={"shift_plan": str(plan)}), tmp_path / "r.db")
    store = Store(tmp_path / "r.db")
    try:
        ids = {r["task_id"] for r in store.conversations(summary.run_id)}
    finally:
        store.close()
    assert ids == {"upgrade_by_email+wifi_switched_off"}
    plan.write_text(json.dumps([{"task": "upgrade_by_email", "then": ["no_such_task"]}]))
    with pytest.raises(Exception, match="shift plan names unknown task ids: no_such_task"):
        run(RunConfig(domain="mock", plugins=["mock", "gsrt"], plugin_settings={"shift_plan": str(plan)}), tmp_path / "s.db")
