"""docs/plugins.md against the code: every name it gives resolves, every hook is documented, its examples run."""

from __future__ import annotations

import inspect
import json
import re
import types
from pathlib import Path

import attrs
import pytest

import bench_kernel
import bench_kernel.testing
from bench_kernel import hookspecs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
README = Path(__file__).resolve().parents[2] / "README.md"
# The guide and the README are the workspace's, not the kernel distribution's: its wheel tested alone has neither.
pytestmark = pytest.mark.skipif(not DOCS.is_file(), reason=f"the workspace's docs are not at {DOCS} (kernel tested outside the repository)")


def text() -> str:
    return DOCS.read_text(encoding="utf-8")


def test_every_bench_kernel_name_in_the_guide_exists() -> None:
    missing = []
    for module_name, name in re.findall(r"`(bench_kernel(?:\.testing)?)\.([A-Za-z_]+)", text()):
        module = bench_kernel.testing if module_name.endswith("testing") else bench_kernel
        if not hasattr(module, name) and not (module is bench_kernel.testing and name == "pytest_plugin"):
            missing.append(f"{module_name}.{name}")
    assert not missing, missing


def test_every_hookspec_is_documented_in_the_table_and_a_section() -> None:
    specs = [name for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")]
    doc = text()
    undocumented = [s for s in specs if f"`{s}(" not in doc or not re.search(rf"^### .*{s}", doc, re.M)]
    assert not undocumented, undocumented


def test_every_hook_the_guide_names_exists() -> None:
    named = set(re.findall(r"`(register_[a-z_]+)\(", text()))
    assert named <= set(dir(hookspecs)), named - set(dir(hookspecs))


def test_the_python_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", text(), re.S)
    assert blocks, "the guide has no python example"
    for block in blocks:
        source = "\n".join(line[2:] if line.startswith("  ") else line for line in block.splitlines())
        namespace: dict[str, object] = {}
        exec(compile(source, str(DOCS), "exec"), namespace)


def test_the_metric_template_scores_a_conversation(tmp_path: Path) -> None:
    from seam_plugins import SeamPlugin
    from test_seams import SHIFT_TASK
    from toy_domain import ToyDomain, ToyPlugin

    acme = types.ModuleType("bench_acme")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text(), re.S) if "class ShiftRecovery" in b)
    exec(compile(block, str(DOCS), "exec"), acme.__dict__)
    plugins = bench_kernel.get_plugin_manager([], extra=[("toy", ToyPlugin(ToyDomain(tasks=[SHIFT_TASK]))), ("seams", SeamPlugin()), ("acme", acme)])
    summary = bench_kernel.run(bench_kernel.RunConfig(domain="toy", user="shifting", baseline=False), tmp_path / "r.db", plugins=plugins)
    store = bench_kernel.Store(tmp_path / "r.db")
    try:
        values = {v["metric"]: v["value"] for v in store.metric_values(summary.run_id) if v["plugin"] == "acme"}
        rows = list(store.db.query("select goal, turns from recovery_turns"))
    finally:
        store.close()
    assert values == {"recovery.shifts": 1.0, "recovery.mean_turns": float(rows[0]["turns"])}
    assert rows[0]["goal"] == "read b" and rows[0]["turns"] >= 1


def test_every_field_of_the_metric_context_has_its_line() -> None:
    section = text().split("### register_metrics", 1)[1].split("\n### ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
    fields = {f.name for f in attrs.fields(bench_kernel.MetricContext)} | {"messages"}
    assert fields <= listed, sorted(fields - listed)


def test_the_readme_quickstart_has_exactly_two_commands() -> None:
    readme = README.read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", quickstart, re.S)
    assert block is not None
    commands = [line for line in block.group(1).splitlines() if line.strip() and not line.strip().startswith("#")]
    assert [c.split("#")[0].strip() for c in commands] == ["bash scripts/dev.sh demo", "bash scripts/dev.sh test"]


TASKS_DOC = DOCS.with_name("tasks.md")
TASK_RECORDS = (
    "Task",
    "Description",
    "UserScenario",
    "StructuredUserInstructions",
    "InitialState",
    "InitializationData",
    "EnvFunctionCall",
    "EvaluationCriteria",
    "Action",
    "EnvAssertion",
    "RewardRule",
)


def test_every_task_field_is_documented_in_its_records_table() -> None:
    doc = TASKS_DOC.read_text(encoding="utf-8")
    missing = []
    for name in TASK_RECORDS:
        heading = re.search(rf"^#+ .*`bench_kernel\.{name}`.*$", doc, re.M)
        assert heading is not None, f"docs/tasks.md has no section for {name}"
        table = doc[heading.end() :].split("\n#", 1)[0]
        missing += [f"{name}.{f.name}" for f in attrs.fields(getattr(bench_kernel, name)) if f"| `{f.name}` |" not in table]
    assert not missing, missing


def test_the_task_file_example_loads() -> None:
    block = re.search(r"```json\n(.*?)```", TASKS_DOC.read_text(encoding="utf-8"), re.S)
    assert block is not None
    tasks = bench_kernel.structure_tasks(json.loads(block.group(1)), source="docs/tasks.md")
    assert tasks[0].evaluation_criteria is not None and tasks[0].evaluation_criteria.reward_basis == ["DB", "COMMUNICATE"]
    assert [a.action_id for a in tasks[0].gold_actions()] == ["a1", "a2"]
