"""The agent's policy per retrieval variant, assembled from a data directory's prompt files as tau2 assembles it.

A variant names a template (`prompts/<stem>.md`); `{{component:NAME}}` pulls in
`prompts/components/NAME.md`. Three placeholders take content: `{{full_knowledge_base}}` (every
document), `{{required_documents}}` (the documents a task lists: golden retrieval, per task) and
`{{all_tools_dense_instructions}}` (which embedding model the dense search uses). The texts are
the data directory's: tau2's with `--data-dir`, ours in the packaged suite.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs

from bench_kernel import ConfigError

COMPONENT = re.compile(r"\{\{component:(\w+)\}\}")
FULL_KB = re.compile(r"\{\{full_knowledge_base\}\}")
REQUIRED_DOCUMENTS = "{{required_documents}}"
DENSE_INSTRUCTIONS = "{{all_tools_dense_instructions}}"
NO_DOCUMENTS = "(No documents provided)"
DOCUMENT_SEPARATOR = "\n\n---\n\n"


class DocumentLike(Protocol):
    """What the policy needs of a document."""

    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def content(self) -> str: ...


@attrs.frozen(kw_only=True)
class PolicyPlan:
    """How one variant's policy is made: its template and what fills it."""

    template: str
    """The template's file stem in `prompts/`."""
    documents: str = "none"
    """"none", "all" (the full knowledge base) or "required" (each task's documents)."""
    dense: tuple[str, str] | None = None
    """(provider, model) of the dense search, for templates that describe it."""
    dense_text: str | None = None
    """The profile's sentence for it (tau2's, under tau2's profile), instead of ours."""


def read_template(prompts: Path, stem: str) -> str:
    """A template with its components pulled in."""
    path = prompts / f"{stem}.md"
    if not path.is_file():
        raise ConfigError(f"prompt template not found: {path}")
    return COMPONENT.sub(lambda match: _component(prompts, match.group(1)), path.read_text(encoding="utf-8"))


def _component(prompts: Path, name: str) -> str:
    path = prompts / "components" / f"{name}.md"
    if not path.is_file():
        raise ConfigError(f"prompt component not found: {path}")
    return path.read_text(encoding="utf-8")


def documents_block(documents: Iterable[DocumentLike]) -> str:
    """Documents as the policy shows them: a `## title` heading over each content, separated by rules."""
    return DOCUMENT_SEPARATOR.join(f"## {doc.title}\n\n{doc.content}" for doc in documents)


def with_full_knowledge_base(text: str, documents: Sequence[DocumentLike]) -> str:
    """Put every document in the template (as a regular-expression replacement, so backslashes act as tau2's do)."""
    if not FULL_KB.search(text):
        return text
    return FULL_KB.sub(documents_block(documents), text)


def required_documents(documents: Sequence[DocumentLike], refs: Iterable[str]) -> list[DocumentLike]:
    """The documents a task lists, each found by title first, then by id (unknown ones are skipped)."""
    by_title = {doc.title: doc for doc in documents}
    by_id = {doc.id: doc for doc in documents}
    found = [by_title.get(ref) or by_id.get(ref) for ref in refs]
    return [doc for doc in found if doc is not None]


def with_required_documents(text: str, documents: Sequence[DocumentLike], refs: Iterable[str]) -> str:
    """Put a task's documents in the template (or a note that there are none)."""
    chosen = required_documents(documents, refs)
    return text.replace(REQUIRED_DOCUMENTS, documents_block(chosen) if chosen else NO_DOCUMENTS)


def dense_instructions(provider: str, model: str) -> str:
    """Our sentence naming the dense search's provider and model (tau2 writes its own in code, not in its data)."""
    return f"`KB_search_dense` ranks documents by meaning with the **{provider}** embedding model `{model}`."


def build_policy(prompts: Path, plan: PolicyPlan, documents: Sequence[DocumentLike], task: Any = None) -> str:
    """The policy of a variant (for one task when the variant gives each task its documents)."""
    text = read_template(prompts, plan.template)
    if plan.documents == "all":
        text = with_full_knowledge_base(text, documents)
    elif plan.documents == "required":
        text = with_required_documents(text, documents, (getattr(task, "required_documents", None) or []))
    if plan.dense is not None:
        text = text.replace(DENSE_INSTRUCTIONS, plan.dense_text if plan.dense_text is not None else dense_instructions(*plan.dense))
    if not text.strip():
        raise ConfigError(f"the policy of template {plan.template!r} is empty")
    return text
