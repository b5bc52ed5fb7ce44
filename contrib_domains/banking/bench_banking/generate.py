"""Our own banking suite, generated from a seed: customers with accounts, cards, statements, transactions and payees, and tasks.

Every task is composed from the database (a scenario in our words, gold actions, facts to
communicate) and kept only if its gold actions replay without an error and the do-nothing agent
fails it. `bench banking generate --out DIR` (or `python -m bench_banking.generate`) writes it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from random import Random
from typing import Any

from bench_kernel import DomainData, Task, TerminationReason, build_environment, converter, evaluate, replay_gold

from .records import state_from
from .tools import BankingTools

DEFAULT_SEED = 11
FIRST = ["Amelia", "Bashir", "Chloe", "Dmitri", "Esther", "Farid", "Gwen", "Hiro", "Ingrid", "Jalen", "Kavya", "Lucas"]
LAST = ["Abbott", "Baptiste", "Chen", "Dubois", "Eze", "Fontaine", "Gallo", "Hale", "Iqbal", "Jansen", "Kowalski", "Lund"]
CITIES = [("Rivertown", "OH", "43001"), ("Lakeside", "MI", "49001"), ("Hillcrest", "PA", "15001"), ("Bayview", "NC", "27001")]
MERCHANTS = ["Corner Grocer", "Metro Transit", "Bookhouse", "Cafe Lumen", "PetPals", "Streamly", "FuelStop", "Hardware Hub"]
PAYEES = ["City Water", "Northgrid Power", "Fiberline Internet", "Greenleaf Rent"]
TASK_KINDS = ("balance", "statement", "lock_card", "unlock_card", "dispute", "pay_bill", "new_payee_payment")


def build_db(rng: Random, customers: int = 10) -> dict[str, list[dict[str, Any]]]:
    """Customers with a checking account (some a savings account too), a debit card, statements, transactions and payees."""
    db: dict[str, list[dict[str, Any]]] = {
        k: [] for k in ("customers", "accounts", "cards", "statements", "transactions", "payees", "payment_requests", "disputes")
    }
    for i in range(customers):
        _customer(db, rng, i)
    return db


def _customer(db: dict[str, list[dict[str, Any]]], rng: Random, i: int) -> None:
    cid, city = f"cust_{500 + i}", rng.choice(CITIES)
    accounts = [f"acc_{500 + i}"] + ([f"acc_sav_{500 + i}"] if i % 3 == 0 else [])
    for n, aid in enumerate(accounts):
        balance = round(rng.uniform(300, 9000), 2)
        held = round(rng.choice([0, 0, rng.uniform(5, 120)]), 2)
        db["accounts"].append(
            {
                "account_id": aid,
                "customer_id": cid,
                "type": "checking" if n == 0 else "savings",
                "masked_number": f"••••{rng.randrange(1000, 9999)}",
                "status": "Active",
                "current_balance": balance,
                "available_balance": round(balance - held, 2),
            }
        )
    card = f"card_{500 + i}"
    db["cards"].append(
        {
            "card_id": card,
            "account_id": accounts[0],
            "type": "debit",
            "last4": f"{rng.randrange(1000, 9999)}",
            "status": "Locked" if i % 4 == 3 else "Active",
        }
    )
    statement = f"stmt_{500 + i}"
    total = round(rng.uniform(80, 900), 2)
    db["statements"].append(
        {
            "statement_id": statement,
            "account_id": accounts[0],
            "period_start": "2025-07-01",
            "period_end": "2025-07-31",
            "issue_date": "2025-08-01",
            "total_due": total,
            "minimum_due": round(total * 0.1, 2),
            "due_date": "2025-08-25",
            "status": "Issued",
        }
    )
    txs = []
    for n in range(3):
        tx = f"tx_{500 + i}_{n + 1}"
        txs.append(tx)
        db["transactions"].append(
            {
                "tx_id": tx,
                "account_id": accounts[0],
                "timestamp": f"2025-08-{10 + 3 * n:02d}T1{n}:15:00",
                "type": "card_purchase",
                "amount": -round(rng.uniform(4, 180), 2),
                "merchant_or_payee": rng.choice(MERCHANTS),
                "status": "Posted",
                "reference": None,
            }
        )
    payee = f"payee_{500 + i}"
    db["payees"].append({"payee_id": payee, "customer_id": cid, "name": rng.choice(PAYEES), "deliver_type": "electronic", "verified": True})
    first, last = FIRST[i % len(FIRST)], LAST[(i * 5) % len(LAST)]
    dob = f"19{rng.randrange(55, 99)}-0{rng.randrange(1, 9)}-1{rng.randrange(0, 9)}"
    db["customers"].append(
        {
            "customer_id": cid,
            "full_name": f"{first} {last}",
            "date_of_birth": dob,
            "email": f"{first.lower()}.{last.lower()}@example.org",
            "phone_number": f"+1555{rng.randrange(1000000, 9999999)}",
            "address": {
                "street": f"{rng.randrange(10, 990)} {rng.choice(['Oak', 'Birch', 'Mill', 'River'])} Street",
                "city": city[0],
                "state": city[1],
                "postal_code": city[2],
            },
            "created_at": f"2024-0{rng.randrange(1, 9)}-0{rng.randrange(1, 9)}T09:30:00",
            "account_ids": accounts,
            "card_ids": [card],
            "statement_ids": [statement],
            "payment_request_ids": [],
            "dispute_ids": [],
            "payee_ids": [payee],
        }
    )


# --------------------------------------------------------------------------- tasks


def _money(x: float) -> str:
    return f"${x:,.2f}"


class Composer:
    """Builds one task of a kind for a customer, from the database."""

    def __init__(self, db: dict[str, list[dict[str, Any]]]) -> None:
        self.db = db

    def _of(self, table: str, key: str, value: str) -> list[dict[str, Any]]:
        return [r for r in self.db[table] if r[key] == value]

    def build(self, kind: str, c: dict[str, Any]) -> dict[str, Any] | None:
        """A task dict, or None when this customer cannot have this kind of task."""
        account = self._of("accounts", "account_id", c["account_ids"][0])[0]
        card = self._of("cards", "card_id", c["card_ids"][0])[0]
        lookup = {"name": "get_customer_by_phone", "arguments": {"phone_number": c["phone_number"]}}
        builders: dict[str, Callable[[], dict[str, Any] | None]] = {
            "balance": lambda: self._task(
                c,
                kind,
                "You want to know how much money you can spend from your checking account right now.",
                [lookup, {"name": "get_account", "arguments": {"account_id": account["account_id"]}}],
                communicate=[f"{account['available_balance']:.2f}"],
            ),
            "statement": lambda: self._statement(c, kind, lookup, account),
            "lock_card": lambda: (
                None
                if card["status"] != "Active"
                else self._task(
                    c,
                    kind,
                    f"You lost your debit card ending in {card['last4']} and want it locked right away.",
                    [lookup, {"name": "lock_card", "arguments": {"card_id": card["card_id"], "reason": "lost"}}],
                )
            ),
            "unlock_card": lambda: (
                None
                if card["status"] != "Locked"
                else self._task(
                    c,
                    kind,
                    f"You found your debit card ending in {card['last4']} and want to use it again.",
                    [lookup, {"name": "unlock_card", "arguments": {"card_id": card["card_id"]}}],
                )
            ),
            "dispute": lambda: self._dispute(c, kind, lookup, account),
            "pay_bill": lambda: self._pay(c, kind, lookup, account, new_payee=False),
            "new_payee_payment": lambda: self._pay(c, kind, lookup, account, new_payee=True),
        }
        return builders[kind]()

    def _statement(self, c: dict[str, Any], kind: str, lookup: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
        stmt = self._of("statements", "account_id", account["account_id"])[0]
        return self._task(
            c,
            kind,
            "You want to know the total due on your latest checking statement and when it is due.",
            [lookup, {"name": "get_statements", "arguments": {"account_id": account["account_id"]}}],
            communicate=[f"{stmt['total_due']:.2f}", stmt["due_date"]],
        )

    def _dispute(self, c: dict[str, Any], kind: str, lookup: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
        tx = max(self._of("transactions", "account_id", account["account_id"]), key=lambda t: t["timestamp"])
        reason = (
            f"You do not recognise the latest card purchase on your checking account ({_money(-tx['amount'])} at "
            f"{tx['merchant_or_payee']}) and want to dispute it as unauthorized."
        )
        return self._task(
            c,
            kind,
            reason,
            [
                lookup,
                {"name": "get_transactions", "arguments": {"account_id": account["account_id"]}},
                {"name": "file_dispute", "arguments": {"account_id": account["account_id"], "tx_id": tx["tx_id"], "reason_code": "unauthorized"}},
            ],
        )

    def _pay(self, c: dict[str, Any], kind: str, lookup: dict[str, Any], account: dict[str, Any], *, new_payee: bool) -> dict[str, Any] | None:
        amount = float(round(min(account["available_balance"] * 0.3, 240) // 5 * 5, 2)) or 25.0
        actions: list[dict[str, Any]] = [lookup]
        if new_payee:
            payee_id, name = "PY_00000001", "Harbor Dental"
            actions.append({"name": "add_payee", "arguments": {"customer_id": c["customer_id"], "name": name, "deliver_type": "electronic"}})
            reason = f"You want to add {name} as a new payee and pay them {_money(amount)} from your checking account."
        else:
            payee = self._of("payees", "customer_id", c["customer_id"])[0]
            payee_id, name = payee["payee_id"], payee["name"]
            reason = f"You want to pay your {name} bill of {_money(amount)} from your checking account."
        actions += [
            {
                "name": "create_payment_request",
                "arguments": {"customer_id": c["customer_id"], "from_account_id": account["account_id"], "to_payee_id": payee_id, "amount": amount},
            },
            {"name": "authorize_payment_request", "arguments": {"request_id": "PR_00000001"}},
            {"name": "make_payment", "arguments": {"request_id": "PR_00000001"}},
        ]
        return self._task(c, kind, reason, actions)

    def _task(self, c: dict[str, Any], kind: str, reason: str, actions: list[dict[str, Any]], communicate: list[str] | None = None) -> dict[str, Any]:
        known = (
            f"You are {c['full_name']}, born {c['date_of_birth']}, and your phone number is {c['phone_number']}. "
            "Give these when the agent asks who you are."
        )
        return {
            "id": f"{kind}_{c['customer_id']}",
            "description": {"purpose": f"Our banking suite: {kind.replace('_', ' ')}."},
            "user_scenario": {
                "instructions": {
                    "domain": "banking",
                    "reason_for_call": reason,
                    "known_info": known,
                    "task_instructions": (
                        "Answer the agent's questions truthfully and confirm with a clear yes when it asks before "
                        "acting. You have only this request; say goodbye once it is handled."
                    ),
                }
            },
            "ticket": f"{c['full_name']} (phone {c['phone_number']}): {reason.replace('You want', 'wants').replace('your', 'their')}",
            "evaluation_criteria": {
                "actions": [{"action_id": f"{i}", **a} for i, a in enumerate(actions)],
                "communicate_info": communicate or None,
                "reward_basis": ["DB", "COMMUNICATE"] if communicate else ["DB"],
            },
            "attributes": {"kind": kind},
        }


def _acceptable(raw: dict[str, Any], data: DomainData) -> bool:
    task = converter.structure(raw, Task)
    gold = replay_gold(data, task)
    if not gold.ok:
        return False
    untouched = build_environment(data, task)
    return asyncio.run(evaluate(task, [], TerminationReason.USER_STOP, untouched, gold)).reward != 1.0


def build_suite(seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The database and tasks for a seed (every task verified), as JSON-ready objects."""
    rng = Random(seed)
    db = build_db(rng)
    data = DomainData(name="banking", tasks=[], policy="", agent_toolkit=BankingTools, agent_state=state_from(db, "generated"))
    composer = Composer(db)
    tasks: list[dict[str, Any]] = []
    for kind in TASK_KINDS:
        for customer in db["customers"]:
            raw = composer.build(kind, customer)
            if raw is not None and _acceptable(raw, data) and sum(t["attributes"]["kind"] == kind for t in tasks) < 4:
                tasks.append(raw)
    return {"db": db, "tasks": tasks}


def write_suite(out_dir: Path, seed: int = DEFAULT_SEED) -> list[str]:
    """Write db.json and tasks.json; returns the task ids."""
    suite = build_suite(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in ("db", "tasks"):
        (out_dir / f"{name}.json").write_text(json.dumps(suite[name], indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return [t["id"] for t in suite["tasks"]]


def main(argv: list[str] | None = None) -> None:
    """Command-line entry: python -m bench_banking.generate --seed N --out DIR."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    print(f"wrote {len(write_suite(args.out, args.seed))} tasks to {args.out}")


if __name__ == "__main__":
    main()
