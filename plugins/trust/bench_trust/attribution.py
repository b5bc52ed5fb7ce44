"""Failure attribution: who a failed conversation's failure is due to, by rules read off the stored conversation.

Every failed conversation (reward below 1, or not scored) gets one label: `infrastructure`, `judge`, `task`,
`user-simulator` or `agent`, from the first rule that matches, in that order; `agent` is the default (rule
`default`), which a reviewer model may refine (bench-review). Each rule is a small function of a `FailedConversation`
and says why it fired in one sentence of evidence. docs/attribution.md states every rule and its limits. The kernel
calls the rules through `RulesAttributor` (bench_trust/attributor.py) for every conversation a run plays or judges again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import (
    ATTRIBUTION_LABELS,
    AssistantMessage,
    Attribution,
    ComponentScore,
    ConversationResult,
    DomainData,
    FinishedConversation,
    GoldReplay,
    Message,
    RewardInfo,
    RewardType,
    Store,
    Task,
    TerminationReason,
    ToolCall,
    UserMessage,
    is_success,
)

AGENT, USER_SIMULATOR, TASK, JUDGE, INFRASTRUCTURE = LABELS = ATTRIBUTION_LABELS
"""Every label, in the order their rules are tried (agent last: the default)."""
DEFAULT_RULE = "default"
TASK_FAULT_FLAGS = frozenset({"gold_fails", "unknown_ids", "nondeterministic"})
"""Audit flags that make a task unscorable as written (a `duplicate` task is no fault)."""
TRANSPORT_FAILURE = re.compile(
    r"ModelUnavailableError|RealtimeConnectionError|ConnectError|ConnectTimeout|ReadTimeout|WriteTimeout|PoolTimeout|"
    r"RemoteProtocolError|ConnectionError|ConnectionResetError|ModelHTTPError: HTTP (?:408|429|5\d\d)\b"
)
"""A participant's error that is a failed transport (connection, timeout, 429 or 5xx), not a wrong answer."""
VIOLATION = re.compile(
    r"\b(?:did not|didn't|does not|doesn't|was not|wasn't|were not|failed to|never|not (?:met|satisfied)|"
    r"violat\w*|however,? the agent|incorrect\w*|contrary to|without (?:asking|confirm\w*|check\w*|verif\w*))\b"
)
SATISFIED = re.compile(
    r"\b(?:(?:is|was|were|has been|have been) (?:met|satisfied|fulfilled)|correctly|complied|as required|"
    r"successfully)\b"
)
CONFIRMING = re.compile(
    r"\b(?:confirm\w*|shall i|should i|would you like me to|do you want me to|may i|can i proceed|"
    r"proceed|go ahead|yes or no|is that correct|is that right)\b"
)
CLOSER = re.compile(r"\b(?:anything else|something else|further assistance|help you with today|else i can help)\b")
COMPLETED = re.compile(
    r"\b(?:done|successfully|completed|all set|is now|are now|has been \w+ed|have been \w+ed|"
    r"i(?:'ve| have) (?:\w+ )?\w+ed)\b"
)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
ID_LIKE = re.compile(r"[#\w][\w#./-]*\d[\w#./-]*")
NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b")
NOT_NAMES = frozenset(
    [
        "i",
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "please",
        "yes",
        "no",
        "ok",
        "okay",
        "sure",
        "great",
        "fine",
        "the",
        "my",
        "our",
        "your",
        "can",
        "could",
        "would",
        "what",
        "when",
        "where",
        "which",
        "who",
        "how",
        "also",
        "and",
        "but",
        "dear",
        "mr",
        "mrs",
        "ms",
        "dr",
        "sorry",
        "good",
        "morning",
        "afternoon",
        "evening",
        "well",
        "actually",
        "just",
        "that",
        "this",
        "it",
        "we",
        "you",
        "he",
        "she",
        "they",
        "is",
        "are",
        "do",
        "does",
        "did",
        "let",
        "me",
        "so",
        "then",
        "now",
        "there",
        "here",
        "one",
        "two",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
"""Capitalised words that start a sentence or a greeting, not a name."""


@attrs.frozen(kw_only=True)
class FailedConversation:
    """What the rules read: the conversation as played and scored, the task, and what the domain and audit know."""

    task: Task
    messages: Sequence[Message]
    termination: TerminationReason
    reward_info: RewardInfo | None
    error: str | None = None
    is_write: Callable[[ToolCall], bool] = lambda call: False
    """True for a call of a tool that changes state (the domain's WRITE tools: `Environment.mutates`)."""
    user_tools: frozenset[str] | None = None
    """The tools the user simulator was given (None: it was given none)."""
    task_flags: Mapping[str, str] = attrs.field(factory=dict)
    """The task's audit flags with their evidence (and `gold_fails` when its gold replay fails)."""

    @property
    def failed(self) -> bool:
        """True when the conversation did not pass (reward below 1, or not scored)."""
        reward = None if self.reward_info is None else self.reward_info.reward
        return self.termination is TerminationReason.INFRASTRUCTURE_ERROR or not is_success(reward)

    def calls(self, requestor: str | None = None) -> Iterator[tuple[int, ToolCall]]:
        """Every tool call made, with the index of its message (only one side's with `requestor`)."""
        for i, m in enumerate(self.messages):
            for call in getattr(m, "tool_calls", None) or []:
                if requestor is None or call.requestor == requestor:
                    yield i, call


Rule = Callable[[FailedConversation], Attribution | None]


def attribute(conversation: FailedConversation) -> Attribution | None:
    """The failure's attribution by the first matching rule (`agent` by default); None for a conversation that passed."""
    if not conversation.failed:
        return None
    for rule in RULES:
        found = rule(conversation)
        if found is not None:
            return found
    return Attribution(label=AGENT, rule=DEFAULT_RULE, evidence="no rule attributes the failure to another party")


def failed_conversation(
    result: ConversationResult,
    task: Task,
    *,
    is_write: Callable[[ToolCall], bool] = lambda call: False,
    user_tools: Collection[str] | None = None,
    task_flags: Mapping[str, str] | None = None,
) -> FailedConversation:
    """The rules' view of a finished (or crashed) conversation."""
    return FailedConversation(
        task=task,
        messages=result.messages,
        termination=result.termination_reason,
        reward_info=result.reward_info,
        error=result.error,
        is_write=is_write,
        user_tools=None if user_tools is None else frozenset(user_tools),
        task_flags=dict(task_flags or {}),
    )


def rules_attribution(finished: FinishedConversation) -> Attribution | None:
    """The rules' attribution of a finished conversation's failure (None when it passed)."""
    task, env = finished.task, finished.final_env
    schemas = env.user_schemas(task.user_tools)
    names = None if schemas is None else {s["function"]["name"] for s in schemas}
    flags = task_fault_flags(finished.data, task, finished.gold, finished.store)
    return attribute(failed_conversation(finished.result, task, is_write=env.mutates, user_tools=names, task_flags=flags))


def task_fault_flags(data: DomainData, task: Task, gold: GoldReplay | None, store: Any = None) -> dict[str, str]:
    """The task's flags that make it unscorable (flag -> evidence): its gold replay, its static audit flags, and the
    `nondeterministic` of its cached `bench audit` when `store` is a results database (gold_fails comes from the run's
    own gold replay, with the domain's scored-as-the-reference exception, whether or not an audit is stored)."""
    from .audit import cached_flags, static_flags  # the audit plays conversations: imported when needed

    flags: dict[str, str] = {}
    if gold is not None and not gold.ok and not (data.failed_gold_actions_scored and all(c.met for c in gold.assertion_checks)):
        flags["gold_fails"] = "; ".join([*gold.action_errors, *(c.subject for c in gold.assertion_checks if not c.met)])[:300]
    flags.update(static_flags(task, data))
    if isinstance(store, Store):  # only what the run cannot see itself: the label must not depend on the cache otherwise
        cached = cached_flags(store, data, task) or {}
        flags.update({flag: evidence for flag, evidence in cached.items() if flag == "nondeterministic"})
    return {flag: evidence for flag, evidence in flags.items() if flag in TASK_FAULT_FLAGS}


# --------------------------------------------------------------------------- infrastructure


def infrastructure_error(c: FailedConversation) -> Attribution | None:
    """The conversation crashed outside the participants (stored as an infrastructure error)."""
    if c.termination is not TerminationReason.INFRASTRUCTURE_ERROR:
        return None
    return Attribution(label=INFRASTRUCTURE, rule="infrastructure_error", evidence=c.error or "infrastructure error")


def transport_failure(c: FailedConversation) -> Attribution | None:
    """A participant ended the conversation on a failed transport (connection, timeout, HTTP 408/429/5xx)."""
    if c.termination not in (TerminationReason.AGENT_ERROR, TerminationReason.USER_ERROR) or not c.error:
        return None
    if not TRANSPORT_FAILURE.search(c.error):
        return None
    return Attribution(label=INFRASTRUCTURE, rule="transport_failure", evidence=c.error[:300])


def component_error(c: FailedConversation) -> Attribution | None:
    """A reward component other than the judge's raised, so the conversation was not scored as it should be."""
    for score in _basis_components(c):
        if score.error and score.component != RewardType.NL_ASSERTION.value:
            return Attribution(
                label=INFRASTRUCTURE, rule="component_error", evidence=f"reward component {score.component} failed: {score.error[:240]}"
            )
    return None


# --------------------------------------------------------------------------- judge


def judge_error(c: FailedConversation) -> Attribution | None:
    """The NL-assertion judge gave no verdict (an error, or no score) and everything else in the basis passed."""
    nl = _nl_component(c)
    if nl is None or not _only_nl_failed(c):
        return None
    if nl.error is None and nl.score is not None:
        return None
    return Attribution(label=JUDGE, rule="judge_error", evidence=f"the judge gave no verdict: {nl.error or 'no score'}"[:300])


def inconsistent_verdict(c: FailedConversation) -> Attribution | None:
    """The judge's verdict contradicts its own justification, and the NL assertions alone decided the failure.

    A `met: false` whose justification says the assertion held (and names no violation), or a `met: true` whose
    justification describes a violation (tau2 #436), in a verdict that failed a conversation nothing else failed.
    """
    nl = _nl_component(c)
    if nl is None or not _only_nl_failed(c) or nl.score is None or is_success(nl.score):
        return None
    for check in nl.checks:
        reason = (check.detail or "").lower()
        violated, satisfied = VIOLATION.search(reason), SATISFIED.search(reason)
        if check.met and violated:
            return Attribution(
                label=JUDGE,
                rule="inconsistent_verdict",
                evidence=f"met=true on {check.subject!r:.120} but the justification says {violated.group(0)!r}: {check.detail[:160]}",
            )
        if not check.met and satisfied and not violated:
            return Attribution(
                label=JUDGE,
                rule="inconsistent_verdict",
                evidence=f"met=false on {check.subject!r:.120} but the justification says {satisfied.group(0)!r}: {check.detail[:160]}",
            )
    return None


def doubted_verdicts(components: Sequence[Mapping[str, Any]]) -> list[str]:
    """The NL assertions a stored reward info's judge marked met while its justification describes a violation.

    A pass resting on one is counted by the report ("doubtful passes"): the judge may have passed it by accident.
    """
    nl = next((c for c in components if c.get("component") == RewardType.NL_ASSERTION.value), None)
    return [
        str(check.get("subject"))
        for check in (nl or {}).get("checks") or []
        if check.get("met") is True and VIOLATION.search(str(check.get("detail") or "").lower())
    ]


def _basis_components(c: FailedConversation) -> list[ComponentScore]:
    info = c.reward_info
    if info is None:
        return []
    return [score for score in info.components if score.component in info.reward_basis]


def _nl_component(c: FailedConversation) -> ComponentScore | None:
    return next((s for s in _basis_components(c) if s.component == RewardType.NL_ASSERTION.value), None)


def _only_nl_failed(c: FailedConversation) -> bool:
    """True when the conversation ended by a stop and every basis component but NL_ASSERTION passed."""
    if c.termination not in (TerminationReason.USER_STOP, TerminationReason.AGENT_STOP):
        return False
    others = [s for s in _basis_components(c) if s.component != RewardType.NL_ASSERTION.value]
    return all(s.score is not None and is_success(s.score) for s in others)


# --------------------------------------------------------------------------- task


def task_flagged(c: FailedConversation) -> Attribution | None:
    """The task is broken as written: its gold replay fails, it names ids absent from the data, or it is nondeterministic."""
    flags = sorted(set(c.task_flags) & TASK_FAULT_FLAGS)
    if not flags:
        return None
    said = "; ".join(f"{flag} ({c.task_flags[flag]})" if c.task_flags[flag] else flag for flag in flags)
    return Attribution(label=TASK, rule="task_flagged", evidence=f"task {c.task.id} is broken as written: {said}"[:400])


# --------------------------------------------------------------------------- user simulator


def user_stopped_early(c: FailedConversation) -> Attribution | None:
    """The user ended the call while the agent awaited its answer, before any of the missing gold writes (tau2 #297).

    Fires when the conversation ended by the user, a gold action that writes was never called (by name), the agent's
    last words asked the user something or for a confirmation (a generic "anything else?" does not count), and they
    claimed no completion.
    """
    if c.termination is not TerminationReason.USER_STOP:
        return None
    called = {(call.requestor, call.name) for _, call in c.calls()}
    missing = [a for a in c.task.gold_actions() if c.is_write(a.as_tool_call()) and (a.requestor, a.name) not in called]
    last = _last_agent_text(c.messages)
    if not missing or last is None or not _asks(last) or COMPLETED.search(last.lower()):
        return None
    return Attribution(
        label=USER_SIMULATOR,
        rule="user_stopped_early",
        evidence=f"the user ended the call after the agent asked {last[-160:]!r}; gold write {', '.join(a.name for a in missing)} never made",
    )


def user_invented_fact(c: FailedConversation) -> Attribution | None:
    """The user stated an id, email, number or name found neither in its scenario nor in anything said or returned
    before, and the agent then used it (in a tool call or its words): tau2 #172's invented passenger."""
    scenario = _normal(_scenario_text(c.task))
    seen: list[str] = []
    for i, m in enumerate(c.messages):
        if isinstance(m, UserMessage) and m.content:
            known = scenario + " " + " ".join(seen)
            for token in _facts(m.content):
                if _absent(token, known) and _used_later(token, c.messages[i + 1 :]):
                    return Attribution(
                        label=USER_SIMULATOR,
                        rule="user_invented_fact",
                        evidence=f"the user said {token!r} (message {i}), which its scenario does not hold "
                        "and nobody said before; the agent then used it",
                    )
        seen.append(_normal(_message_text(m)))
    return None


def user_unknown_tool(c: FailedConversation) -> Attribution | None:
    """The user called a tool it was not given."""
    given = c.user_tools or frozenset()
    for i, call in c.calls("user"):
        if call.name not in given:
            return Attribution(
                label=USER_SIMULATOR, rule="user_unknown_tool", evidence=f"the user called {call.name!r} (message {i}), a tool it was not given"
            )
    return None


def user_error(c: FailedConversation) -> Attribution | None:
    """The user simulator broke the protocol (it raised, or sent an empty or malformed message)."""
    if c.termination is not TerminationReason.USER_ERROR:
        return None
    return Attribution(label=USER_SIMULATOR, rule="user_error", evidence=(c.error or "the user simulator failed")[:300])


def _last_agent_text(messages: Sequence[Message]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, AssistantMessage) and m.has_text():
            return m.content
    return None


def _asks(text: str) -> bool:
    """True when the text asks the user something or for a confirmation, a generic closing question aside."""
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", text.strip().lower()) if s and not CLOSER.search(s)]
    return any(s.endswith("?") or CONFIRMING.search(s) for s in sentences)


def _scenario_text(task: Task) -> str:
    scenario = task.user_scenario
    return " ".join([scenario.render(), *(scenario.script or []), task.ticket or ""])


def _message_text(m: Message) -> str:
    parts = [m.content or ""]
    parts += [json.dumps(call.arguments, ensure_ascii=False) for call in getattr(m, "tool_calls", None) or []]
    return " ".join(parts)


def _normal(text: str) -> str:
    return text.lower().replace(",", "")


def _facts(text: str) -> list[str]:
    """The checkable facts of a user message: emails, id-like tokens (3+ characters with a digit), full names."""
    found = EMAIL.findall(text)
    rest = EMAIL.sub(" ", text)
    found += [t for t in (m.rstrip(".:/-") for m in ID_LIKE.findall(rest.replace(",", ""))) if len(t) >= 3]
    for name in NAME.findall(rest):
        words = [w for w in name.split() if w.lower() not in NOT_NAMES]
        if len(words) >= 2:  # a lone capitalised word is too often not a name
            found.append(" ".join(words))
    return found


def _absent(token: str, known: str) -> bool:
    words = token.lower().split() if " " in token else [token.lower()]
    return any(len(w) >= 3 and w not in known for w in words)


def _used_later(token: str, later: Sequence[Message]) -> bool:
    wanted = token.lower()
    return any(isinstance(m, AssistantMessage) and wanted in _normal(_message_text(m)) for m in later)


RULES: tuple[Rule, ...] = (
    infrastructure_error,
    transport_failure,
    component_error,
    judge_error,
    inconsistent_verdict,
    task_flagged,
    user_stopped_early,
    user_invented_fact,
    user_unknown_tool,
    user_error,
)
"""The rules, first match wins; a conversation no rule claims is the agent's (rule `default`)."""
