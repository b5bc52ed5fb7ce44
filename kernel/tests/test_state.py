"""Tests of the copy-on-write state: isolation between forks, mapping behaviour, hashing and patches."""

from __future__ import annotations

import attrs
import pytest

from bench_kernel.tools.state import State, deep_merge


def pristine() -> State:
    return State.from_records(
        {
            "users": {
                "u1": {"name": "Ann", "tags": ["a", "b"], "address": {"city": "Oslo", "zip": "0150"}},
                "u2": {"name": "Bob", "tags": [], "address": {"city": "Rome", "zip": "00100"}},
            },
            "orders": {"o1": {"user": "u1", "total": 10}},
        }
    )


# --------------------------------------------------------------------------- copy-on-write


def test_fork_isolates_writes_in_both_directions() -> None:
    base = pristine()
    left, right = base.fork(), base.fork()
    left.users.edit("u1")["name"] = "Anna"
    right.users["u3"] = {"name": "Cy", "tags": [], "address": {}}
    assert left.users["u1"]["name"] == "Anna"
    assert right.users["u1"]["name"] == "Ann"
    assert base.users["u1"]["name"] == "Ann"
    assert "u3" in right.users and "u3" not in left.users and "u3" not in base.users


def test_keys_values_items_and_len_are_the_visible_records_with_or_without_an_overlay() -> None:
    # An unchanged table is scanned straight from its shared records; a changed one through its overlay.
    state = pristine().fork()
    users = state.users
    assert (list(users), len(users)) == (["u1", "u2"], 2)
    assert list(users.values()) == list(users.base.records.values())
    assert list(users.items()) == list(users.base.records.items())
    users.edit("u1")["name"] = "Anna"
    del users["u2"]
    users["u3"] = {"name": "Cy"}
    assert (list(users), len(users)) == (["u1", "u3"], 2)
    assert [u["name"] for u in users.values()] == ["Anna", "Cy"]
    assert [(k, u["name"]) for k, u in users.items()] == [("u1", "Anna"), ("u3", "Cy")]
    assert {"name": "Cy"} in users.values() and ("u2", users.base.records["u2"]) not in users.items()
    assert dict(users) == {"u1": users["u1"], "u3": {"name": "Cy"}}


def test_fork_of_a_fork_copies_the_overlay() -> None:
    first = pristine().fork()
    first.users.edit("u1")["tags"].append("c")
    second = first.fork()
    second.users.edit("u1")["tags"].append("d")
    assert first.users["u1"]["tags"] == ["a", "b", "c"]
    assert second.users["u1"]["tags"] == ["a", "b", "c", "d"]


def test_edit_returns_a_private_copy_and_keeps_it() -> None:
    state = pristine().fork()
    record = state.users.edit("u1")
    assert record is not state.users.base.records["u1"]
    record["address"]["city"] = "Bergen"
    assert state.users["u1"]["address"]["city"] == "Bergen"
    assert state.users.edit("u1") is record, "a second edit returns the same overlay copy"
    assert state.users.base.records["u1"]["address"]["city"] == "Oslo"


def test_edit_of_a_missing_key_raises_key_error() -> None:
    with pytest.raises(KeyError):
        pristine().fork().users.edit("nobody")


def test_delete_hides_a_base_record_only_in_this_view() -> None:
    base = pristine()
    state = base.fork()
    del state.users["u1"]
    assert "u1" not in state.users
    with pytest.raises(KeyError):
        state.users["u1"]
    assert state.users.get("u1") is None
    assert "u1" in base.users and "u1" in base.fork().users


def test_delete_of_a_missing_key_raises() -> None:
    state = pristine().fork()
    with pytest.raises(KeyError):
        del state.users["nobody"]
    del state.users["u1"]
    with pytest.raises(KeyError):
        del state.users["u1"]


def test_iteration_order_and_len() -> None:
    state = pristine().fork()
    state.users["u3"] = {"name": "Cy"}
    state.users["u0"] = {"name": "Di"}
    del state.users["u1"]
    state.users.edit("u2")["name"] = "Bobby"
    assert list(state.users) == ["u2", "u3", "u0"], "base order first, then new keys in insertion order"
    assert len(state.users) == 3
    assert dict(state.users.items())["u2"]["name"] == "Bobby"
    state.users["u1"] = {"name": "Ann again"}
    assert list(state.users) == ["u1", "u2", "u3", "u0"], "a re-added base key takes its base position"
    del state.users["u3"]
    assert list(state.users) == ["u1", "u2", "u0"] and len(state.users) == 3


def test_state_attribute_and_item_access_reach_tables() -> None:
    state = pristine()
    assert state.users is state["users"]
    with pytest.raises(AttributeError):
        state.nothing  # noqa: B018


def test_to_dict_shows_the_visible_content() -> None:
    state = pristine().fork()
    del state.orders["o1"]
    state.orders["o2"] = {"user": "u2", "total": 5}
    assert state.to_dict()["orders"] == {"o2": {"user": "u2", "total": 5}}


# --------------------------------------------------------------------------- hashing


def test_equal_content_reached_by_different_paths_hashes_equal() -> None:
    base = pristine()
    untouched = base.fork()

    edited_back = base.fork()
    edited_back.users.edit("u1")["name"] = "X"
    edited_back.users.edit("u1")["name"] = "Ann"

    deleted_and_restored = base.fork()
    original = deleted_and_restored.users["u2"]
    del deleted_and_restored.users["u2"]
    deleted_and_restored.users["u2"] = {"address": {"zip": "00100", "city": "Rome"}, "tags": [], "name": "Bob"}
    assert deleted_and_restored.users["u2"] == original

    added_and_removed = base.fork()
    added_and_removed.orders["o9"] = {"user": "u1", "total": 1}
    del added_and_removed.orders["o9"]

    expected = base.content_hash()
    assert untouched.content_hash() == expected
    assert edited_back.content_hash() == expected
    assert deleted_and_restored.content_hash() == expected
    assert added_and_removed.content_hash() == expected


def test_same_changes_in_different_order_hash_equal() -> None:
    base = pristine()
    one, two = base.fork(), base.fork()
    one.orders["o2"] = {"user": "u2", "total": 3}
    one.users.edit("u2")["tags"] = ["vip"]
    two.users.edit("u2")["tags"] = ["vip"]
    two.orders["o2"] = {"user": "u2", "total": 3}
    assert one.content_hash() == two.content_hash() != base.content_hash()


def test_hash_equals_a_freshly_built_state_with_that_content() -> None:
    state = pristine().fork()
    state.users.edit("u1")["name"] = "Anna"
    del state.orders["o1"]
    rebuilt = State.from_records(state.to_dict())
    assert rebuilt.content_hash() == state.content_hash()


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.users.edit("u1").__setitem__("name", "ann"),
        lambda s: s.users.edit("u1")["tags"].reverse(),
        lambda s: s.users.edit("u1")["address"].__setitem__("zip", "0151"),
        lambda s: s.orders.edit("o1").__setitem__("total", 10.0),
        lambda s: s.orders.edit("o1").__setitem__("total", "10"),
        lambda s: s.orders.__delitem__("o1"),
        lambda s: s.orders.__setitem__("o2", {}),
        lambda s: s.users.edit("u2")["address"].__setitem__("extra", None),
    ],
    ids=["case", "list-order", "nested", "int-vs-float", "int-vs-str", "delete", "add-empty", "add-null-key"],
)
def test_any_change_changes_the_hash(change) -> None:
    base = pristine()
    state = base.fork()
    change(state)
    assert state.content_hash() != base.content_hash()


def test_moving_a_record_between_tables_changes_the_hash() -> None:
    base = State.from_records({"a": {"k": {"v": 1}}, "b": {}})
    moved = base.fork()
    moved.b["k"] = moved.a["k"]
    del moved.a["k"]
    assert moved.content_hash() != base.content_hash()


def test_moving_a_record_to_another_key_changes_the_hash() -> None:
    base = State.from_records({"t": {"k1": {"v": 1}, "k2": {"v": 2}}})
    swapped = base.fork()
    swapped.t["k1"], swapped.t["k2"] = {"v": 2}, {"v": 1}
    assert swapped.content_hash() != base.content_hash()


@attrs.define
class Price:
    amount: float
    currency: str


def test_typed_records_normalise_numbers_before_hashing() -> None:
    as_int = State.from_records({"prices": {"p": {"amount": 25, "currency": "EUR"}}}, {"prices": Price})
    as_float = State.from_records({"prices": {"p": {"amount": 25.0, "currency": "EUR"}}}, {"prices": Price})
    assert as_int.prices["p"] == Price(amount=25.0, currency="EUR")
    assert as_int.content_hash() == as_float.content_hash()


# --------------------------------------------------------------------------- base protection


def test_base_is_untouched_after_forks_edit_and_delete() -> None:
    base = pristine()
    for _ in range(3):
        state = base.fork()
        state.users.edit("u1")["tags"].append("x")
        state.users.edit("u2")["address"]["city"] = "Milan"
        del state.orders["o1"]
    assert base.verify_untouched() == []
    assert base.users["u1"]["tags"] == ["a", "b"]


def test_verify_untouched_names_the_table_mutated_in_place() -> None:
    base = pristine()
    base.content_hash()  # digests are cached here, as in a run
    state = base.fork()
    state.users["u1"]["name"] = "mutated without edit()"  # the bug verify_untouched exists to catch
    assert base.verify_untouched() == ["users"]
    assert state.verify_untouched() == ["users"]


# --------------------------------------------------------------------------- patches


def test_deep_merge_merges_dicts_and_replaces_lists_and_scalars() -> None:
    current = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    patch = {"a": {"c": [3], "e": {"f": 1}}, "d": {"now": "a dict"}}
    assert deep_merge(current, patch) == {"a": {"b": 1, "c": [3], "e": {"f": 1}}, "d": {"now": "a dict"}}
    assert current == {"a": {"b": 1, "c": [1, 2]}, "d": "x"}


def test_deep_merge_copies_the_patch() -> None:
    patch = {"a": {"list": [1]}}
    merged = deep_merge({}, patch)
    merged["a"]["list"].append(2)
    assert patch == {"a": {"list": [1]}}


def test_apply_patch_merges_records_without_touching_the_base() -> None:
    base = pristine()
    state = base.fork()
    state.apply_patch(
        {
            "users": {"u1": {"address": {"city": "Bergen"}, "tags": ["z"]}, "u9": {"name": "New"}},
            "orders": {"o1": {"total": 12}},
        }
    )
    assert state.users["u1"] == {"name": "Ann", "tags": ["z"], "address": {"city": "Bergen", "zip": "0150"}}
    assert state.users["u9"] == {"name": "New"}
    assert state.orders["o1"] == {"user": "u1", "total": 12}
    assert base.users["u1"]["address"]["city"] == "Oslo"
    assert base.verify_untouched() == []


def test_apply_patch_restructures_typed_records() -> None:
    state = State.from_records({"prices": {"p": {"amount": 1.5, "currency": "EUR"}}}, {"prices": Price}).fork()
    state.apply_patch({"prices": {"p": {"amount": 3}}})
    assert state.prices["p"] == Price(amount=3.0, currency="EUR")


def test_apply_patch_to_an_unknown_table_raises() -> None:
    with pytest.raises(KeyError, match="unknown table 'nope'"):
        pristine().fork().apply_patch({"nope": {"k": {}}})


def test_apply_patch_with_null_records_is_a_no_op() -> None:
    base = pristine()
    state = base.fork()
    state.apply_patch({"users": None})
    assert state.content_hash() == base.content_hash()


def test_dump_hasher_equals_one_json_dumps_of_the_whole_state() -> None:
    import hashlib
    import json

    from bench_kernel.tools.state import DumpHasher

    base = State.from_records({"b": {"x": {"n": 1, "f": 1.0, "l": [2, 1]}, "y": {"n": 2}}, "a": {"k": {"s": "é"}}})
    hasher = DumpHasher(lambda record: record)
    state = base.fork()
    state.b["z"] = {"n": 3}
    del state.b["y"]
    state.b.edit("x")["l"].append(0)

    def full(s: State) -> str:
        return hashlib.sha256(json.dumps(s.to_dict(), sort_keys=True, default=str).encode()).hexdigest()

    assert hasher(base) == full(base)
    assert hasher(state) == full(state) != hasher(base)
    assert hasher(base) == full(base)  # cached base fragments are not touched by a fork's changes
