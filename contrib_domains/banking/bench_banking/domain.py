"""The banking domain: AgentChangeBench's files when a data directory holds them, else our own generated suite."""

from __future__ import annotations

import os
import re
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import Domain, DomainData, DomainOptions, State, Task, data_dir_for, read_tasks

from .records import read_db, state_from
from .tools import BankingTools, CompatBankingTools

COMPAT_VARIABLE = "BENCH_BANKING_COMPAT"
ACB_FILES = ("db.toml", "tasks.json", "policy.md")


@attrs.define(kw_only=True)
class BankingDomain(Domain):
    """Retail banking: accounts, cards, statements, transactions, bill payments, disputes, task parking."""

    name: str = "banking"
    description: str = "Retail banking (AgentChangeBench's tools, two defects fixed); our own generated suite by default."
    compat: bool | None = None
    """Keep AgentChangeBench's two tool defects (default: ${BENCH_BANKING_COMPAT}=1)."""

    def load(self, options: DomainOptions) -> DomainData:
        """AgentChangeBench's db.toml, tasks.json and policy.md from options.data_dir, else our packaged suite."""
        external = data_dir_for(options, "banking", ACB_FILES)
        if external is not None:
            return self._load(external, external / "db.toml", external / "tasks.json", options)
        with as_file(files(__package__).joinpath("data")) as packaged:
            root = Path(packaged)
            return self._load(root, root / "db.json", root / "tasks.json", options)

    def _load(self, root: Path, db: Path, tasks: Path, options: DomainOptions) -> DomainData:
        compat = self.compat if self.compat is not None else os.environ.get(COMPAT_VARIABLE) == "1"
        solo = root / "policy_solo.md"
        data = DomainData(
            name=self.name,
            tasks=read_tasks(tasks, options),
            policy=(root / "policy.md").read_text(encoding="utf-8"),
            solo_policy=solo.read_text(encoding="utf-8") if solo.is_file() else None,
            agent_toolkit=CompatBankingTools if compat else BankingTools,
            agent_state=state_from(read_db(db), str(db)),
            source=str(root),
            tool_results="tau2",  # AgentChangeBench is a tau2 fork: its tool texts
            failed_gold_actions_scored=True,
        )
        return attrs.evolve(data, task_problems=tuple(p for t in data.tasks for p in inconsistencies(t, data.agent_state)))


ID_TABLES = {
    "customer_id": "customers",
    "account_id": "accounts",
    "from_account_id": "accounts",
    "card_id": "cards",
    "tx_id": "transactions",
    "payee_id": "payees",
    "to_payee_id": "payees",
    "statement_id": "statements",
}
CREATED = re.compile(r"^(PY|PR|TX|DP|PT)_[0-9a-f]{8}$")
OWNED = {"accounts": "account_ids", "cards": "card_ids", "payees": "payee_ids"}


def inconsistencies(task: Task, state: State) -> list[str]:
    """Ids a task expects that the database lacks, or that belong to another customer than the task's."""
    customer = _task_customer(task)
    owner = state["customers"].get(customer) if customer else None
    found = []
    for tool, params in _expected_calls(task):
        for key, value in params.items():
            table = ID_TABLES.get(key)
            if table is None or not isinstance(value, str) or CREATED.match(value):
                continue  # ids the tools create during the task (PY_00000001, ...) exist only later
            if value not in state[table]:
                found.append(f"task {task.id!r}: {tool}({key}={value!r}): no such record in the database")
            elif owner is not None and table in OWNED and value not in getattr(owner, OWNED[table]):
                found.append(f"task {task.id!r}: {tool}({key}={value!r}) belongs to another customer than {customer!r}")
            elif owner is not None and table == "transactions" and state[table][value].account_id not in owner.account_ids:
                found.append(f"task {task.id!r}: {tool}({key}={value!r}) is on an account of another customer than {customer!r}")
    return found


def _task_customer(task: Task) -> str | None:
    init = task.initial_state
    user_data = init.initialization_data.user_data if init and init.initialization_data else None
    return (user_data or {}).get("customer_id")


def _expected_calls(task: Task) -> list[tuple[str, dict[str, Any]]]:
    calls = [(a.name, dict(a.arguments)) for a in task.gold_actions()]
    for action in task.oracle_actions() if not calls else []:
        calls.append((action.name, dict(action.arguments)))
    sets = task.extension("action_sets")
    for action_set in getattr(sets, "sets", None) or []:
        calls += [(t.function_name, dict(t.params)) for t in action_set.allowed_tools[1:]]
    return calls
