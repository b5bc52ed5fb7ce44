"""The model hub: shared clients, per-role sampling, cache, ledger, prices and the cost cap."""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs
import pytest

from bench_kernel import ChatRequest, ChatResponse, Model, ModelClient, ModelConfig
from bench_kernel.errors import BudgetExceededError, ConfigError, ModelError, ModelUnavailableError
from bench_kernel.modelhub.hub import ConversationModels, ModelHub, model_configs
from bench_kernel.modelhub.prices import DEFAULT_PRICES, Price, cost_of, lookup, parse_price
from bench_kernel.store.store import Store


@attrs.define(eq=False)
class RecordingClient(ModelClient):
    config: ModelConfig
    seen: list[ChatRequest]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.seen.append(request)
        return ChatResponse(content=f"reply {len(self.seen)}", prompt_tokens=1000, completion_tokens=500)


@attrs.define(kw_only=True, eq=False)
class RecordingModel(Model):
    name: str = "rec"
    clients: list[RecordingClient] = attrs.field(factory=list)
    seen: list[ChatRequest] = attrs.field(factory=list)

    def client(self, config: ModelConfig) -> ModelClient:
        made = RecordingClient(config, self.seen)
        self.clients.append(made)
        return made


HELLO = ChatRequest(messages=[{"role": "user", "content": "hi"}], seed=7)


def hub(tmp_path: Path, **fields: object) -> tuple[ModelHub, RecordingModel]:
    backend = RecordingModel()
    configs = {
        "agent": ModelConfig(backend="rec", model="gpt-4.1-mini", sampling={"temperature": 0.0}),
        "user": ModelConfig(backend="rec", model="gpt-4.1-mini", sampling={"temperature": 1.0}),
    }
    return ModelHub(configs=configs, backends={"rec": backend}, store=Store(tmp_path / "h.db"), prices=DEFAULT_PRICES, **fields), backend  # type: ignore[arg-type]


def test_roles_on_one_endpoint_share_a_client_but_keep_their_sampling(tmp_path: Path) -> None:
    models_hub, backend = hub(tmp_path)
    models = ConversationModels(models_hub)
    asyncio.run(models.complete("agent", HELLO))
    asyncio.run(models.complete("user", HELLO))
    assert len(backend.clients) == 1
    assert [r.sampling["temperature"] for r in backend.seen] == [0.0, 1.0]


def limits_of(models_hub: ModelHub) -> list[tuple[list[str], int, str]]:
    return [(limit.roles, limit.limit, limit.source) for limit in models_hub.in_flight_limits()]


def test_the_default_limit_is_the_runs_concurrency_times_the_roles_sharing_the_endpoint(tmp_path: Path) -> None:
    models_hub, backend = hub(tmp_path, concurrency=256)
    assert limits_of(models_hub) == [(["agent", "user"], 512, "concurrency x roles")]
    assert models_hub.throttled() == []
    models_hub.client("agent")
    assert backend.clients[0].config.max_concurrency == 512  # the backend gets the resolved limit
    capped, _ = hub(tmp_path, concurrency=4096)
    assert limits_of(capped) == [(["agent", "user"], 4096, "concurrency x roles")]


def test_max_in_flight_and_a_roles_setting_decide_the_limit_and_a_throttling_one_is_reported(tmp_path: Path) -> None:
    option, _ = hub(tmp_path, concurrency=32, max_in_flight=48)
    assert limits_of(option) == [(["agent", "user"], 48, "--max-in-flight")]
    assert option.throttled() == []
    low, _ = hub(tmp_path, concurrency=32, max_in_flight=8)
    assert [limit.limit for limit in low.throttled()] == [8]
    role, backend = hub(tmp_path, concurrency=32, max_in_flight=48)
    role.configs["user"] = attrs.evolve(role.configs["user"], max_concurrency=16)
    assert limits_of(role) == [(["agent", "user"], 16, "model setting")]  # the smallest setting of the sharing roles wins
    role.client("agent")
    role.client("user")
    assert len(backend.clients) == 1  # a role's own limit does not split the endpoint


def test_roles_on_different_endpoints_get_their_own_limits(tmp_path: Path) -> None:
    models_hub, _ = hub(tmp_path, concurrency=10)
    models_hub.configs["judge"] = ModelConfig(backend="rec", model="judge-model")
    assert limits_of(models_hub) == [(["agent", "user"], 20, "concurrency x roles"), (["judge"], 10, "concurrency x roles")]
    assert [limit.endpoint for limit in models_hub.in_flight_limits()] == ["rec|None|gpt-4.1-mini", "rec|None|judge-model"]


def test_every_call_is_ledgered_with_its_cost(tmp_path: Path) -> None:
    models = ConversationModels(hub(tmp_path)[0])
    asyncio.run(models.complete("agent", HELLO))
    entry = models.ledger[0]
    assert (entry.role, entry.prompt_tokens, entry.completion_tokens, entry.cached) == ("agent", 1000, 500, False)
    assert entry.cost == pytest.approx((1000 * 0.40 + 500 * 1.60) / 1e6)
    assert models.cost("agent") == entry.cost and models.cost("user") == 0.0


@attrs.define(eq=False)
class PricingClient(ModelClient):
    """A backend that prices its own calls (as bench-litellm does from litellm's price map), when it knows the model."""

    cost: float | None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(content="ok", prompt_tokens=1000, completion_tokens=500, cost=self.cost)


@pytest.mark.parametrize(
    ("model", "backend_cost", "ledgered"),
    [
        ("provider/priced", 0.25, 0.25),  # the backend's own price
        ("gpt-4.1-mini", None, (1000 * 0.40 + 500 * 1.60) / 1e6),  # not priced by the backend: the price table
        ("provider/unpriced", None, None),  # priced by neither: unknown, never 0
    ],
)
def test_a_backends_own_price_is_ledgered_else_the_price_table(model, backend_cost, ledgered) -> None:
    @attrs.define(kw_only=True)
    class Pricing(Model):
        name: str = "pricing"

        def client(self, config: ModelConfig) -> ModelClient:
            return PricingClient(backend_cost)

    models_hub = ModelHub(configs={"agent": ModelConfig(backend="pricing", model=model)}, backends={"pricing": Pricing()}, prices=DEFAULT_PRICES)
    models = ConversationModels(models_hub)
    asyncio.run(models.complete("agent", HELLO))
    assert models.ledger[0].cost == (pytest.approx(ledgered) if ledgered is not None else None)
    assert models_hub.spent == pytest.approx(ledgered or 0.0)


def test_the_cache_answers_a_repeated_request_without_the_backend(tmp_path: Path) -> None:
    models_hub, backend = hub(tmp_path, use_cache=True)
    first = asyncio.run(ConversationModels(models_hub).complete("agent", HELLO))
    again = ConversationModels(models_hub)
    second = asyncio.run(again.complete("agent", HELLO))
    assert second == first and len(backend.seen) == 1
    assert again.ledger[0].cached and again.ledger[0].cost == 0.0
    asyncio.run(again.complete("agent", attrs.evolve(HELLO, seed=8)))  # another seed is another request
    assert len(backend.seen) == 2


def test_the_cost_cap_stops_new_calls(tmp_path: Path) -> None:
    models = ConversationModels(hub(tmp_path, max_cost=0.001)[0])
    asyncio.run(models.complete("agent", HELLO))
    assert models.hub.exhausted
    with pytest.raises(BudgetExceededError):
        asyncio.run(models.complete("agent", HELLO))


def test_an_unknown_price_is_unknown_not_zero(tmp_path: Path) -> None:
    assert cost_of(DEFAULT_PRICES, "my-local-model", 10, 10) is None
    assert lookup(DEFAULT_PRICES, "gpt-4.1-mini-2025-04-14") == DEFAULT_PRICES["gpt-4.1-mini"]
    assert lookup(DEFAULT_PRICES, "gpt-4.1-2025-04-14") == DEFAULT_PRICES["gpt-4.1"]
    assert parse_price("m=1,2") == ("m", Price(1.0, 2.0))
    with pytest.raises(ValueError):
        parse_price("m=1")


def test_a_role_without_a_model_and_a_missing_backend_are_clear_errors(tmp_path: Path) -> None:
    models_hub, _ = hub(tmp_path)
    with pytest.raises(ConfigError, match="--judge-model"):
        models_hub.config("judge")
    models_hub.configs["agent"] = ModelConfig(backend="nope", model="m")
    with pytest.raises(ConfigError, match="no model backend 'nope'"):
        models_hub.client("agent")


def test_model_configs_reject_unknown_roles_and_keys() -> None:
    assert set(model_configs({"judge-2": {"model": "m"}, "tts": {"model": "piper"}})) == {"judge-2", "tts"}
    with pytest.raises(ConfigError, match="invalid model role name"):
        model_configs({"Critic!": {"model": "m"}})
    with pytest.raises(ConfigError):
        model_configs({"agent": {"model": "m", "temprature": 0}})


def test_importers_build_model_access_from_the_package_root(tmp_path: Path) -> None:
    """An importer scoring stored conversations outside a run (bench-atod) builds the hub and per-conversation access itself."""
    import bench_kernel

    assert bench_kernel.ModelHub is ModelHub and bench_kernel.ConversationModels is ConversationModels
    models_hub, _ = hub(tmp_path)
    models = bench_kernel.ConversationModels(models_hub, run_id="imported", conversation_id="imported/agent/t/0")
    assert models.has("agent") and not models.has("atod-judge")
    asyncio.run(models.complete("agent", HELLO))
    assert models_hub.store is not None
    rows = list(models_hub.store.db.query("select role, conversation_id from llm_calls"))
    assert rows == [{"role": "agent", "conversation_id": "imported/agent/t/0"}]


@attrs.define(eq=False)
class GivingUpClient(ModelClient):
    attempts: int

    async def complete(self, request: ChatRequest) -> ChatResponse:
        error = ModelUnavailableError("gave up")
        error.attempts = self.attempts
        raise error


@attrs.define(kw_only=True, eq=False)
class GivingUpModel(Model):
    name: str = "gives-up"

    def client(self, config: ModelConfig) -> ModelClient:
        return GivingUpClient(attempts=4)


def test_a_failed_call_is_ledgered_with_the_attempts_its_backend_made(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.db")
    models_hub = ModelHub(configs={"agent": ModelConfig(backend="gives-up", model="m")}, backends={"gives-up": GivingUpModel()}, store=store)
    models = ConversationModels(models_hub, run_id="r", conversation_id="c")
    with pytest.raises(ModelUnavailableError):
        asyncio.run(models.complete("agent", HELLO))
    assert models.ledger[0].attempts == 4
    assert list(store.db.query("select attempts, error from llm_calls")) == [{"attempts": 4, "error": "ModelUnavailableError: gave up"}]
    assert ModelError("no retries").attempts == 1
