"""A run's access to models: one client per endpoint, a response cache, the call ledger and the cost cap."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar, cast

import attrs

from bench_kernel.errors import BudgetExceededError, ConfigError, ModelError, ModelResponseError
from bench_kernel.logs import get_logger
from bench_kernel.modelhub.api import MAX_IN_FLIGHT, BaseClient, ChatRequest, ChatResponse, Model, ModelClient, ModelConfig
from bench_kernel.modelhub.prices import Price, cost_of
from bench_kernel.redact import add_secret_variables, redact_exception
from bench_kernel.serialization import canonical_json, check_plain_data, converter, structure, unstructure
from bench_kernel.store.store import Store, utc_now

ROLES = ("agent", "user", "judge", "embeddings")
"""Roles with their own --ROLE-* options (`embeddings` embeds texts); any other role is configured with --model-option or a run file."""
ROLE_KINDS = {"agent": "chat", "user": "chat", "judge": "chat", "embeddings": "embeddings"}
"""The client kind each built-in role needs: a run refuses to start when its backend gives another kind."""
log = get_logger()
C = TypeVar("C", bound=BaseClient)
R = TypeVar("R")


@attrs.frozen(kw_only=True)
class LedgerEntry:
    """One model call, as the llm_calls table stores it; what the call did not report stays None (an unknown cost)."""

    role: str
    model: str
    request_hash: str | None = None
    """The cache key of the request (only computed when the cache is on)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: int | None = None
    cost: float | None = None
    cached: bool = False
    attempts: int = 1
    error: str | None = None
    ts_utc: str = attrs.field(factory=utc_now)
    kind: str = "chat"
    """chat, or the kind of a plugin's client (tts, asr, embeddings)."""


@attrs.frozen(kw_only=True)
class EndpointLimit:
    """The requests in flight a run allows one endpoint, the roles sharing it, and where the figure comes from."""

    endpoint: str
    roles: list[str]
    limit: int
    source: str
    """"model setting" (a role's max_concurrency), "--max-in-flight", or "concurrency x roles" (the default)."""

    def describe(self) -> str:
        """One line for the run header."""
        return f"{self.endpoint} ({', '.join(self.roles)}): {self.limit} requests ({self.source})"


def share_key(config: ModelConfig) -> str:
    """Roles share a client (and its limit) when everything but sampling and the limit agrees."""
    # Sampling travels with each request, so sharing never mixes up two roles' settings.
    return canonical_json(unstructure(attrs.evolve(config, sampling={}, max_concurrency=None)))


def request_key(config: ModelConfig, request: ChatRequest) -> str:
    """The cache key: endpoint, model, merged sampling and the whole request (seed included)."""
    # ChatRequest holds plain JSON data already: asdict without recursion is enough (and cheap).
    payload = {"endpoint": config.endpoint_key(), "sampling": config.sampling, "request": attrs.asdict(request, recurse=False)}
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


@attrs.define
class ModelHub:
    """Everything model-related that the conversations of one run share."""

    configs: dict[str, ModelConfig]
    backends: Mapping[str, Model]
    store: Store | None = None
    use_cache: bool = False
    max_cost: float | None = None
    prices: Mapping[str, Price] = attrs.field(factory=dict)
    spent: float = 0.0
    clients: dict[str, BaseClient] = attrs.field(factory=dict)
    concurrency: int = 1
    """Conversations the run holds in flight: the default limit of an endpoint is this times the roles sharing it."""
    max_in_flight: int | None = None
    """--max-in-flight: the limit of every endpoint none of whose roles sets max_concurrency."""
    speech_cache: bool = True
    """bench-voice keeps synthesised speech and transcriptions in the store for the whole run (docs/plugins.md); off with --no-speech-cache."""
    _limits: dict[str, EndpointLimit] | None = attrs.field(default=None, init=False)
    _by_role: dict[str, BaseClient] = attrs.field(factory=dict, init=False)
    """Each role's client once found: the share key costs a JSON encoding per request otherwise."""
    _kinds_checked: set[tuple[str, str]] = attrs.field(factory=set, init=False)

    def __attrs_post_init__(self) -> None:
        add_secret_variables(config.api_key_env for config in self.configs.values())

    @property
    def exhausted(self) -> bool:
        """True once the cost cap is reached."""
        return self.max_cost is not None and self.spent >= self.max_cost

    def config(self, role: str) -> ModelConfig:
        """The configuration of a role, or a clear error when the run did not give one."""
        if role not in self.configs:
            raise ConfigError(f"no model configured for the {role} role (use {role_option_hint(role)} or [models.{role}] in a run file)")
        return self.configs[role]

    def in_flight_limits(self) -> list[EndpointLimit]:
        """Each endpoint's limit and where it comes from (docs/throughput.md: model setting, --max-in-flight, concurrency x roles)."""
        return list(self._endpoint_limits().values())

    def throttled(self) -> list[EndpointLimit]:
        """Endpoints whose limit is below the run's concurrency: some conversations will wait for a request slot."""
        return [limit for limit in self.in_flight_limits() if limit.limit < self.concurrency]

    def _endpoint_limits(self) -> dict[str, EndpointLimit]:
        if self._limits is None:
            groups: dict[str, list[str]] = {}
            for role, config in self.configs.items():
                groups.setdefault(share_key(config), []).append(role)
            self._limits = {key: self._limit_of(roles) for key, roles in groups.items()}
        return self._limits

    def _limit_of(self, roles: list[str]) -> EndpointLimit:
        endpoint = self.configs[roles[0]].endpoint_key()
        explicit = [c for r in roles if (c := self.configs[r].max_concurrency) is not None]
        if explicit:
            return EndpointLimit(endpoint=endpoint, roles=roles, limit=min(explicit), source="model setting")
        if self.max_in_flight is not None:
            return EndpointLimit(endpoint=endpoint, roles=roles, limit=self.max_in_flight, source="--max-in-flight")
        return EndpointLimit(endpoint=endpoint, roles=roles, limit=min(MAX_IN_FLIGHT, self.concurrency * len(roles)), source="concurrency x roles")

    def client(self, role: str) -> BaseClient:
        """The client of a role's endpoint (shared by roles on the same endpoint), with the endpoint's limit."""
        if role in self._by_role:
            return self._by_role[role]
        config = self.config(role)
        key = share_key(config)
        if key not in self.clients:
            if config.backend not in self.backends:
                known = ", ".join(self.backends) or "none (install a model plugin such as bench-openai)"
                raise ConfigError(f"no model backend {config.backend!r} for the {role} (registered: {known})")
            limit = self._endpoint_limits()[key].limit
            self.clients[key] = self.backends[config.backend].client(attrs.evolve(config, max_concurrency=limit))
        self._by_role[role] = self.clients[key]
        return self.clients[key]

    async def check(self) -> None:
        """Create every role's client and verify its credentials before the run starts."""
        for role in self.configs:
            self.check_kind(role)
            try:
                await self.client(role).check()
            except ModelError as exc:
                raise redact_exception(exc) from None

    def check_kind(self, role: str, kind: str | None = None) -> None:
        """Refuse a role whose backend cannot serve the kind it needs: `kind`, or a built-in role's (docs/plugins.md)."""
        kind = kind or ROLE_KINDS.get(role)
        client = self.client(role)
        # A client serves every kind one of its classes names (bench-openai's: chat and embeddings).
        if kind is None or any(vars(cls).get("kind") == kind for cls in type(client).__mro__):
            return
        backend = self.config(role).backend
        gives = getattr(client, "kind", type(client).__name__)
        about = getattr(self.backends.get(backend), "description", "")
        fix = f"--{role}-backend NAME" if role in ROLES else f"--model-option {role}.backend=NAME"
        raise ConfigError(
            f"the {role} role needs {'an' if kind[0] in 'aeiou' else 'a'} {kind} model, but backend {backend!r} "
            f"gives {gives} clients only{f' ({about})' if about else ''}: give the {role} role another backend ({fix})"
        )

    def typed_client(self, role: str, kind: type[C]) -> C:
        """The role's client, of the kind the caller needs (`ModelClient`, or a plugin's kind class), or a ConfigError."""
        if (role, kind.kind) not in self._kinds_checked:  # once per role and kind: every request asks
            self.check_kind(role, kind.kind)
            self._kinds_checked.add((role, kind.kind))
        return cast(C, self.client(role))

    def check_budget(self) -> None:
        """Refuse any further call, answered from a cache or not, once the cost cap is reached."""
        if self.exhausted:
            raise BudgetExceededError(f"cost cap of {self.max_cost} reached (spent {self.spent:.4f})")

    async def complete(self, role: str, request: ChatRequest, ledger: Sink) -> ChatResponse:
        """One call for a role: from the cache when allowed, else from the endpoint; always ledgered."""
        self.check_budget()
        config = self.config(role)
        key = request_key(config, request) if self.use_cache else None
        cached = self._cached(key) if key is not None else None
        if cached is not None:
            ledger(_entry(role, config, key, cached, cost=0.0, cached=True))
            return cached
        if config.sampling:
            request = attrs.evolve(request, sampling={**config.sampling, **request.sampling})
        # The client's coroutine itself, checked by `call`: one coroutine fewer on every request's path to the socket.
        response = await self.call(role, ModelClient, lambda client: client.complete(request), ledger, key, check=_checked_reply)
        if key is not None and self.store is not None:
            self.store.cache_put(key, canonical_json(unstructure(response)))
        return response

    async def call(
        self, role: str, kind: type[C], use: Callable[[C], Awaitable[R]], ledger: Sink, key: str | None = None, check: Callable[[R], R] | None = None
    ) -> R:
        """`use` the role's client of a kind once, within the cost cap, ledgered under the kind's name, a failure too (docs/plugins.md)."""
        self.check_budget()
        config = self.config(role)
        started = time.perf_counter()
        try:
            answer = await use(self.typed_client(role, kind))
            if check is not None:
                answer = check(answer)
        except ModelError as exc:
            # Error texts quote what the endpoint sent, which may echo the credentials: blank them once, here.
            ledger(_failed(role, config, kind.kind, started, redact_exception(exc), key))
            raise
        entry = _answered(role, config, key, kind.kind, answer, started, self.prices)
        self.spent += entry.cost or 0.0
        ledger(entry)
        return answer

    def _cached(self, key: str) -> ChatResponse | None:
        text = self.store.cache_get(key) if self.store is not None else None
        return None if text is None else converter.structure(json.loads(text), ChatResponse)

    async def aclose(self) -> None:
        """Close every client."""
        for client in self.clients.values():
            try:
                await client.aclose()
            except Exception as exc:  # noqa: BLE001 - closing must not mask the run's outcome
                log.warning("model.close_failed", error=repr(exc))
        self.clients.clear()
        self._by_role.clear()


Sink = Callable[[LedgerEntry], None]


def _checked_reply(response: ChatResponse) -> ChatResponse:
    """Refuse a reply that could not be stored: invalid Unicode (JSON escapes of lone surrogates), arguments nested too deeply."""
    problems = check_plain_data(
        {"content": response.content, "reasoning": response.reasoning, "tool_calls": [[c.name, c.arguments] for c in response.tool_calls]}, "$.reply"
    )
    if problems:
        raise ModelResponseError("the reply cannot be stored: " + "; ".join(problems[:3]))
    return response


def _failed(role: str, config: ModelConfig, kind: str, started: float, exc: ModelError, key: str | None = None) -> LedgerEntry:
    error = f"{type(exc).__name__}: {exc}"[:500]
    return LedgerEntry(role=role, model=config.model, request_hash=key, latency_ms=_since(started), error=error, kind=kind, attempts=exc.attempts)


def _since(started: float) -> int:
    return int(1000 * (time.perf_counter() - started))


def _answered(role: str, config: ModelConfig, key: str | None, kind: str, answer: Any, started: float, prices: Mapping[str, Price]) -> LedgerEntry:
    """A call its endpoint answered: priced by the backend (a reply's `cost`), else from its tokens by the run's price table."""
    if isinstance(answer, ChatResponse):
        cost = answer.cost if answer.cost is not None else cost_of(prices, config.model, answer.prompt_tokens, answer.completion_tokens)
        return _entry(role, config, key, answer, cost=cost, cached=False)
    tokens = getattr(answer, "prompt_tokens", None)
    cost = cost_of(prices, config.model, tokens or 0, 0)
    return LedgerEntry(role=role, model=config.model, request_hash=key, prompt_tokens=tokens, latency_ms=_since(started), cost=cost, kind=kind)


def _entry(role: str, config: ModelConfig, key: str | None, response: ChatResponse, *, cost: float | None, cached: bool) -> LedgerEntry:
    return LedgerEntry(
        role=role,
        model=config.model,
        request_hash=key,
        prompt_tokens=response.prompt_tokens,
        completion_tokens=response.completion_tokens,
        latency_ms=0 if cached else response.latency_ms,
        cost=cost,
        cached=cached,
        attempts=0 if cached else response.attempts,
    )


@attrs.define
class ConversationModels:
    """The model access of one conversation: calls are ledgered against it, and stored as they are made."""

    hub: ModelHub
    ledger: list[LedgerEntry] = attrs.field(factory=list)
    run_id: str = ""
    conversation_id: str | None = None
    arm: str = "agent"

    def record(self, entry: LedgerEntry) -> None:
        """Keep a call in this conversation's ledger and write it to the store at once."""
        self.ledger.append(entry)
        if self.hub.store is not None and self.run_id:
            self.hub.store.record_llm_call(self.run_id, self.conversation_id, self.arm, entry)

    def charge(self, entry: LedgerEntry) -> None:
        """Record a call the participant made itself (a realtime session's usage) and count its cost toward --max-cost."""
        self.record(entry)
        if not entry.cached:
            self.hub.spent += entry.cost or 0.0

    def has(self, role: str) -> bool:
        """True when the run configured a model for this role."""
        return role in self.hub.configs

    def config(self, role: str) -> ModelConfig:
        """The role's configuration."""
        return self.hub.config(role)

    def complete(self, role: str, request: ChatRequest) -> Awaitable[ChatResponse]:
        """One chat call for a role (the hub's coroutine, awaited by the caller: no layer of its own on the hot path)."""
        return self.hub.complete(role, request, self.record)

    def call(self, role: str, kind: type[C], use: Callable[[C], Awaitable[R]], key: str | None = None) -> Awaitable[R]:
        """`use` the role's client of a plugin's kind once (`ModelHub.call`), ledgered against this conversation."""
        return self.hub.call(role, kind, use, self.record, key)

    def cost(self, role: str) -> float | None:
        """Total cost of this conversation's calls for a role; None if any price is unknown."""
        entries = [e for e in self.ledger if e.role == role and e.error is None]
        if any(e.cost is None for e in entries):
            return None
        return float(sum(e.cost or 0.0 for e in entries))


ROLE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
"""What a model role may be named (a run file's `[models.ROLE]`, `--model-option ROLE.KEY=VALUE`)."""


def role_option_hint(role: str) -> str:
    """How to configure a role on the command line."""
    return f"--{role}-model" if role in ROLES else f"--model-option {role}.model=NAME"


def model_configs(data: Mapping[str, Any], *, source: str = "model configuration") -> dict[str, ModelConfig]:
    """Structure {role: {...}} into model configurations; any role name is allowed (judge-2, profiler, tts, asr)."""
    bad = [r for r in data if not isinstance(r, str) or not ROLE_NAME.match(r)]
    if bad:
        raise ConfigError(f"{source}: invalid model role name {bad[0]!r}: lowercase letters, digits, '-' and '_', starting with a letter @ $.models")
    return {role: structure(dict(cfg), ModelConfig, source=source, root=f"$.models.{role}") for role, cfg in data.items()}
