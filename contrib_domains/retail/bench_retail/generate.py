"""Our own retail suite, generated from a seed: a shop database and tasks over it.

    python -m bench_retail.generate --seed 7 --out DIR      (or: bench retail generate --seed 7 --out DIR)

Everything is drawn from one random.Random(seed), so a seed always gives the same files. Each
task is kept only if its gold actions all run on the generated database and the do-nothing
agent would fail it.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

from bench_kernel import DomainData, State, Table, Task, TerminationReason, build_environment, converter, evaluate, replay_gold

from .records import base_tables, reference_hash
from .tools import RetailTools

DEFAULT_SEED = 7
NUM_USERS = 60
NUM_ORDERS = 190
DOMAIN = "retail"

FIRST_NAMES = [
    "Amara",
    "Bruno",
    "Chen",
    "Dalia",
    "Emeka",
    "Farah",
    "Gustavo",
    "Hana",
    "Ivan",
    "Jada",
    "Kofi",
    "Leila",
    "Mateo",
    "Nadia",
    "Oskar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sami",
    "Tova",
    "Umar",
    "Vera",
    "Wes",
    "Ximena",
    "Yara",
    "Zane",
]
LAST_NAMES = [
    "Adeyemi",
    "Bergstrom",
    "Castillo",
    "Dubois",
    "Eriksen",
    "Fontaine",
    "Greco",
    "Haddad",
    "Ishikawa",
    "Jovanovic",
    "Kowalski",
    "Lindqvist",
    "Mbeki",
    "Novak",
    "Okonkwo",
    "Petrov",
    "Quintero",
    "Rahman",
    "Silva",
    "Tanaka",
    "Underwood",
    "Varga",
    "Whitfield",
    "Yilmaz",
]
STREETS = [
    "Alder Lane",
    "Birch Road",
    "Cedar Court",
    "Dockside Way",
    "Elm Street",
    "Fern Avenue",
    "Granite Drive",
    "Harbor View",
    "Iris Place",
    "Juniper Trail",
    "Kestrel Row",
    "Linden Boulevard",
    "Maple Terrace",
]
CITIES = [
    ("Portland", "OR", "97"),
    ("Austin", "TX", "78"),
    ("Columbus", "OH", "43"),
    ("Denver", "CO", "80"),
    ("Raleigh", "NC", "27"),
    ("Madison", "WI", "53"),
    ("Tucson", "AZ", "85"),
    ("Boise", "ID", "83"),
    ("Albany", "NY", "12"),
    ("Savannah", "GA", "31"),
]
CATALOGUE: dict[str, tuple[float, dict[str, list[str]]]] = {
    "Desk Lamp": (48.0, {"color": ["black", "white", "brass"], "bulb": ["LED", "halogen"]}),
    "Trail Shoes": (119.0, {"size": ["8", "9", "10", "11"], "color": ["grey", "olive", "blue"]}),
    "Daypack": (74.0, {"capacity": ["18L", "24L", "30L"], "color": ["black", "red", "teal"]}),
    "Coffee Grinder": (89.0, {"burr": ["conical", "flat"], "hopper": ["small", "large"]}),
    "Yoga Mat": (39.0, {"thickness": ["4mm", "6mm", "8mm"], "color": ["purple", "green", "charcoal"]}),
    "Wireless Earbuds": (129.0, {"color": ["white", "black", "navy"], "case": ["standard", "wireless charging"]}),
    "Rain Shell": (149.0, {"size": ["S", "M", "L", "XL"], "color": ["yellow", "black"]}),
    "Tea Kettle": (59.0, {"material": ["steel", "glass"], "capacity": ["1L", "1.7L"]}),
    "Portable Speaker": (99.0, {"color": ["red", "black", "sand"], "battery": ["10h", "20h"]}),
    "Water Bottle": (24.0, {"capacity": ["500ml", "750ml", "1000ml"], "material": ["steel", "plastic"]}),
    "Notebook": (14.0, {"paper": ["lined", "dotted", "blank"], "size": ["A5", "A4"]}),
    "Office Chair": (289.0, {"frame": ["black", "white"], "armrest": ["fixed", "adjustable"], "mesh": ["yes", "no"]}),
}
STATUS_WEIGHTS = {
    "pending": 34,
    "processed": 14,
    "delivered": 34,
    "cancelled": 7,
    "pending (item modified)": 4,
    "exchange requested": 4,
    "return requested": 3,
}
PERSONAS = [
    "You are polite and patient.",
    "You are in a hurry and answer briefly.",
    "You are friendly and like to double-check details.",
    "You are a little anxious about money.",
    "You are matter-of-fact and expect the agent to be precise.",
]


def money(value: float) -> str:
    """An amount as the agent should say it: two decimals, no thousands separators."""
    return f"{value:.2f}"


# --------------------------------------------------------------------------- database


class Ids:
    """Unique random digit strings, per kind."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def digits(self, n: int) -> str:
        """A new n-digit string."""
        while True:
            value = "".join(str(self.rng.randint(0, 9)) for _ in range(n))
            if value[0] != "0" and value not in self.used:
                self.used.add(value)
                return value


def build_products(rng: random.Random, ids: Ids) -> dict[str, Any]:
    """Every catalogue product with a random subset of its option combinations as variants."""
    products = {}
    for name, (base_price, axes) in CATALOGUE.items():
        combos = list(itertools.product(*axes.values()))
        chosen = rng.sample(combos, min(len(combos), rng.randint(4, 8)))
        variants = {}
        for combo in chosen:
            item_id = ids.digits(10)
            price = round(base_price * rng.uniform(0.85, 1.2), 2)
            variants[item_id] = {
                "item_id": item_id,
                "options": dict(zip(axes, combo, strict=False)),
                "available": rng.random() < 0.75,
                "price": price,
            }
        product_id = ids.digits(10)
        products[product_id] = {"name": name, "product_id": product_id, "variants": variants}
    return products


def random_address(rng: random.Random) -> dict[str, str]:
    """A plausible US address."""
    city, state, prefix = rng.choice(CITIES)
    return {
        "address1": f"{rng.randint(10, 9999)} {rng.choice(STREETS)}",
        "address2": rng.choice(["", "", f"Apt {rng.randint(1, 40)}", f"Suite {rng.randint(100, 999)}"]),
        "city": city,
        "country": "USA",
        "state": state,
        "zip": f"{prefix}{rng.randint(100, 999)}",
    }


def build_users(rng: random.Random, ids: Ids) -> dict[str, Any]:
    """Customers with unique emails and (first, last, zip), each with one to three payment methods."""
    users: dict[str, Any] = {}
    seen: set[tuple[str, str]] = set()
    while len(users) < NUM_USERS:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        if (first, last) in seen:
            continue
        seen.add((first, last))
        user_id = f"{first.lower()}_{last.lower()}_{ids.digits(4)}"
        methods: dict[str, Any] = {}
        for source in rng.sample(["credit_card", "paypal", "gift_card"], rng.randint(1, 3)):
            method_id = f"{source}_{ids.digits(7)}"
            method: dict[str, Any] = {"source": source, "id": method_id}
            if source == "credit_card":
                method.update(brand=rng.choice(["visa", "mastercard", "amex"]), last_four=ids.digits(4))
            if source == "gift_card":
                method["balance"] = float(rng.choice([0, 25, 60, 120, 250, 400]) + rng.randint(0, 99) / 100)
            methods[method_id] = method
        users[user_id] = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": random_address(rng),
            "email": f"{first.lower()}.{last.lower()}{ids.digits(3)}@example.org",
            "payment_methods": methods,
            "orders": [],
        }
    return users


def build_orders(rng: random.Random, ids: Ids, users: dict[str, Any], products: dict[str, Any]) -> dict[str, Any]:
    """Orders in every status, with payments, refunds and shipments that agree with the status."""
    orders = {}
    statuses, weights = zip(*STATUS_WEIGHTS.items(), strict=False)
    user_ids = list(users)
    for _ in range(NUM_ORDERS):
        user = users[rng.choice(user_ids)]
        order_id = f"#R{ids.digits(7)}"
        items = []
        for product in rng.sample(list(products.values()), rng.randint(1, 4)):
            variant = product["variants"][rng.choice(list(product["variants"]))]
            items.append(
                {
                    "name": product["name"],
                    "product_id": product["product_id"],
                    "item_id": variant["item_id"],
                    "price": variant["price"],
                    "options": dict(variant["options"]),
                }
            )
        status = rng.choices(statuses, weights)[0]
        method_id = rng.choice(list(user["payment_methods"]))
        total = round(sum(i["price"] for i in items), 2)
        order: dict[str, Any] = {
            "order_id": order_id,
            "user_id": user["user_id"],
            "address": dict(user["address"]) if rng.random() < 0.85 else random_address(rng),
            "items": items,
            "status": status,
            "fulfillments": [],
            "payment_history": [{"transaction_type": "payment", "amount": total, "payment_method_id": method_id}],
        }
        if status not in ("pending", "pending (item modified)", "cancelled"):
            order["fulfillments"] = [{"tracking_id": [ids.digits(12)], "item_ids": [i["item_id"] for i in items]}]
        if status == "cancelled":
            order["payment_history"].append({"transaction_type": "refund", "amount": total, "payment_method_id": method_id})
            order["cancel_reason"] = rng.choice(["no longer needed", "ordered by mistake"])
        if status == "return requested":
            order["return_items"] = sorted(i["item_id"] for i in items[:1])
            order["return_payment_method_id"] = method_id
        if status == "exchange requested":
            item = items[0]
            new = next(v for v in products[item["product_id"]]["variants"].values() if v["item_id"] != item["item_id"])
            order.update(
                exchange_items=[item["item_id"]],
                exchange_new_items=[new["item_id"]],
                exchange_payment_method_id=method_id,
                exchange_price_difference=round(new["price"] - item["price"], 2),
            )
        orders[order_id] = order
        user["orders"].append(order_id)
    return orders


def build_db(rng: random.Random) -> dict[str, Any]:
    """The whole shop database, as tau2's retail db.json lays it out."""
    ids = Ids(rng)
    products = build_products(rng, ids)
    users = build_users(rng, ids)
    return {"products": products, "users": users, "orders": build_orders(rng, ids, users, products)}


# --------------------------------------------------------------------------- tasks


class TaskMaker:
    """Builds task scenarios over a database; each maker returns a task dict, or None when it cannot."""

    def __init__(self, rng: random.Random, db: dict[str, Any]) -> None:
        self.rng = rng
        self.db = db
        self.counter = itertools.count()
        self.used_orders: set[str] = set()

    # ---------------------------------------------------------------- helpers

    def orders_with(self, predicate: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Unused orders matching predicate, in database order."""
        return [o for o in self.db["orders"].values() if o["order_id"] not in self.used_orders and predicate(o)]

    def pick_order(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        """A random unused order matching predicate, marked used."""
        found = self.orders_with(predicate)
        if not found:
            return None
        order = self.rng.choice(found)
        self.used_orders.add(order["order_id"])
        return order

    def identify(self, user: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
        """How the user identifies (known and unknown info) and the gold lookups that follow."""
        name = f"{user['name']['first_name']} {user['name']['last_name']}"
        lookups = [self.action("get_user_details", user_id=user["user_id"])]
        if self.rng.random() < 0.5:
            known = f"You are {name}. Your email address is {user['email']}."
            return known, "", [self.action("find_user_id_by_email", email=user["email"]), *lookups]
        known = f"You are {name} and your zip code is {user['address']['zip']}."
        first = self.action(
            "find_user_id_by_name_zip", first_name=user["name"]["first_name"], last_name=user["name"]["last_name"], zip=user["address"]["zip"]
        )
        return known, "You do not remember which email address you used.", [first, *lookups]

    def action(self, name: str, **arguments: Any) -> dict[str, Any]:
        """A gold action (ids are filled in when the task is numbered)."""
        return {"action_id": "", "name": name, "arguments": arguments, "info": None}

    def other_variant(self, item: dict[str, Any], budget: float | None = None) -> dict[str, Any] | None:
        """An available variant of the item's product other than the item (cheaper than item + budget)."""
        variants = self.db["products"][item["product_id"]]["variants"].values()
        found = [
            v for v in variants if v["available"] and v["item_id"] != item["item_id"] and (budget is None or v["price"] - item["price"] <= budget)
        ]
        return self.rng.choice(found) if found else None

    def describe(self, options: dict[str, str]) -> str:
        """Options as words: 'color black, bulb LED'."""
        return ", ".join(f"{k} {v}" for k, v in options.items())

    def task(
        self, kind: str, user: dict[str, Any], reason: str, actions: list[dict[str, Any]], info: list[str] | None = None, extra: str = ""
    ) -> dict[str, Any]:
        """A task dict in tau2's format; DB plus COMMUNICATE when facts must be told, else DB."""
        known, unknown, lookups = self.identify(user)
        instructions = " ".join(p for p in [self.rng.choice(PERSONAS), extra, "Confirm the change when the agent asks for it."] if p)
        return {
            "id": "",
            "description": {"purpose": kind, "relevant_policies": None, "notes": None},
            "user_scenario": {
                "persona": None,
                "instructions": {
                    "domain": DOMAIN,
                    "reason_for_call": reason,
                    "known_info": known,
                    "unknown_info": unknown or None,
                    "task_instructions": instructions,
                },
            },
            "initial_state": None,
            "evaluation_criteria": {
                "actions": lookups + actions,
                "communicate_info": info or [],
                "nl_assertions": None,
                "reward_basis": ["DB", "COMMUNICATE"] if info else ["DB"],
            },
        }

    def user_of(self, order: dict[str, Any]) -> dict[str, Any]:
        """The order's customer."""
        return self.db["users"][order["user_id"]]

    def gift_card(self, user: dict[str, Any], at_least: float) -> str | None:
        """A gift card of the user's holding at least the amount."""
        for method in user["payment_methods"].values():
            if method["source"] == "gift_card" and method["balance"] >= at_least:
                return str(method["id"])
        return None

    # ---------------------------------------------------------------- scenarios

    def cancel(self) -> dict[str, Any] | None:
        """Cancel a pending order; the refund total must be told."""
        order = self.pick_order(lambda o: o["status"] == "pending")
        if order is None:
            return None
        reason = self.rng.choice(["no longer needed", "ordered by mistake"])
        why = "you no longer need it" if reason == "no longer needed" else "you ordered it by mistake"
        refund = money(sum(p["amount"] for p in order["payment_history"]))
        names = " and ".join(i["name"].lower() for i in order["items"])
        actions = [
            self.action("get_order_details", order_id=order["order_id"]),
            self.action("cancel_pending_order", order_id=order["order_id"], reason=reason),
        ]
        return self.task(
            "cancel pending order",
            self.user_of(order),
            f"You want to cancel order {order['order_id']} (the {names}) because {why}. You want to know how much will be refunded.",
            actions,
            [refund],
        )

    def modify_items(self) -> dict[str, Any] | None:
        """Swap one or two items of a pending order for other variants."""
        order = self.pick_order(lambda o: o["status"] == "pending")
        if order is None:
            return None
        user = self.user_of(order)
        pairs = []
        for item in self.rng.sample(order["items"], min(len(order["items"]), self.rng.choice([1, 1, 2]))):
            new = self.other_variant(item)
            if new is not None:
                pairs.append((item, new))
        if not pairs:
            return None
        diff = sum(new["price"] - item["price"] for item, new in pairs)
        method = self.gift_card(user, max(diff, 0)) if self.rng.random() < 0.5 else None
        method = method or order["payment_history"][0]["payment_method_id"]
        wants = "; ".join(
            f"the {item['name'].lower()} with {self.describe(new['options'])} instead of {self.describe(item['options'])}" for item, new in pairs
        )
        actions = [self.action("get_order_details", order_id=order["order_id"])]
        actions += [self.action("get_product_details", product_id=item["product_id"]) for item, _ in pairs]
        actions.append(
            self.action(
                "modify_pending_order_items",
                order_id=order["order_id"],
                item_ids=[i["item_id"] for i, _ in pairs],
                new_item_ids=[n["item_id"] for _, n in pairs],
                payment_method_id=method,
            )
        )
        return self.task(
            "modify pending order items",
            user,
            f"Your order {order['order_id']} has not shipped yet. You want {wants}.",
            actions,
            extra=f"Any price difference should be settled with your payment method {method}.",
        )

    def modify_order_address(self) -> dict[str, Any] | None:
        """Ship a pending order to a new address."""
        order = self.pick_order(lambda o: "pending" in o["status"])
        if order is None:
            return None
        address = random_address(self.rng)
        actions = [
            self.action("get_order_details", order_id=order["order_id"]),
            self.action("modify_pending_order_address", order_id=order["order_id"], **address),
        ]
        line2 = f", {address['address2']}" if address["address2"] else ""
        return self.task(
            "modify pending order address",
            self.user_of(order),
            f"You want order {order['order_id']} shipped to {address['address1']}{line2}, {address['city']}, "
            f"{address['state']} {address['zip']}, {address['country']} instead.",
            actions,
            extra="Only this order should change, not your default address.",
        )

    def modify_payment(self) -> dict[str, Any] | None:
        """Pay a pending order with another method."""

        def fits(o: dict[str, Any]) -> bool:
            return "pending" in o["status"] and len(o["payment_history"]) == 1 and len(self.user_of(o)["payment_methods"]) > 1

        order = self.pick_order(fits)
        if order is None:
            return None
        user, amount = self.user_of(order), order["payment_history"][0]["amount"]
        old = order["payment_history"][0]["payment_method_id"]
        choices = [m for m in user["payment_methods"].values() if m["id"] != old and (m["source"] != "gift_card" or m["balance"] >= amount)]
        if not choices:
            return None
        new = self.rng.choice(choices)
        actions = [
            self.action("get_order_details", order_id=order["order_id"]),
            self.action("modify_pending_order_payment", order_id=order["order_id"], payment_method_id=new["id"]),
        ]
        return self.task(
            "modify pending order payment",
            user,
            f"You want to pay for order {order['order_id']} with your {new['source'].replace('_', ' ')} "
            f"({new['id']}) instead of the method you used.",
            actions,
        )

    def modify_user_address(self) -> dict[str, Any] | None:
        """Change the customer's default address."""
        user = self.rng.choice(list(self.db["users"].values()))
        address = random_address(self.rng)
        line2 = f", {address['address2']}" if address["address2"] else ""
        actions = [self.action("modify_user_address", user_id=user["user_id"], **address)]
        return self.task(
            "modify user address",
            user,
            f"You moved. Your new default address is {address['address1']}{line2}, {address['city']}, "
            f"{address['state']} {address['zip']}, {address['country']}.",
            actions,
            extra="You do not want any order changed.",
        )

    def return_items(self) -> dict[str, Any] | None:
        """Return some items of a delivered order, refunded to the original method or a gift card."""
        order = self.pick_order(lambda o: o["status"] == "delivered")
        if order is None:
            return None
        user = self.user_of(order)
        items = self.rng.sample(order["items"], self.rng.randint(1, len(order["items"])))
        gift = self.gift_card(user, 0)
        method = gift if gift and self.rng.random() < 0.4 else order["payment_history"][0]["payment_method_id"]
        refund = money(sum(i["price"] for i in items))
        names = " and ".join(f"the {i['name'].lower()}" for i in items)
        actions = [
            self.action("get_order_details", order_id=order["order_id"]),
            self.action("return_delivered_order_items", order_id=order["order_id"], item_ids=[i["item_id"] for i in items], payment_method_id=method),
        ]
        where = "to your gift card" if method.startswith("gift_card") else "to the way you paid"
        return self.task(
            "return delivered items",
            user,
            f"You want to return {names} from order {order['order_id']}, with the refund going {where} "
            f"({method}). You want to know the refund amount.",
            actions,
            [refund],
        )

    def exchange_items(self) -> dict[str, Any] | None:
        """Exchange items of a delivered order for other variants."""
        order = self.pick_order(lambda o: o["status"] == "delivered")
        if order is None:
            return None
        user = self.user_of(order)
        pairs = [
            (item, new) for item in self.rng.sample(order["items"], min(2, len(order["items"]))) if (new := self.other_variant(item)) is not None
        ][: self.rng.choice([1, 2])]
        if not pairs:
            return None
        diff = round(sum(new["price"] - item["price"] for item, new in pairs), 2)
        method = order["payment_history"][0]["payment_method_id"]
        if method.startswith("gift_card") and self.gift_card(user, diff) != method:
            return None
        wants = "; ".join(f"the {item['name'].lower()} for the one with {self.describe(new['options'])}" for item, new in pairs)
        actions = [self.action("get_order_details", order_id=order["order_id"])]
        actions += [self.action("get_product_details", product_id=item["product_id"]) for item, _ in pairs]
        actions.append(
            self.action(
                "exchange_delivered_order_items",
                order_id=order["order_id"],
                item_ids=[i["item_id"] for i, _ in pairs],
                new_item_ids=[n["item_id"] for _, n in pairs],
                payment_method_id=method,
            )
        )
        word = "pay" if diff > 0 else "get back"
        return self.task(
            "exchange delivered items",
            user,
            f"You received order {order['order_id']} and want to exchange {wants}. "
            f"You want to know how much you will {word}, settled with the original payment method.",
            actions,
            [money(abs(diff))],
        )

    def status_question(self) -> dict[str, Any] | None:
        """Read-only: the status and tracking number of a shipped order."""
        order = self.pick_order(lambda o: o["status"] in ("processed", "delivered"))
        if order is None:
            return None
        tracking = order["fulfillments"][0]["tracking_id"][0]
        actions = [self.action("get_order_details", order_id=order["order_id"])]
        return self.task(
            "order status question",
            self.user_of(order),
            f"You want to know the status of order {order['order_id']} and its tracking number. You do not want to change anything.",
            actions,
            [order["status"], tracking],
        )

    def balance_question(self) -> dict[str, Any] | None:
        """Read-only: the balance left on the customer's gift card."""
        users = [u for u in self.db["users"].values() if any(m["source"] == "gift_card" for m in u["payment_methods"].values())]
        user = self.rng.choice(users)
        card = next(m for m in user["payment_methods"].values() if m["source"] == "gift_card")
        return self.task(
            "gift card balance question",
            user,
            "You want to know how much money is left on your gift card. You do not want to change anything.",
            [],
            [money(card["balance"])],
        )

    def price_question(self) -> dict[str, Any] | None:
        """Read-only: the price of a specific variant of a product."""
        product = self.rng.choice(list(self.db["products"].values()))
        variant = self.rng.choice([v for v in product["variants"].values() if v["available"]])
        user = self.rng.choice(list(self.db["users"].values()))
        actions = [self.action("list_all_product_types"), self.action("get_product_details", product_id=product["product_id"])]
        return self.task(
            "price question",
            user,
            f"You are thinking of buying a {product['name'].lower()} with {self.describe(variant['options'])} "
            "and want to know its price and whether it is in stock. You do not want to change anything.",
            actions,
            [money(variant["price"])],
        )

    def cancel_refused(self) -> dict[str, Any] | None:
        """A cancellation the policy refuses (the order shipped): the agent must say its status."""
        order = self.pick_order(lambda o: o["status"] == "processed")
        if order is None:
            return None
        actions = [self.action("get_order_details", order_id=order["order_id"])]
        return self.task(
            "cancel refused: already processed",
            self.user_of(order),
            f"You want to cancel order {order['order_id']} because you no longer need it. "
            "If it cannot be cancelled you accept that and end the call.",
            actions,
            ["processed"],
        )

    def cancel_and_move(self) -> dict[str, Any] | None:
        """Two changes in one call: cancel one pending order and re-address another of the same customer."""
        users = [
            u
            for u in self.db["users"].values()
            if sum(self.db["orders"][o]["status"] == "pending" and o not in self.used_orders for o in u["orders"]) >= 2
        ]
        if not users:
            return None
        user = self.rng.choice(users)
        first, second = [o for o in user["orders"] if self.db["orders"][o]["status"] == "pending" and o not in self.used_orders][:2]
        self.used_orders.update({first, second})
        reason = self.rng.choice(["no longer needed", "ordered by mistake"])
        address = random_address(self.rng)
        actions = [
            self.action("get_order_details", order_id=first),
            self.action("cancel_pending_order", order_id=first, reason=reason),
            self.action("get_order_details", order_id=second),
            self.action("modify_pending_order_address", order_id=second, **address),
        ]
        return self.task(
            "cancel one order and re-address another",
            user,
            f"You want to cancel order {first} ({reason}) and have order {second} shipped to "
            f"{address['address1']}, {address['city']}, {address['state']} {address['zip']}, {address['country']}"
            f"{' (' + address['address2'] + ')' if address['address2'] else ''}.",
            actions,
        )


PLAN = [
    ("cancel", 13),
    ("modify_items", 14),
    ("modify_order_address", 10),
    ("modify_payment", 10),
    ("modify_user_address", 8),
    ("return_items", 13),
    ("exchange_items", 14),
    ("status_question", 5),
    ("balance_question", 4),
    ("price_question", 4),
    ("cancel_refused", 4),
    ("cancel_and_move", 5),
]


def build_tasks(rng: random.Random, db: dict[str, Any]) -> list[dict[str, Any]]:
    """Tasks in plan order, numbered, each kept only if it replays cleanly and doing nothing fails it."""
    maker = TaskMaker(rng, db)
    data = suite_data(db, [])
    tasks: list[dict[str, Any]] = []
    for kind, count in PLAN:
        made = 0
        for _ in range(count * 4):
            if made == count:
                break
            raw = getattr(maker, kind)()
            if raw is None:
                continue
            number(raw, len(tasks))
            if accepted(data, raw):
                tasks.append(raw)
                made += 1
    return tasks


def number(raw: dict[str, Any], index: int) -> None:
    """Give a task its id and its actions their ids."""
    raw["id"] = str(index)
    for position, action in enumerate(raw["evaluation_criteria"]["actions"]):
        action["action_id"] = f"{index}_{position}"


def accepted(data: DomainData, raw: dict[str, Any]) -> bool:
    """Gold actions all succeed and an agent that does nothing fails."""
    task = converter.structure(raw, Task)
    gold = replay_gold(data, task)
    if gold.action_errors:
        return False
    untouched = build_environment(data, task)
    return asyncio.run(evaluate(task, [], TerminationReason.USER_STOP, untouched, gold)).reward != 1.0


def suite_data(db: dict[str, Any], tasks: list[Task]) -> DomainData:
    """An in-memory DomainData over a generated database (for checking tasks while generating)."""
    state = State({name: Table(base) for name, base in base_tables(db).items()})
    return DomainData(
        name=DOMAIN, tasks=tasks, policy="", agent_toolkit=RetailTools, agent_state=state, sync_gold_actions=False, reference_hash=reference_hash
    )


def split(rng: random.Random, tasks: list[dict[str, Any]]) -> dict[str, list[str]]:
    """base = every task; a reproducible two-thirds train, one-third test."""
    ids = [t["id"] for t in tasks]
    test = set(rng.sample(ids, len(ids) // 3))
    return {"base": ids, "train": [i for i in ids if i not in test], "test": [i for i in ids if i in test]}


def generate(seed: int) -> dict[str, Any]:
    """The suite for a seed: {'db', 'tasks', 'splits', 'policy'}."""
    rng = random.Random(seed)
    db = build_db(rng)
    tasks = build_tasks(rng, db)
    policy = files(__package__).joinpath("templates/policy.md").read_text(encoding="utf-8")
    return {"db": db, "tasks": tasks, "splits": split(rng, tasks), "policy": policy}


def write_suite(seed: int, out_dir: Path) -> dict[str, Any]:
    """Generate and write db.json, tasks.json, split_tasks.json and policy.md into out_dir."""
    suite = generate(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, value in (("db.json", suite["db"]), ("tasks.json", suite["tasks"]), ("split_tasks.json", suite["splits"])):
        (out_dir / name).write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")
    (out_dir / "policy.md").write_text(suite["policy"], encoding="utf-8")
    return suite


def main(argv: list[str] | None = None) -> None:
    """Command-line entry: python -m bench_retail.generate --seed N --out DIR."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    suite = write_suite(args.seed, args.out)
    print(f"wrote {len(suite['tasks'])} tasks to {args.out}")


if __name__ == "__main__":
    main()
