"""Shared fixtures: a tiny hand-made airline database, our packaged suite, and tau2's reference data when present."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bench_airline import AirlineDomain
from bench_airline.records import state_from_json
from bench_airline.tools import AirlineTools

from bench_kernel import DomainData, DomainOptions, Environment, ToolCall, ToolMessage

REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "tau2"

SMALL_DB: dict[str, Any] = {
    "flights": {
        "HAT001": {
            "flight_number": "HAT001",
            "origin": "BOS",
            "destination": "SEA",
            "scheduled_departure_time_est": "08:00:00",
            "scheduled_arrival_time_est": "13:00:00",
            "dates": {
                "2024-05-14": {
                    "status": "landed",
                    "actual_departure_time_est": "2024-05-14T08:05:00",
                    "actual_arrival_time_est": "2024-05-14T13:02:00",
                },
                "2024-05-15": {
                    "status": "delayed",
                    "estimated_departure_time_est": "2024-05-15T17:00:00",
                    "estimated_arrival_time_est": "2024-05-15T22:00:00",
                },
                "2024-05-20": {
                    "status": "available",
                    "available_seats": {"basic_economy": 5, "economy": 2, "business": 4},
                    "prices": {"basic_economy": 60, "economy": 120, "business": 400},
                },
                "2024-05-21": {
                    "status": "available",
                    "available_seats": {"basic_economy": 5, "economy": 9, "business": 4},
                    "prices": {"basic_economy": 70, "economy": 150, "business": 300},
                },
            },
        },
        "HAT002": {
            "flight_number": "HAT002",
            "origin": "SEA",
            "destination": "LAX",
            "scheduled_departure_time_est": "20:00:00",
            "scheduled_arrival_time_est": "01:00:00+1",
            "dates": {
                "2024-05-20": {
                    "status": "available",
                    "available_seats": {"basic_economy": 1, "economy": 9, "business": 9},
                    "prices": {"basic_economy": 50, "economy": 100, "business": 250},
                },
                "2024-05-21": {"status": "cancelled"},
            },
        },
        "HAT003": {
            "flight_number": "HAT003",
            "origin": "LAX",
            "destination": "DEN",
            "scheduled_departure_time_est": "06:00:00",
            "scheduled_arrival_time_est": "08:00:00",
            "dates": {
                "2024-05-21": {
                    "status": "available",
                    "available_seats": {"basic_economy": 3, "economy": 3, "business": 3},
                    "prices": {"basic_economy": 40, "economy": 90, "business": 200},
                }
            },
        },
    },
    "users": {
        "ava_lopez_1": {
            "user_id": "ava_lopez_1",
            "name": {"first_name": "Ava", "last_name": "Lopez"},
            "address": {"address1": "1 Elm Street", "city": "Austin", "country": "USA", "state": "TX", "zip": "78701"},
            "email": "ava@example.org",
            "dob": "1980-02-03",
            "payment_methods": {
                "credit_card_1": {"source": "credit_card", "id": "credit_card_1", "brand": "visa", "last_four": "1111"},
                "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "amount": 200},
                "certificate_1": {"source": "certificate", "id": "certificate_1", "amount": 150.0},
            },
            "saved_passengers": [],
            "membership": "silver",
            "reservations": ["RES001"],
        },
    },
    "reservations": {
        "RES001": {
            "reservation_id": "RES001",
            "user_id": "ava_lopez_1",
            "origin": "BOS",
            "destination": "SEA",
            "flight_type": "one_way",
            "cabin": "economy",
            "flights": [{"flight_number": "HAT001", "origin": "BOS", "destination": "SEA", "date": "2024-05-20", "price": 110}],
            "passengers": [
                {"first_name": "Ava", "last_name": "Lopez", "dob": "1980-02-03"},
                {"first_name": "Noah", "last_name": "Lopez", "dob": "2010-06-07"},
            ],
            "payment_history": [{"payment_id": "credit_card_1", "amount": 220}],
            "created_at": "2024-05-01T10:00:00",
            "total_baggages": 1,
            "nonfree_baggages": 0,
            "insurance": "no",
        },
    },
}


@pytest.fixture
def small_db() -> dict[str, Any]:
    """A private copy of the hand-made database as JSON."""
    return copy.deepcopy(SMALL_DB)


@pytest.fixture
def tools(small_db: dict[str, Any]) -> AirlineTools:
    """The toolkit over a fresh state of the hand-made database."""
    return AirlineTools(state_from_json(small_db))


@pytest.fixture
def call(tools: AirlineTools) -> Callable[..., ToolMessage]:
    """Run one tool call as a conversation does (errors become 'Error: ...' tool messages)."""
    env = Environment(agent_tools=tools)

    def run(name: str, **arguments: Any) -> ToolMessage:
        return env.execute(ToolCall(id="t", name=name, arguments=arguments))

    return run


@pytest.fixture(scope="session")
def data() -> DomainData:
    """Our packaged suite, loaded once."""
    return AirlineDomain(name="airline").load(DomainOptions())


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """tau2's airline data, or a skip when the shared reference directory is absent."""
    path = REFERENCE / "airline"
    if not (path / "db.json").is_file():
        pytest.skip(f"tau2 reference data not found at {path.resolve()} (it lives outside the repo, in ../shared)")
    return path


@pytest.fixture(scope="session")
def reference_data(reference_dir: Path) -> DomainData:
    """tau2's airline domain as our plugin loads it."""
    return AirlineDomain(name="airline").load(DomainOptions(data_dir=reference_dir))


@pytest.fixture(scope="session")
def expected_hashes() -> dict[str, Any]:
    """The airline part of tau2's sample of expected hashes."""
    path = REFERENCE / "expected_hashes_sample.json"
    if not path.is_file():
        pytest.skip(f"tau2 expected hashes not found at {path.resolve()}")
    return json.loads(path.read_text())["domains"]["airline"]
