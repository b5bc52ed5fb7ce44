"""Each tool's semantics and error messages, on a tiny hand-made shop whose numbers show tau2's arithmetic."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from bench_retail.records import base_tables, dump_state, reference_hash
from bench_retail.tools import RetailTools

from bench_kernel import DomainData, Environment, State, Table, ToolCall, ToolMessage, build_environment


def _address(zip_code: str) -> dict[str, str]:
    return {"address1": "1 Test Road", "address2": "", "city": "Testville", "country": "USA", "state": "TX", "zip": zip_code}


def _item(product: str, name: str, item_id: str, price: float, options: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "product_id": product, "item_id": item_id, "price": price, "options": options}


def _order(
    order_id: str, user: str, status: str, items: list[dict[str, Any]], payments: list[tuple[str, float, str]], shipped: bool = False
) -> dict[str, Any]:
    return {
        "order_id": order_id,
        "user_id": user,
        "address": _address("11111"),
        "items": items,
        "status": status,
        "fulfillments": [{"tracking_id": ["999000111222"], "item_ids": [i["item_id"] for i in items]}] if shipped else [],
        "payment_history": [{"transaction_type": t, "amount": a, "payment_method_id": m} for t, a, m in payments],
    }


LAMP, MUG = "1000000001", "1000000002"
BLACK, WHITE, BRASS = "2000000001", "2000000002", "2000000003"
MUG_S, MUG_L, MUG_M, MUG_XL = "3000000001", "3000000002", "3000000003", "3000000004"


def tiny_shop() -> dict[str, Any]:
    """Two products, two customers and six orders whose numbers make tau2's arithmetic visible."""

    def variant(item_id: str, options: dict[str, str], price: float, available: bool = True) -> dict[str, Any]:
        return {"item_id": item_id, "options": options, "available": available, "price": price}

    products = {
        LAMP: {
            "name": "Lamp",
            "product_id": LAMP,
            "variants": {
                BLACK: variant(BLACK, {"color": "black"}, 40.0),
                WHITE: variant(WHITE, {"color": "white"}, 45.5),
                BRASS: variant(BRASS, {"color": "brass"}, 60.1, available=False),
            },
        },
        MUG: {
            "name": "Mug",
            "product_id": MUG,
            "variants": {
                MUG_S: variant(MUG_S, {"size": "S"}, 10.1),
                MUG_L: variant(MUG_L, {"size": "L"}, 12.2),
                MUG_M: variant(MUG_M, {"size": "M"}, 11.3),
                MUG_XL: variant(MUG_XL, {"size": "XL"}, 10.1),
            },
        },
    }
    lamp_black, lamp_white = _item(LAMP, "Lamp", BLACK, 40.0, {"color": "black"}), _item(LAMP, "Lamp", WHITE, 45.5, {"color": "white"})
    mug_s, mug_l = _item(MUG, "Mug", MUG_S, 10.1, {"size": "S"}), _item(MUG, "Mug", MUG_L, 12.2, {"size": "L"})
    users = {
        "ann_lee_1": {
            "user_id": "ann_lee_1",
            "name": {"first_name": "Ann", "last_name": "Lee"},
            "address": _address("11111"),
            "email": "Ann.Lee@example.org",
            "payment_methods": {
                "credit_card_1": {"source": "credit_card", "id": "credit_card_1", "brand": "visa", "last_four": "4242"},
                "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 30.0},
                "paypal_1": {"source": "paypal", "id": "paypal_1"},
            },
            "orders": ["#A1", "#A2", "#A3", "#A4", "#A5"],
        },
        "bob_ray_2": {
            "user_id": "bob_ray_2",
            "name": {"first_name": "Bob", "last_name": "Ray"},
            "address": _address("22222"),
            "email": "bob@example.org",
            "payment_methods": {"gift_card_2": {"source": "gift_card", "id": "gift_card_2", "balance": 5.0}},
            "orders": ["#B1"],
        },
    }
    orders = {
        "#A1": _order("#A1", "ann_lee_1", "pending", [lamp_black, mug_s, dict(mug_s)], [("payment", 60.2, "gift_card_1")]),
        "#A2": _order("#A2", "ann_lee_1", "delivered", [lamp_white, mug_l], [("payment", 57.7, "credit_card_1")], shipped=True),
        "#A3": _order("#A3", "ann_lee_1", "processed", [dict(mug_s)], [("payment", 10.1, "paypal_1")], shipped=True),
        "#A4": _order("#A4", "ann_lee_1", "pending (item modified)", [dict(mug_l)], [("payment", 12.2, "credit_card_1")]),
        "#A5": _order("#A5", "ann_lee_1", "pending", [dict(lamp_black)], [("payment", 40.0, "credit_card_1"), ("payment", 40.0, "paypal_1")]),
        "#B1": _order("#B1", "bob_ray_2", "delivered", [dict(mug_s)], [("payment", 10.1, "gift_card_2")], shipped=True),
    }
    return {"products": products, "users": users, "orders": orders}


@pytest.fixture(scope="session")
def tiny_data() -> DomainData:
    """The tiny shop as a loaded domain (no tasks)."""
    state = State({name: Table(base) for name, base in base_tables(tiny_shop()).items()})
    return DomainData(
        name="retail", tasks=[], policy="", agent_toolkit=RetailTools, agent_state=state, sync_gold_actions=False, reference_hash=reference_hash
    )


@pytest.fixture
def shop(tiny_data: DomainData) -> Environment:
    """A fresh environment over the tiny shop."""
    return build_environment(tiny_data, None)


def call(env: Environment, name: str, **arguments: Any) -> ToolMessage:
    """Run one tool call as a conversation does (errors become error messages)."""
    return env.execute(ToolCall(id="t", name=name, arguments=arguments))


def order(env: Environment, order_id: str) -> dict:
    return json.loads(call(env, "get_order_details", order_id=order_id).content)


def balance(env: Environment, user_id: str, card: str) -> float:
    return env.agent_tools.state["users"][user_id].payment_methods[card].balance


def unchanged(env: Environment, shop_hash: str) -> bool:
    return env.agent_tools.state.content_hash() == shop_hash


@pytest.fixture
def pristine(shop: Environment) -> str:
    return shop.agent_tools.state.content_hash()


def test_sixteen_tools_with_tau2_kinds() -> None:
    specs = RetailTools.specs()
    assert len(specs) == 16
    assert {n for n, s in specs.items() if s.mutates} == {
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
    }
    assert {n for n, s in specs.items() if s.kind.value == "generic"} == {"calculate", "transfer_to_human_agents"}
    for name, spec in specs.items():
        function = spec.schema["function"]
        assert function["description"] and function["description"] != name
        assert all(p.get("description") for p in function["parameters"]["properties"].values()), name
    items = specs["modify_pending_order_items"].schema["function"]["parameters"]["properties"]["item_ids"]
    assert items["type"] == "array" and items["items"] == {"type": "string"}


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("2 + 2", "4.0"),
        ("1/3", "0.33"),
        ("(10 - 4) * 2.5", "15.0"),
        ("-3 // 2", "-2.0"),
        ("1/0", "Error: division by zero"),
        ("2^3", "Error: Invalid characters in expression"),
        ("abs(1)", "Error: Invalid characters in expression"),
    ],
)
def test_calculate(shop, expression, result) -> None:
    assert call(shop, "calculate", expression=expression).content == result


def test_transfer(shop) -> None:
    assert call(shop, "transfer_to_human_agents", summary="wants a human").content == "Transfer successful"


def test_find_user(shop) -> None:
    assert call(shop, "find_user_id_by_email", email="ann.lee@EXAMPLE.org").content == "ann_lee_1"
    assert call(shop, "find_user_id_by_email", email="nobody@example.org").content == "Error: User not found"
    assert call(shop, "find_user_id_by_name_zip", first_name="ANN", last_name="lee", zip="11111").content == "ann_lee_1"
    assert call(shop, "find_user_id_by_name_zip", first_name="Ann", last_name="Lee", zip="22222").content == "Error: User not found"


def test_reads_return_records_with_every_field(shop) -> None:
    details = order(shop, "#A1")
    assert list(details) == [
        "order_id",
        "user_id",
        "address",
        "items",
        "status",
        "fulfillments",
        "payment_history",
        "cancel_reason",
        "exchange_items",
        "exchange_new_items",
        "exchange_payment_method_id",
        "exchange_price_difference",
        "return_items",
        "return_payment_method_id",
    ]
    assert details["cancel_reason"] is None and details["payment_history"][0]["amount"] == 60.2
    user = call(shop, "get_user_details", user_id="ann_lee_1").content
    assert '"gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 30.0}' in user
    assert (
        call(shop, "get_item_details", item_id=MUG_L).content
        == '{"item_id": "3000000002", "options": {"size": "L"}, "available": true, "price": 12.2}'
    )
    assert json.loads(call(shop, "get_product_details", product_id=LAMP).content)["name"] == "Lamp"
    assert call(shop, "list_all_product_types").content == '{"Lamp": "1000000001", "Mug": "1000000002"}'


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("get_order_details", {"order_id": "A1"}, "Order not found"),
        ("get_user_details", {"user_id": "ann"}, "User not found"),
        ("get_product_details", {"product_id": BLACK}, "Product not found"),
        ("get_item_details", {"item_id": LAMP}, "Item not found"),
    ],
)
def test_lookup_errors(shop, name, arguments, message) -> None:
    assert call(shop, name, **arguments).content == f"Error: {message}"


# --------------------------------------------------------------------------- cancel


@pytest.mark.parametrize(
    ("order_id", "reason", "message"),
    [
        ("#A3", "no longer needed", "Non-pending order cannot be cancelled"),
        ("#A4", "no longer needed", "Non-pending order cannot be cancelled"),
        ("#A1", "too expensive", "Invalid reason"),
        ("#X", "no longer needed", "Order not found"),
    ],
)
def test_cancel_refusals(shop, pristine, order_id, reason, message) -> None:
    assert call(shop, "cancel_pending_order", order_id=order_id, reason=reason).content == f"Error: {message}"
    assert unchanged(shop, pristine)


def test_cancel_refunds_gift_cards_at_once(shop) -> None:
    assert not call(shop, "cancel_pending_order", order_id="#A1", reason="ordered by mistake").error
    details = order(shop, "#A1")
    assert details["status"] == "cancelled" and details["cancel_reason"] == "ordered by mistake"
    assert details["payment_history"][1] == {"transaction_type": "refund", "amount": 60.2, "payment_method_id": "gift_card_1"}
    assert balance(shop, "ann_lee_1", "gift_card_1") == 90.2


def test_cancel_refunds_every_history_entry(shop) -> None:
    # After a payment change the history is [payment A, payment B, refund A]: three refunds follow.
    assert not call(shop, "modify_pending_order_payment", order_id="#A1", payment_method_id="credit_card_1").error
    assert balance(shop, "ann_lee_1", "gift_card_1") == 90.2
    call(shop, "cancel_pending_order", order_id="#A1", reason="no longer needed")
    history = order(shop, "#A1")["payment_history"]
    assert [(p["transaction_type"], p["payment_method_id"]) for p in history[3:]] == [
        ("refund", "gift_card_1"),
        ("refund", "credit_card_1"),
        ("refund", "gift_card_1"),
    ]
    assert balance(shop, "ann_lee_1", "gift_card_1") == 210.6


# --------------------------------------------------------------------------- addresses


def test_order_address_needs_a_pending_status_loosely(shop) -> None:
    address = {"address1": "9 New St", "address2": "Apt 2", "city": "Austin", "state": "TX", "country": "USA", "zip": "78701"}
    assert not call(shop, "modify_pending_order_address", order_id="#A4", **address).error
    assert order(shop, "#A4")["address"] == {
        "address1": "9 New St",
        "address2": "Apt 2",
        "city": "Austin",
        "country": "USA",
        "state": "TX",
        "zip": "78701",
    }
    assert call(shop, "modify_pending_order_address", order_id="#A2", **address).content == "Error: Non-pending order cannot be modified"
    bad = call(shop, "modify_pending_order_address", order_id="#A1", **{**address, "zip": 78701})
    assert bad.error and "UserAddress" in bad.content and "zip" in bad.content


def test_user_address(shop) -> None:
    address = {"address1": "9 New St", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "78701"}
    assert call(shop, "modify_user_address", user_id="nobody", **address).content == "Error: User not found"
    assert json.loads(call(shop, "modify_user_address", user_id="ann_lee_1", **address).content)["address"]["zip"] == "78701"
    assert order(shop, "#A1")["address"]["zip"] == "11111"


# --------------------------------------------------------------------------- payment


@pytest.mark.parametrize(
    ("order_id", "method", "message"),
    [
        ("#A2", "paypal_1", "Non-pending order cannot be modified"),
        ("#A1", "gift_card_2", "Payment method not found"),
        ("#A5", "gift_card_1", "There should be exactly one payment for a pending order"),
        ("#A1", "gift_card_1", "The new payment method should be different from the current one"),
        ("#A4", "gift_card_1", None),
    ],
)
def test_payment_change_refusals(shop, pristine, order_id, method, message) -> None:
    result = call(shop, "modify_pending_order_payment", order_id=order_id, payment_method_id=method)
    if message is None:
        assert not result.error  # 12.2 fits in the 30.0 gift card; 'pending (item modified)' counts as pending
        assert balance(shop, "ann_lee_1", "gift_card_1") == 17.8
    else:
        assert result.content == f"Error: {message}"
        assert unchanged(shop, pristine)


def test_payment_change_needs_enough_on_a_gift_card(shop, pristine) -> None:
    call(shop, "modify_pending_order_payment", order_id="#A2", payment_method_id="paypal_1")
    big = call(shop, "modify_pending_order_payment", order_id="#A5", payment_method_id="gift_card_1")
    assert big.error
    # 60.2 on gift_card_1 -> paypal, then back to the 30.0 + 60.2 gift card is refused: two payments now.
    call(shop, "modify_pending_order_payment", order_id="#A1", payment_method_id="paypal_1")
    assert balance(shop, "ann_lee_1", "gift_card_1") == 90.2
    assert [p["transaction_type"] for p in order(shop, "#A1")["payment_history"]] == ["payment", "payment", "refund"]


# --------------------------------------------------------------------------- item changes


def test_item_change_keeps_the_unrounded_diff_and_the_last_variant(shop) -> None:
    result = call(
        shop, "modify_pending_order_items", order_id="#A1", item_ids=[BLACK, MUG_S], new_item_ids=[WHITE, MUG_M], payment_method_id="gift_card_1"
    )
    assert not result.error
    details = order(shop, "#A1")
    assert details["status"] == "pending (item modified)"
    assert details["payment_history"][-1] == {"transaction_type": "payment", "amount": 6.700000000000001, "payment_method_id": "gift_card_1"}
    assert balance(shop, "ann_lee_1", "gift_card_1") == 23.3
    # tau2 quirk: both modified items take the last new variant's price and options; names stay.
    assert [(i["name"], i["item_id"], i["price"], i["options"]) for i in details["items"]] == [
        ("Lamp", WHITE, 11.3, {"size": "M"}),
        ("Mug", MUG_M, 11.3, {"size": "M"}),
        ("Mug", MUG_S, 10.1, {"size": "S"}),
    ]


def test_item_change_with_no_difference_is_a_zero_refund(shop) -> None:
    call(shop, "modify_pending_order_items", order_id="#A1", item_ids=[MUG_S], new_item_ids=[MUG_XL], payment_method_id="credit_card_1")
    last = shop.agent_tools.state["orders"]["#A1"].payment_history[-1]
    assert (last.transaction_type, last.amount, type(last.amount)) == ("refund", 0.0, float)


def test_item_change_with_empty_lists_still_marks_the_order(shop) -> None:
    call(shop, "modify_pending_order_items", order_id="#A1", item_ids=[], new_item_ids=[], payment_method_id="credit_card_1")
    details = order(shop, "#A1")
    assert details["status"] == "pending (item modified)" and details["payment_history"][-1]["amount"] == 0.0


def test_item_change_refunds_a_cheaper_item_to_a_gift_card(shop) -> None:
    call(shop, "modify_pending_order_items", order_id="#A1", item_ids=[MUG_S, MUG_S], new_item_ids=[MUG_L, MUG_XL], payment_method_id="gift_card_1")
    details = order(shop, "#A1")
    assert details["payment_history"][-1]["transaction_type"] == "payment"
    assert [i["item_id"] for i in details["items"]] == [BLACK, MUG_L, MUG_XL]


@pytest.mark.parametrize(
    ("order_id", "old", "new", "method", "message"),
    [
        ("#A4", [MUG_L], [MUG_S], "credit_card_1", "Non-pending order cannot be modified"),
        ("#A1", [MUG_S, MUG_S, MUG_S], [MUG_L, MUG_L, MUG_L], "credit_card_1", f"{MUG_S} not found"),
        ("#A1", [MUG_S], [MUG_L, MUG_M], "credit_card_1", "The number of items to be exchanged should match"),
        ("#A1", [MUG_S], [MUG_S], "credit_card_1", "The new item id should be different from the old item id"),
        ("#A1", [BLACK], [BRASS], "credit_card_1", f"New item {BRASS} not found or available"),
        ("#A1", [BLACK], [MUG_L], "credit_card_1", "Variant not found"),
        ("#A1", [BLACK], [WHITE], "paypal_9", "Payment method not found"),
    ],
)
def test_item_change_refusals(shop, pristine, order_id, old, new, method, message) -> None:
    result = call(shop, "modify_pending_order_items", order_id=order_id, item_ids=old, new_item_ids=new, payment_method_id=method)
    assert result.content == f"Error: {message}"
    assert unchanged(shop, pristine)


def test_item_change_needs_enough_on_a_gift_card(shop, pristine) -> None:
    call(shop, "modify_pending_order_payment", order_id="#A5", payment_method_id="paypal_1")  # refused: two payments
    shop.agent_tools.state["users"].edit("ann_lee_1").payment_methods["gift_card_1"].balance = 5.0
    result = call(shop, "modify_pending_order_items", order_id="#A1", item_ids=[BLACK], new_item_ids=[WHITE], payment_method_id="gift_card_1")
    assert result.content == "Error: Insufficient gift card balance to pay for the new item"


# --------------------------------------------------------------------------- delivered orders


def test_exchange_rounds_the_diff_and_moves_no_money(shop) -> None:
    result = call(
        shop, "exchange_delivered_order_items", order_id="#A2", item_ids=[MUG_L, WHITE], new_item_ids=[MUG_S, BLACK], payment_method_id="gift_card_1"
    )
    assert not result.error
    details = order(shop, "#A2")
    assert details["status"] == "exchange requested"
    assert details["exchange_items"] == [WHITE, MUG_L] and details["exchange_new_items"] == [BLACK, MUG_S]
    assert details["exchange_price_difference"] == -7.6 and details["exchange_payment_method_id"] == "gift_card_1"
    assert len(details["payment_history"]) == 1 and balance(shop, "ann_lee_1", "gift_card_1") == 30.0


def test_exchange_of_nothing_keeps_an_int_zero(shop) -> None:
    call(shop, "exchange_delivered_order_items", order_id="#A2", item_ids=[], new_item_ids=[], payment_method_id="credit_card_1")
    diff = shop.agent_tools.state["orders"]["#A2"].exchange_price_difference
    assert diff == 0 and type(diff) is int


@pytest.mark.parametrize(
    ("order_id", "old", "new", "method", "message"),
    [
        ("#A1", [BLACK], [WHITE], "credit_card_1", "Non-delivered order cannot be exchanged"),
        ("#A2", [MUG_L, MUG_L], [MUG_S, MUG_S], "credit_card_1", f"Number of {MUG_L} not found."),
        ("#A2", [MUG_L], [], "credit_card_1", "The number of items to be exchanged should match."),
        ("#A2", [WHITE], [BRASS], "credit_card_1", f"New item {BRASS} not found or available"),
        ("#A2", [WHITE], [MUG_S], "credit_card_1", "Variant not found"),
        ("#B1", [MUG_S], [MUG_L], "gift_card_2", None),
        ("#B1", [MUG_S], [MUG_L], "gift_card_2x", "Payment method not found"),
    ],
)
def test_exchange_refusals(shop, pristine, order_id, old, new, method, message) -> None:
    if message is None:
        shop.agent_tools.state["users"].edit("bob_ray_2").payment_methods["gift_card_2"].balance = 2.0
        message = "Insufficient gift card balance to pay for the price difference"
        pristine = shop.agent_tools.state.content_hash()
    result = call(shop, "exchange_delivered_order_items", order_id=order_id, item_ids=old, new_item_ids=new, payment_method_id=method)
    assert result.content == f"Error: {message}"
    assert unchanged(shop, pristine)


def test_return_to_the_original_method_or_a_gift_card(shop, pristine) -> None:
    assert (
        call(shop, "return_delivered_order_items", order_id="#A2", item_ids=[MUG_L], payment_method_id="paypal_1").content
        == "Error: Payment method should be the original payment method"
    )
    assert (
        call(shop, "return_delivered_order_items", order_id="#A2", item_ids=[MUG_S], payment_method_id="credit_card_1").content
        == "Error: Some item not found"
    )
    assert (
        call(shop, "return_delivered_order_items", order_id="#A1", item_ids=[BLACK], payment_method_id="gift_card_1").content
        == "Error: Non-delivered order cannot be returned"
    )
    assert unchanged(shop, pristine)
    assert not call(shop, "return_delivered_order_items", order_id="#A2", item_ids=[MUG_L, WHITE], payment_method_id="gift_card_1").error
    details = order(shop, "#A2")
    assert (details["status"], details["return_items"], details["return_payment_method_id"]) == ("return requested", [WHITE, MUG_L], "gift_card_1")
    assert balance(shop, "ann_lee_1", "gift_card_1") == 30.0


# --------------------------------------------------------------------------- state discipline and hashing


def test_conversations_are_isolated_and_shared_records_untouched(shop, tiny_data) -> None:
    call(shop, "cancel_pending_order", order_id="#A1", reason="no longer needed")
    call(shop, "modify_pending_order_items", order_id="#A5", item_ids=[BLACK], new_item_ids=[WHITE], payment_method_id="paypal_1")
    call(shop, "exchange_delivered_order_items", order_id="#A2", item_ids=[MUG_L], new_item_ids=[MUG_M], payment_method_id="gift_card_1")
    assert tiny_data.agent_state["orders"]["#A1"].status == "pending"
    assert tiny_data.agent_state["users"]["ann_lee_1"].payment_methods["gift_card_1"].balance == 30.0
    assert tiny_data.agent_state.verify_untouched() == []


def test_reference_hash_is_the_hash_of_the_whole_dump(shop) -> None:
    def full(state) -> str:
        return hashlib.sha256(json.dumps(dump_state(state), sort_keys=True, default=str).encode()).hexdigest()

    assert reference_hash(shop.agent_tools.state) == full(shop.agent_tools.state)
    call(shop, "modify_pending_order_items", order_id="#A1", item_ids=[BLACK, MUG_S], new_item_ids=[WHITE, MUG_M], payment_method_id="gift_card_1")
    call(shop, "exchange_delivered_order_items", order_id="#A2", item_ids=[], new_item_ids=[], payment_method_id="paypal_1")
    assert reference_hash(shop.agent_tools.state) == full(shop.agent_tools.state)
    assert '"exchange_price_difference": 0,' in json.dumps(dump_state(shop.agent_tools.state), sort_keys=True)


def test_initialization_data_patches_records_and_keeps_their_types(tiny_data) -> None:
    from bench_retail.records import GiftCard, Paypal

    from bench_kernel import Task, converter

    task = converter.structure(
        {
            "id": "patched",
            "user_scenario": {"instructions": "hi"},
            "initial_state": {
                "initialization_data": {
                    "agent_data": {
                        "users": {"ann_lee_1": {"payment_methods": {"gift_card_1": {"balance": 99.5}}}},
                        "orders": {"#A3": {"status": "pending"}},
                    }
                }
            },
        },
        Task,
    )
    env = build_environment(tiny_data, task)
    methods = env.agent_tools.state["users"]["ann_lee_1"].payment_methods
    assert isinstance(methods["gift_card_1"], GiftCard) and methods["gift_card_1"].balance == 99.5
    assert isinstance(methods["paypal_1"], Paypal)
    assert not call(env, "cancel_pending_order", order_id="#A3", reason="no longer needed").error
    assert tiny_data.agent_state.verify_untouched() == []
