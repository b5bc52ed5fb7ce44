"""The fourteen tools on a small hand-made database: results, refusals and tau2's quirks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bench_airline.records import ReferenceHasher, dump
from bench_airline.tools import AirlineTools

from bench_kernel import ToolMessage


def parsed(message: ToolMessage) -> Any:
    """The JSON a successful tool message carries."""
    assert not message.error, message.content
    return json.loads(message.content)


BOOKING: dict[str, Any] = {
    "user_id": "ava_lopez_1",
    "origin": "BOS",
    "destination": "SEA",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [{"flight_number": "HAT001", "date": "2024-05-21"}],
    "passengers": [
        {"first_name": "Ava", "last_name": "Lopez", "dob": "1980-02-03"},
        {"first_name": "Mila", "last_name": "Berg", "dob": "1990-01-01", "seat": "ignored"},
    ],
    # 2 x 150 + insurance 2 x 30 + one paid bag 50 = 410
    "payment_methods": [
        {"payment_id": "certificate_1", "amount": 150},
        {"payment_id": "gift_card_1", "amount": 200},
        {"payment_id": "credit_card_1", "amount": 60},
    ],
    "total_baggages": 3,
    "nonfree_baggages": 1,
    "insurance": "yes",
}


def booking(**changes: Any) -> dict[str, Any]:
    return {**BOOKING, **changes}


def user(tools: AirlineTools) -> dict[str, Any]:
    return dump(tools.state["users"]["ava_lopez_1"])


def reservation(tools: AirlineTools, rid: str = "RES001") -> dict[str, Any]:
    return dump(tools.state["reservations"][rid])


def seats(tools: AirlineTools, flight: str, date: str) -> dict[str, int]:
    return dict(tools.state["flights"][flight].dates[date].available_seats)


# ------------------------------------------------------------------ schemas and kinds


def test_fourteen_tools_of_the_right_kinds() -> None:
    specs = AirlineTools.specs()
    kinds = {name: spec.kind.value for name, spec in specs.items()}
    assert sorted(n for n, k in kinds.items() if k == "write") == [
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    ]
    assert sorted(n for n, k in kinds.items() if k == "generic") == ["calculate", "transfer_to_human_agents"]
    assert sorted(n for n, k in kinds.items() if k == "read") == [
        "get_flight_status",
        "get_reservation_details",
        "get_user_details",
        "list_all_airports",
        "search_direct_flight",
        "search_onestop_flight",
    ]


def test_schemas_document_every_parameter_and_list_the_choices() -> None:
    for name, spec in AirlineTools.specs().items():
        function = spec.schema["function"]
        assert function["description"] and function["description"] != name
        for param, schema in function["parameters"]["properties"].items():
            assert schema.get("description"), f"{name}.{param}"
    book = AirlineTools.specs()["book_reservation"].schema["function"]["parameters"]
    assert book["properties"]["cabin"]["enum"] == ["business", "economy", "basic_economy"]
    assert book["properties"]["insurance"]["enum"] == ["yes", "no"]
    flights = book["properties"]["flights"]["items"]["anyOf"]
    assert flights[0]["required"] == ["flight_number", "date"] and flights[1] == {"type": "object"}
    assert len(book["required"]) == 11


# ------------------------------------------------------------------ reads


def test_loaded_records_dump_every_field_with_tau2_types(tools: AirlineTools) -> None:
    profile = user(tools)
    assert profile["address"]["address2"] is None
    assert profile["payment_methods"]["gift_card_1"] == {"source": "gift_card", "id": "gift_card_1", "amount": 200.0}
    assert isinstance(profile["payment_methods"]["gift_card_1"]["amount"], float)
    assert reservation(tools)["status"] is None
    assert dump(tools.state["flights"]["HAT002"].dates["2024-05-21"]) == {"status": "cancelled"}


def test_get_reservation_details_keeps_numbers_and_field_order(call) -> None:
    result = call("get_reservation_details", reservation_id="RES001")
    assert result.content.startswith('{"reservation_id": "RES001", "user_id": "ava_lopez_1", "origin": "BOS"')
    assert result.content.endswith('"total_baggages": 1, "nonfree_baggages": 0, "insurance": "no", "status": null}')
    assert parsed(result)["payment_history"] == [{"payment_id": "credit_card_1", "amount": 220}]


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("get_user_details", {"user_id": "nobody"}, "Error: User nobody not found"),
        ("get_reservation_details", {"reservation_id": "NOPE00"}, "Error: Reservation NOPE00 not found"),
        ("get_flight_status", {"flight_number": "HAT999", "date": "2024-05-20"}, "Error: Flight HAT999 not found"),
        ("get_flight_status", {"flight_number": "HAT001", "date": "2024-06-01"}, "Error: Flight HAT001 not found on date 2024-06-01"),
        ("calculate", {"expression": "2 + x"}, "Error: Invalid characters in expression"),
        ("calculate", {"expression": "1/0"}, "Error: division by zero"),
        ("cancel_reservation", {"reservation_id": "NOPE00"}, "Error: Reservation NOPE00 not found"),
        ("send_certificate", {"user_id": "nobody", "amount": 50}, "Error: User nobody not found"),
    ],
)
def test_lookup_errors(call, name: str, arguments: dict[str, Any], error: str) -> None:
    result = call(name, **arguments)
    assert result.error and result.content == error


def test_flight_status_calculate_transfer_and_airports(call) -> None:
    assert call("get_flight_status", flight_number="HAT001", date="2024-05-15").content == "delayed"
    assert call("calculate", expression="(120 + 30) / 4").content == "37.5"
    assert call("calculate", expression="2 + 2").content == "4.0"
    assert call("transfer_to_human_agents", summary="wants a human").content == "Transfer successful"
    airports = parsed(call("list_all_airports"))
    assert len(airports) == 20 and airports[0] == {"iata": "SFO", "city": "San Francisco"}
    assert airports[-1] == {"iata": "LGA", "city": "LaGuardia"}


def test_search_direct_flight_leaves_the_date_empty(call) -> None:
    found = parsed(call("search_direct_flight", origin="BOS", destination="SEA", date="2024-05-20"))
    assert found == [
        {
            "flight_number": "HAT001",
            "origin": "BOS",
            "destination": "SEA",
            "status": "available",
            "scheduled_departure_time_est": "08:00:00",
            "scheduled_arrival_time_est": "13:00:00",
            "date": None,
            "available_seats": {"basic_economy": 5, "economy": 2, "business": 4},
            "prices": {"basic_economy": 60, "economy": 120, "business": 400},
        }
    ]
    assert parsed(call("search_direct_flight", origin="SEA", destination="LAX", date="2024-05-21")) == []


def test_search_onestop_flight_sets_dates_and_rolls_overnight_arrivals(call) -> None:
    same_day = parsed(call("search_onestop_flight", origin="BOS", destination="LAX", date="2024-05-20"))
    assert [[leg["flight_number"], leg["date"]] for pair in same_day for leg in pair] == [["HAT001", "2024-05-20"], ["HAT002", "2024-05-20"]]
    overnight = parsed(call("search_onestop_flight", origin="SEA", destination="DEN", date="2024-05-20"))
    assert [[leg["flight_number"], leg["date"]] for pair in overnight for leg in pair] == [["HAT002", "2024-05-20"], ["HAT003", "2024-05-21"]]


# ------------------------------------------------------------------ booking


def test_book_reservation_charges_deletes_certificate_and_takes_seats(call, tools: AirlineTools) -> None:
    result = parsed(call("book_reservation", **BOOKING))
    assert result["reservation_id"] == "HATHAT" and result["created_at"] == "2024-05-15T15:00:00"
    assert result["flights"] == [{"flight_number": "HAT001", "origin": "BOS", "destination": "SEA", "date": "2024-05-21", "price": 150}]
    assert result["passengers"][1] == {"first_name": "Mila", "last_name": "Berg", "dob": "1990-01-01"}
    assert result["payment_history"][0] == {"payment_id": "certificate_1", "amount": 150}
    assert result["status"] is None
    methods = user(tools)["payment_methods"]
    assert "certificate_1" not in methods
    assert methods["gift_card_1"]["amount"] == 0.0 and isinstance(methods["gift_card_1"]["amount"], float)
    assert user(tools)["reservations"] == ["RES001", "HATHAT"]
    assert seats(tools, "HAT001", "2024-05-21") == {"basic_economy": 5, "economy": 7, "business": 4}


def test_book_reservation_ids_run_out_after_three(call) -> None:
    cheap = booking(payment_methods=[{"payment_id": "credit_card_1", "amount": 410}])
    assert [parsed(call("book_reservation", **cheap))["reservation_id"] for _ in range(3)] == ["HATHAT", "HATHAU", "HATHAV"]
    assert call("book_reservation", **cheap).content == "Error: Too many reservations"


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"user_id": "nobody"}, "User nobody not found"),
        ({"flights": [{"flight_number": "HAT001", "date": "2024-05-15"}]}, "Flight HAT001 not available on date 2024-05-15"),
        ({"flights": [{"flight_number": "HAT009", "date": "2024-05-21"}]}, "Flight HAT009 not found"),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-20"}], "passengers": [BOOKING["passengers"][0]] * 3},
            "Not enough seats on flight HAT001",
        ),
        ({"payment_methods": [{"payment_id": "gift_card_9", "amount": 410}]}, "Payment method gift_card_9 not found"),
        (
            {"payment_methods": [{"payment_id": "certificate_1", "amount": 160}, {"payment_id": "credit_card_1", "amount": 250}]},
            "Not enough balance in payment method certificate_1",
        ),
        ({"payment_methods": [{"payment_id": "credit_card_1", "amount": 400}]}, "Payment amount does not add up, total price is 410, but paid 400"),
    ],
)
def test_book_reservation_refusals_change_nothing(call, tools: AirlineTools, changes: dict[str, Any], error: str) -> None:
    before = ReferenceHasher()(tools.state)
    result = call("book_reservation", **booking(**changes))
    assert result.error and result.content == f"Error: {error}"
    assert ReferenceHasher()(tools.state) == before


def test_book_reservation_reports_invalid_fields_as_pydantic_does(call) -> None:
    result = call("book_reservation", **booking(cabin="first", total_baggages=1.5))
    assert result.content == (
        "Error: 2 validation errors for Reservation\n"
        "cabin\n"
        "  Input should be 'business', 'economy' or 'basic_economy' [type=literal_error, input_value='first', input_type=str]\n"
        "    For further information visit https://errors.pydantic.dev/2.13/v/literal_error\n"
        "total_baggages\n"
        "  Input should be a valid integer, got a number with a fractional part "
        "[type=int_from_float, input_value=1.5, input_type=float]\n"
        "    For further information visit https://errors.pydantic.dev/2.13/v/int_from_float"
    )
    missing = call("update_reservation_passengers", reservation_id="RES001", passengers=[{"first_name": "A"}] * 2)
    assert missing.content.startswith("Error: 2 validation errors for Passenger\nlast_name\n  Field required [type=missing")


def test_book_reservation_with_a_certificate_listed_twice_fails_after_deleting_it(call, tools: AirlineTools) -> None:
    # tau2 deletes the certificate on its first use, then fails looking it up again; nothing is undone
    twice = [
        {"payment_id": "gift_card_1", "amount": 110},
        {"payment_id": "certificate_1", "amount": 150},
        {"payment_id": "certificate_1", "amount": 150},
    ]
    result = call("book_reservation", **booking(payment_methods=twice))
    assert result.content == "Error: 'certificate_1'"
    methods = user(tools)["payment_methods"]
    assert "certificate_1" not in methods and methods["gift_card_1"]["amount"] == 90.0
    assert "HATHAT" not in tools.state["reservations"]
    assert seats(tools, "HAT001", "2024-05-21")["economy"] == 9


# ------------------------------------------------------------------ updates


def test_cabin_upgrade_charges_the_difference_without_touching_seats(call, tools: AirlineTools) -> None:
    result = parsed(
        call(
            "update_reservation_flights",
            reservation_id="RES001",
            cabin="business",
            flights=[{"flight_number": "HAT001", "date": "2024-05-20"}],
            payment_id="credit_card_1",
        )
    )
    assert result["cabin"] == "business" and result["flights"][0]["price"] == 400
    assert result["payment_history"][-1] == {"payment_id": "credit_card_1", "amount": 580}
    assert seats(tools, "HAT001", "2024-05-20") == {"basic_economy": 5, "economy": 2, "business": 4}


def test_a_refund_credits_the_gift_card_and_is_logged_negative(call, tools: AirlineTools) -> None:
    result = parsed(
        call(
            "update_reservation_flights",
            reservation_id="RES001",
            cabin="basic_economy",
            flights=[{"flight_number": "HAT001", "date": "2024-05-20"}],
            payment_id="gift_card_1",
        )
    )
    assert result["payment_history"][-1] == {"payment_id": "gift_card_1", "amount": -100}
    assert user(tools)["payment_methods"]["gift_card_1"]["amount"] == 300.0


def test_a_kept_flight_keeps_its_price_and_no_payment_is_logged(call) -> None:
    result = parsed(
        call(
            "update_reservation_flights",
            reservation_id="RES001",
            cabin="economy",
            flights=[{"flight_number": "HAT001", "date": "2024-05-20"}],
            payment_id="credit_card_1",
        )
    )
    assert result["flights"][0]["price"] == 110
    assert result["payment_history"] == [{"payment_id": "credit_card_1", "amount": 220}]


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"payment_id": "certificate_1"}, "Certificate cannot be used to update reservation"),
        ({"payment_id": "gift_card_9"}, "Payment method not found"),
        ({"cabin": "business", "payment_id": "gift_card_1"}, "Gift card balance is not enough"),
        ({"cabin": "first"}, "'first'"),
        ({"flights": [{"flight_number": "HAT002", "date": "2024-05-21"}]}, "Flight HAT002 not available on date 2024-05-21"),
        ({"reservation_id": "NOPE00"}, "Reservation NOPE00 not found"),
    ],
)
def test_update_flights_refusals(call, arguments: dict[str, Any], error: str) -> None:
    base = {
        "reservation_id": "RES001",
        "cabin": "economy",
        "payment_id": "credit_card_1",
        "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}],
    }
    result = call("update_reservation_flights", **{**base, **arguments})
    assert result.error and result.content == f"Error: {error}"


def test_baggage_update_charges_new_paid_bags_and_stores_counts_raw(call, tools: AirlineTools) -> None:
    result = parsed(call("update_reservation_baggages", reservation_id="RES001", total_baggages=4, nonfree_baggages=2, payment_id="gift_card_1"))
    assert result["payment_history"][-1] == {"payment_id": "gift_card_1", "amount": 100}
    assert user(tools)["payment_methods"]["gift_card_1"]["amount"] == 100.0
    parsed(call("update_reservation_baggages", reservation_id="RES001", total_baggages=2.0, nonfree_baggages=0, payment_id="credit_card_1"))
    stored = reservation(tools)
    assert stored["total_baggages"] == 2.0 and isinstance(stored["total_baggages"], float)
    assert len(stored["payment_history"]) == 2


def test_baggage_update_refuses_a_certificate_even_for_nothing(call) -> None:
    result = call("update_reservation_baggages", reservation_id="RES001", total_baggages=1, nonfree_baggages=0, payment_id="certificate_1")
    assert result.content == "Error: Certificate cannot be used to update reservation"


def test_passenger_update_keeps_the_count(call, tools: AirlineTools) -> None:
    one = [{"first_name": "Zoe", "last_name": "Berg", "dob": "1999-09-09"}]
    assert call("update_reservation_passengers", reservation_id="RES001", passengers=one).content == "Error: Number of passengers does not match"
    two = [*one, {"first_name": "Noah", "last_name": "Lopez", "dob": "2010-06-07", "note": "dropped"}]
    parsed(call("update_reservation_passengers", reservation_id="RES001", passengers=two))
    assert reservation(tools)["passengers"] == [one[0], {"first_name": "Noah", "last_name": "Lopez", "dob": "2010-06-07"}]


def test_cancel_negates_every_history_entry_each_time(call, tools: AirlineTools) -> None:
    first = parsed(call("cancel_reservation", reservation_id="RES001"))
    assert first["status"] == "cancelled"
    assert [p["amount"] for p in first["payment_history"]] == [220, -220]
    second = parsed(call("cancel_reservation", reservation_id="RES001"))
    assert [p["amount"] for p in second["payment_history"]] == [220, -220, -220, 220]
    assert seats(tools, "HAT001", "2024-05-20")["economy"] == 2


def test_send_certificate_stores_a_float_and_runs_out_after_three(call, tools: AirlineTools) -> None:
    assert (
        call("send_certificate", user_id="ava_lopez_1", amount=150).content
        == "Certificate certificate_3221322 added to user ava_lopez_1 with amount 150."
    )
    assert user(tools)["payment_methods"]["certificate_3221322"] == {"source": "certificate", "id": "certificate_3221322", "amount": 150.0}
    call("send_certificate", user_id="ava_lopez_1", amount=50)
    call("send_certificate", user_id="ava_lopez_1", amount=50)
    assert call("send_certificate", user_id="ava_lopez_1", amount=50).content == "Error: Too many certificates"


def test_writes_never_touch_shared_records(small_db) -> None:
    from bench_airline.records import state_from_json

    from bench_kernel import Environment, ToolCall

    pristine = state_from_json(small_db)
    env = Environment(agent_tools=AirlineTools(pristine.fork()))
    for name, arguments in [
        ("book_reservation", BOOKING),
        ("cancel_reservation", {"reservation_id": "RES001"}),
        ("update_reservation_baggages", {"reservation_id": "RES001", "total_baggages": 3, "nonfree_baggages": 1, "payment_id": "credit_card_1"}),
        ("send_certificate", {"user_id": "ava_lopez_1", "amount": 10}),
    ]:
        assert not env.execute(ToolCall(id="t", name=name, arguments=arguments)).error
    assert pristine.verify_untouched() == []
    assert json.loads(json.dumps(dump(pristine["users"]["ava_lopez_1"])))["payment_methods"]["gift_card_1"]["amount"] == 200.0


def test_initialization_data_patches_are_validated_like_tau2(small_db) -> None:
    from bench_airline.records import state_from_json

    state = state_from_json(small_db)
    state.apply_patch(
        {
            "users": {"ava_lopez_1": {"payment_methods": {"gift_card_1": {"amount": 5}}}},
            "flights": {"HAT001": {"dates": {"2024-05-20": {"status": "cancelled"}}}},
            "reservations": {"RES001": {"status": "cancelled"}},
        }
    )
    assert dump(state["users"]["ava_lopez_1"])["payment_methods"]["gift_card_1"]["amount"] == 5.0
    # the merged date keeps its seats and prices; tau2's model drops them as extra keys
    assert dump(state["flights"]["HAT001"].dates["2024-05-20"]) == {"status": "cancelled"}
    assert state["reservations"]["RES001"].status == "cancelled"
    assert state.verify_untouched() == []
