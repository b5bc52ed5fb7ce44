"""A third party's pharmacy domain with two tool bugs that fail no gold action: a write tool that makes random ids
(uuid4) and one that edits a shared record in place. Installed as a distribution, it is refused by its conformance kit,
by `bench check` and by `bench run` (before any conversation is stored), each naming the tool, the task and the fix.

Everything is real: the distribution is installed into a temporary directory, `bench` and pytest run in subprocesses
with it on PYTHONPATH, and the run writes a real SQLite store.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import pytest
from plugin_factory import PluginPackage, bench_env, install, run_bench

PHARMACY = PluginPackage(
    dist="bench-pharmacy",
    module="bench_pharmacy",
    entry="pharmacy",
    source='''\
    """A pharmacy desk: patients, prescriptions and orders (two bugs in it: see refill_prescription and place_order)."""

    import uuid
    from collections.abc import Callable
    from typing import Literal

    import attrs

    import bench_kernel
    from bench_kernel import Domain, DomainData, DomainOptions, State, ToolError, ToolKind, Toolkit, tool

    POLICY = "You are the pharmacy's assistant. Refill prescriptions with refills left; place and cancel orders."


    @attrs.define
    class Prescription:
        rx_id: str
        patient_id: str
        drug: str
        refills_left: int


    class PharmacyTools(Toolkit):
        """The pharmacy's desk."""

        @tool(ToolKind.READ)
        def get_patient(self, patient_id: str) -> dict:
            """Look a patient up.

            Args:
                patient_id: The patient's id, e.g. 'P1'.
            """
            if patient_id not in self.state.patients:
                raise ToolError(f"Patient {patient_id} not found")
            return self.state.patients[patient_id]

        @tool(ToolKind.READ)
        def find_prescriptions(self, patient_id: str) -> list:
            """Every prescription of a patient.

            Args:
                patient_id: The patient's id.
            """
            return [rx for rx in self.state.prescriptions.values() if rx.patient_id == patient_id]

        @tool(ToolKind.WRITE)
        def refill_prescription(self, rx_id: str) -> Prescription:
            """Refill a prescription, using one of its refills.

            Args:
                rx_id: The prescription's id, e.g. 'RX-1'.
            """
            if rx_id not in self.state.prescriptions:
                raise ToolError(f"Prescription {rx_id} not found")
            rx = self.state.prescriptions[rx_id]
            if rx.refills_left < 1:
                raise ToolError(f"Prescription {rx_id} has no refills left")
            rx.refills_left -= 1  # BUG: the shared record itself
            return rx

        @tool(ToolKind.WRITE)
        def place_order(self, patient_id: str, rx_id: str, delivery: Literal["pickup", "courier"]) -> dict:
            """Order a prescription's drug for a patient.

            Args:
                patient_id: The patient's id.
                rx_id: The prescription to fill.
                delivery: 'pickup' at the counter or 'courier' to the patient's address.
            """
            if rx_id not in self.state.prescriptions:
                raise ToolError(f"Prescription {rx_id} not found")
            order_id = f"ORD-{uuid.uuid4().hex[:8]}"  # BUG: a random id
            order = {"order_id": order_id, "patient_id": patient_id, "rx_id": rx_id, "delivery": delivery,
                     "status": "placed"}
            self.state.orders[order_id] = order
            return order

        @tool(ToolKind.WRITE)
        def cancel_order(self, order_id: str) -> dict:
            """Cancel an order that has not shipped.

            Args:
                order_id: The order's id.
            """
            if order_id not in self.state.orders:
                raise ToolError(f"Order {order_id} not found")
            order = self.state.orders.edit(order_id)
            order["status"] = "cancelled"
            return order


    def _task(task_id, ask, actions, communicate=()):
        return {"id": task_id, "ticket": ask,
                "user_scenario": {"instructions": {"domain": "pharmacy", "reason_for_call": ask, "task_instructions": ask}},
                "evaluation_criteria": {"actions": [{"action_id": str(i), "name": name, "arguments": args}
                                                    for i, (name, args) in enumerate(actions, 1)],
                                        "communicate_info": list(communicate),
                                        "reward_basis": ["DB", "COMMUNICATE"] if communicate else ["DB"]}}


    TASKS = [
        _task("lookup-1", "Patient P1 asks for the phone number on file.", [("get_patient", {"patient_id": "P1"})],
              communicate=["5550101"]),
        _task("refill-1", "Patient P1 wants her amoxicillin refilled.",
              [("get_patient", {"patient_id": "P1"}), ("find_prescriptions", {"patient_id": "P1"}),
               ("refill_prescription", {"rx_id": "RX-1"})]),
        _task("order-1", "Patient P2 wants his ibuprofen delivered by courier.",
              [("get_patient", {"patient_id": "P2"}),
               ("place_order", {"patient_id": "P2", "rx_id": "RX-2", "delivery": "courier"})]),
        _task("cancel-1", "Patient P2 cancels order ORD-100.", [("cancel_order", {"order_id": "ORD-100"})]),
        _task("refill-2", "Patient P2 wants his ibuprofen refilled.", [("refill_prescription", {"rx_id": "RX-2"})]),
    ]


    @attrs.define(kw_only=True)
    class PharmacyDomain(Domain):
        name: str = "pharmacy"

        def load(self, options: DomainOptions) -> DomainData:
            records = {
                "patients": {"P1": {"name": "Ana Ruiz", "phone": "5550101"}, "P2": {"name": "Ben Okafor", "phone": "5550102"}},
                "prescriptions": {"RX-1": {"rx_id": "RX-1", "patient_id": "P1", "drug": "amoxicillin", "refills_left": 2},
                                  "RX-2": {"rx_id": "RX-2", "patient_id": "P2", "drug": "ibuprofen", "refills_left": 1}},
                "orders": {"ORD-100": {"order_id": "ORD-100", "patient_id": "P2", "rx_id": "RX-2", "delivery": "pickup",
                                       "status": "placed"}},
            }
            return DomainData(name=self.name, tasks=bench_kernel.structure_tasks(TASKS, options.vocabulary, source="pharmacy"),
                              policy=POLICY, agent_toolkit=PharmacyTools,
                              agent_state=State.from_records(records, {"prescriptions": Prescription}), source="bench_pharmacy")


    @bench_kernel.hookimpl
    def register_domains(register: Callable[[Domain], None]) -> None:
        register(PharmacyDomain())
    ''',
)

KIT = """\
from bench_kernel.testing import DomainConformance


class TestConformance(DomainConformance):
    plugin = "pharmacy"
"""

IN_PLACE = (
    "tool 'refill_prescription' (PharmacyTools in bench_pharmacy) edits a shared record in place: task "
    "'refill-1', gold action 3: changed record 'RX-1' of table 'prescriptions', which every conversation of a "
    "run shares. Fix: change a private copy (`record = self.state.prescriptions.edit(key)`) or assign a new "
    "record (`self.state.prescriptions[key] = ...`); never change what `table[key]` returns"
)
RANDOM_IDS = (
    "tool 'place_order' (PharmacyTools in bench_pharmacy) is not deterministic: task 'order-1', gold action 2: returned '{\"order_id\": \"ORD-"
)
RANDOM_IDS_FIX = (
    "Fix: derive new ids and values from the state (e.g. a counter over the table's keys, or a hash of the "
    "arguments), never from uuid4, random or the clock"
)


@attrs.frozen
class Site:
    path: Path
    cwd: Path

    def bench(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_bench(args, bench_env([self.path]), self.cwd)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("pharmacy")
    path, _ = install([PHARMACY], root)
    work = root / "work"
    work.mkdir()
    return Site(path=path, cwd=work)


def test_the_conformance_kit_fails_naming_each_tool_and_its_fix(site: Site) -> None:
    (site.cwd / "test_conformance.py").write_text(textwrap.dedent(KIT))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", "-rN", "test_conformance.py"],
        env=bench_env([site.path]),
        cwd=site.cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("3 failed, 5 passed")
    failures = {section.split(" ")[0]: section for section in done.stdout.split("_ TestConformance.")[1:]}
    assert set(failures) == {"test_conformance_shared_records", "test_conformance_gold_deterministic", "test_conformance_short_run"}
    assert IN_PLACE in failures["test_conformance_shared_records"]
    assert "(the same" not in failures["test_conformance_shared_records"]  # one finding per task: refill-2 is its own
    assert "task 'refill-2', gold action 1: changed record 'RX-2'" in failures["test_conformance_shared_records"]
    assert RANDOM_IDS in failures["test_conformance_gold_deterministic"]
    assert RANDOM_IDS_FIX in failures["test_conformance_gold_deterministic"]
    assert "plugin 'pharmacy': domain 'pharmacy' cannot be run" in failures["test_conformance_short_run"]


def test_bench_check_exits_non_zero_naming_tool_and_task_with_the_task_count(site: Site) -> None:
    done = site.bench("check", "--plugin", "pharmacy")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "pharmacy: 5 tasks, gold replay ok for 2, failing 3"
    assert f"  FAIL refill-1: {IN_PLACE}" in lines
    assert [line for line in lines if line.startswith("  FAIL order-1: ")] == [
        line for line in lines if line.startswith(f"  FAIL order-1: {RANDOM_IDS}") and line.endswith(RANDOM_IDS_FIX)
    ]
    assert any(line.startswith("  FAIL refill-2: tool 'refill_prescription' ") for line in lines)
    assert len([line for line in lines if line.startswith("  FAIL ")]) == 3  # nothing the faults made look broken
    assert not any(line.startswith("  passed by the do-nothing agent") for line in lines)


def test_bench_run_refuses_before_storing_any_conversation(site: Site) -> None:
    db = site.cwd / "runs.db"
    sound = site.bench("run", "--plugin", "pharmacy", "--task-id", "lookup-1", "--task-id", "cancel-1", "--db", str(db))
    assert sound.returncode == 0, sound.stderr  # the sound tasks alone run
    before = _stored(db)
    done = site.bench("run", "--plugin", "pharmacy", "--db", str(db), "--allow-broken-tasks")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    [error] = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith(
        "Error: plugin 'pharmacy': domain 'pharmacy' cannot be run, 3 of its tasks show a tool that "
        "leaves them unscorable whatever the agent does (as `bench check` reports; no conversation "
        "is stored): "
    )
    assert f"is stored): (1) {IN_PLACE} (the same in task 'refill-2'). (2) {RANDOM_IDS}" in error
    assert error.endswith(RANDOM_IDS_FIX + ".")
    assert _stored(db) == before and before[1] == 4  # one run, two tasks in two arms: nothing added


def _stored(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as connection:
        runs = connection.execute("select count(*) from runs").fetchone()[0]
        conversations = connection.execute("select count(*) from conversations").fetchone()[0]
    return runs, conversations
