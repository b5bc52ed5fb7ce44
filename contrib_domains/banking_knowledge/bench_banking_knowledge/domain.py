"""The banking_knowledge domain: what `bench` loads when a run names it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
from bench_knowledge import KnowledgeBase, RetrievalSettings, knowledge_toolkit, resolve_variant, retrieval_refusal

from bench_kernel import (
    ConfigError,
    Domain,
    DomainData,
    DomainOptions,
    Task,
    data_dir_for,
    packaged_or_external,
    read_json,
    structure_tasks,
)

from .db import ReferenceHasher, state_from_json
from .policy import PolicyPlan, build_policy
from .tasks import lenient_task_json
from .tools import BankingKnowledgeTools
from .user_tools import BankingKnowledgeUserTools

NAME = "banking_knowledge"
DEFAULT_VARIANT = "bm25"
"""bench's default: exact offline (tau2's own default, alltools, needs an embeddings model and a sandbox)."""

POLICY_DOCUMENTS = {"standard": "none", "full_kb": "all", "golden": "required"}
PROVIDERS = {"openai": "OpenAI", "openrouter": "OpenRouter"}


@attrs.define(kw_only=True)
class BankingKnowledgeDomain(Domain):
    """A bank help desk whose policy lives in a knowledge base (tau2-bench's banking_knowledge, hash-exact)."""

    name: str = NAME
    description: str = (
        "Bank help desk with its policy in a knowledge base, hidden tools named only in the documents; "
        "tau2-bench's banking_knowledge with its exact DB hash."
    )

    def load(self, options: DomainOptions) -> DomainData:
        """Read tau2's files from a data directory when one is given, else our packaged suite."""
        return load_from(find_data_dir(options), options, self.name)


def find_data_dir(options: DomainOptions) -> Path:
    """The external data directory (`--data-dir` or $BENCH_TAU2_DATA_DIR) or our packaged `data/`."""
    external = data_dir_for(options, NAME, required=("db.json",))
    if external is not None:
        return external
    return packaged_or_external(__package__, DomainOptions(), NAME)


def load_from(data_dir: Path, options: DomainOptions, name: str = NAME) -> DomainData:
    """The domain's data from one directory: db.json, documents/, prompts/, tasks/task_*.json."""
    settings = resolve_variant(options.retrieval or DEFAULT_VARIANT, options.retrieval_options)
    why_not = retrieval_refusal(settings, profile=options.profile)  # also a profile text of bench-knowledge's misspelt
    if why_not is not None:
        raise ConfigError(why_not)
    kb = KnowledgeBase.from_directory(data_dir / "documents")
    tasks, problems = load_tasks(data_dir, options)
    state, notes = state_from_json(read_json(data_dir / "db.json"), str(data_dir / "db.json"))
    hasher = ReferenceHasher(notes)
    prompts, plan = data_dir / "prompts", policy_plan(settings, options.profile)
    return DomainData(
        name=name,
        tasks=tasks,
        policy=build_policy(prompts, plan, kb.documents),
        task_policy=_task_policy(prompts, plan, kb),
        agent_toolkit=knowledge_toolkit(BankingKnowledgeTools, kb, settings),
        agent_state=state,
        user_toolkit=BankingKnowledgeUserTools,
        shared_user_state=True,  # tau2 keeps one database for both sides
        reference_hash=hasher,
        reference_user_hash=hasher,
        tool_results="tau2",  # tool messages exactly as tau2 renders them
        failed_gold_actions_scored=True,  # tau2 swallows a failing gold action and scores against what is left
        retrieval=settings.name,
        agent_data_patch=table_patches,
        model_roles=settings.model_roles(),
        source=str(data_dir),
        task_problems=tuple(problems),
    )


def policy_plan(settings: RetrievalSettings, profile: Any = None) -> PolicyPlan:
    """How a variant's policy is made from the prompt files (the dense search's sentence from the profile when it
    has one for this variant: tau2 writes it in code, so `bench tau2 profile` dumps it)."""
    variant = settings.variant
    dense = None
    if variant.all_tools and variant.embedding_provider and variant.embedding_model:
        dense = (PROVIDERS.get(variant.embedding_provider, variant.embedding_provider), variant.embedding_model)
    formats = profile.discoverable_formats(NAME) if profile is not None else {}
    return PolicyPlan(
        template=variant.template,
        documents=POLICY_DOCUMENTS[variant.policy],
        dense=dense,
        dense_text=formats.get(f"dense_instructions.{settings.name}"),
    )


def _task_policy(prompts: Path, plan: PolicyPlan, kb: KnowledgeBase) -> Callable[[Task], str] | None:
    if plan.documents != "required":
        return None
    return lambda task: build_policy(prompts, plan, kb.documents, task)


def load_tasks(data_dir: Path, options: DomainOptions) -> tuple[list[Task], list[str]]:
    """tau2's tasks (one file per task, by file name; `--tasks-file` for a list) as tau2 reads them, and what it ignores."""
    if options.split not in (None, "base"):
        raise ConfigError(f"{NAME} has no task splits (tau2 loads every task): drop --split {options.split}")
    sources: list[str] | None = None
    if options.tasks_file is not None:
        raw = read_json(options.tasks_file)
        items = raw["tasks"] if isinstance(raw, dict) and "tasks" in raw else raw
        source = str(options.tasks_file)
    else:
        files = sorted((data_dir / "tasks").glob("task_*.json"))
        if not files:
            raise ConfigError(f"no tasks in {data_dir / 'tasks'}: expected task_*.json files")
        items = [read_json(path) for path in files]
        source, sources = str(data_dir / "tasks"), [str(path) for path in files]
    if not isinstance(items, list):
        raise ConfigError(f"{source}: expected a list of tasks")
    problems: list[str] = []
    owned = [ext.location for ext in options.vocabulary.extensions] if options.vocabulary else []
    cleaned = [lenient_task_json(item, problems, owned) for item in items]
    tasks = structure_tasks(cleaned, options.vocabulary, source=source, sources=sources)
    for task, file in zip(tasks, sources or [source] * len(tasks), strict=True):
        _check_table_patches(task, file)
    return tasks, problems


def _check_table_patches(task: Task, source: str) -> None:
    init = task.initial_state
    if init is not None and init.initialization_data is not None and init.initialization_data.agent_data:
        for table, body in init.initialization_data.agent_data.items():
            _table_records(source, table, body)


def table_patches(agent_data: Mapping[str, Any]) -> dict[str, Any]:
    """tau2's `{table: {"data": {id: fields}}}` patches as the kernel's `{table: {id: fields}}` (notes are never
    patched); the tasks keep tau2's spelling, so an exported task is the file's own."""
    return {table: dict((body or {}).get("data") or {}) for table, body in agent_data.items()}


def _table_records(source: str, table: str, body: Any) -> dict[str, Any]:
    if not isinstance(body, Mapping) or set(body) - {"data"}:
        raise ConfigError(
            f'{source}: expected {{"data": {{record id: fields}}}}, got {json.dumps(body)[:80]} '
            f"@ $.initial_state.initialization_data.agent_data.{table}"
        )
    return dict(body.get("data") or {})
