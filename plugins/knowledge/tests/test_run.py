"""The knowledge tools in real runs: a domain composes them onto its toolkit, an agent calls them in a conversation
(async ones awaited), dense search reaches the run's embeddings role, and what the tools said is stored."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_knowledge import Document, KnowledgeBase, knowledge_toolkit, refusal, resolve_variant
from bench_knowledge.dense import DENSE

from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    ConfigError,
    ConversationSetup,
    Domain,
    DomainData,
    DomainOptions,
    Message,
    Mode,
    ModelConfig,
    RunConfig,
    State,
    Store,
    ToolCall,
    ToolKind,
    Toolkit,
    get_plugin_manager,
    hookimpl,
    run,
    structure_tasks,
    tool,
)
from bench_kernel.testing import FakeOpenAIServer

KB = KnowledgeBase.of(
    [
        Document(id="lost", title="Lost cards", content="Report a lost card at once; a replacement ships in five days."),
        Document(id="wire", title="Wires", content="Wire transfers above 10,000 dollars need a second approval."),
    ]
)
CALLS: dict[str, dict[str, Any]] = {
    "KB_search": {"query": "lost card"},
    "grep": {"pattern": "wire"},
    "KB_search_bm25": {"query": "wire", "k": 1},
    "KB_search_dense": {"query": "replacement card"},
    "shell": {"command": "grep -l approval *.md"},
}
TASK = {
    "id": "report-lost",
    "user_scenario": {"instructions": {"domain": "kbtoy", "reason_for_call": "I lost my card.", "task_instructions": "Report the lost card."}},
    "ticket": "Report the customer's lost card.",
    "evaluation_criteria": {"actions": [{"action_id": "1", "name": "report_lost", "arguments": {"card": "c1"}}], "reward_basis": ["DB"]},
}


class CardTools(Toolkit):
    """The domain's own tool, beside which the knowledge tools are added."""

    @tool(ToolKind.WRITE)
    def report_lost(self, card: str) -> str:
        """Mark a card as lost.

        Args:
            card (str): The card's id.
        """
        self.state.cards[card] = {"lost": True}
        return "reported"


@attrs.define(kw_only=True)
class KnowledgeDomain(Domain):
    """One card task, with a knowledge base searched through the variant asked for."""

    name: str = "kbtoy"

    def load(self, options: DomainOptions) -> DomainData:
        """The task and state, with the variant's tools on the agent's side."""
        settings = resolve_variant(options.retrieval or "bm25", options.retrieval_options)
        reason = refusal(settings)
        if reason is not None:
            raise ConfigError(reason)
        return DomainData(
            name=self.name,
            tasks=structure_tasks([TASK], options.vocabulary, source="kbtoy"),
            policy="Help with cards.",
            solo_policy="Solve the ticket alone.",
            agent_toolkit=knowledge_toolkit(CardTools, KB, settings),
            agent_state=State.from_records({"cards": {"c1": {"lost": False}}}),
            source="memory",
            retrieval=settings.name,
        )


class DomainPlugin:
    """Registers KnowledgeDomain."""

    @hookimpl
    def register_domains(self, register: Callable[[Domain], None]) -> None:
        """Register the domain."""
        register(KnowledgeDomain())


class SearchingAgent(Agent):
    """Calls every knowledge tool it is offered once, then stops."""

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session over the offered tools."""
        offered = [s["function"]["name"] for s in setup.agent_tools]
        return SearchingSession(pending=[name for name in CALLS if name in offered])


@attrs.define
class SearchingSession(AgentSession):
    """One conversation of SearchingAgent."""

    pending: list[str]

    async def respond(self, messages: Sequence[Message]) -> AssistantMessage:
        """The next search, or the end."""
        if not self.pending:
            return AssistantMessage(content="done ###STOP###")
        name = self.pending.pop(0)
        return AssistantMessage(content=None, tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=CALLS[name])])


class AgentPlugin:
    """Registers SearchingAgent."""

    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """Register the searching agent."""
        register(SearchingAgent(name="searching"))


def play(tmp_path: Path, variant: str, *, installed: list[str] | None = None, **config: Any) -> tuple[dict[str, str], list[dict]]:
    """Run one task with the variant; the stored tool texts by call id, and the stored model calls."""
    extra = [("kbtoy", DomainPlugin()), ("searching", AgentPlugin())]
    plugins = get_plugin_manager(installed or [], extra=extra)
    settings = {"domain": "kbtoy", "agent": "searching", "baseline": False, "mode": Mode.NO_USER, "retrieval": variant, **config}
    run(RunConfig(**settings), tmp_path / "r.db", plugins=plugins)
    store = Store(tmp_path / "r.db")
    try:
        tools = {
            r["tool_call_id"]: r["content"]
            for r in store.db.query("select json_extract(message_json, '$.id') as tool_call_id, content from messages where role = 'tool'")
        }
        calls = list(store.db.query("select role, kind, prompt_tokens from llm_calls"))
    finally:
        store.close()
    return tools, calls


def test_bm25_and_grep_answer_inside_a_run(tmp_path: Path) -> None:
    tools, calls = play(tmp_path, "bm25_grep", retrieval_options={"top_k": 1})
    assert set(tools) == {"c-KB_search", "c-grep"} and calls == []
    assert tools["c-KB_search"].startswith("1. Lost cards\n   ID: lost\n   Score: ") and "ID: wire" not in tools["c-KB_search"]
    assert tools["c-grep"].startswith("1. Wires\n   ID: wire\n   Score: 1.0000\n")


def test_an_unknown_variant_or_option_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown retrieval variant 'bm52'"):
        play(tmp_path, "bm52")
    with pytest.raises(ConfigError, match="unknown retrieval option 'k'"):
        play(tmp_path, "bm25", retrieval_options={"k": 3})


def test_dense_search_in_a_run_uses_the_embeddings_role_and_is_ledgered(tmp_path: Path) -> None:
    DENSE.clear()
    with FakeOpenAIServer() as server:
        models = {"embeddings": ModelConfig(model="text-embedding-3-large", base_url=server.base_url)}
        tools, calls = play(tmp_path, "openai_embeddings", installed=["openai"], models=models)
    assert tools["c-KB_search"].startswith("1. Lost cards\n   ID: lost\n")
    assert [(c["role"], c["kind"]) for c in calls] == [("embeddings", "embeddings")] * 2  # the query, then the documents
    assert all(c["prompt_tokens"] for c in calls)


@pytest.mark.skipif(refusal(resolve_variant("terminal_use")) is not None, reason=str(refusal(resolve_variant("terminal_use"))))
def test_the_shell_answers_inside_a_run(tmp_path: Path) -> None:
    tools, _ = play(tmp_path, "terminal_use")
    assert tools == {"c-shell": "wire.md\n"}
