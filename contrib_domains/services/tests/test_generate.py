"""The generator: the graph, the walks, ATOD's complexity classes, dependencies, determinism and the shipped suite."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from random import Random

from bench_atod import Goal, goal_problems
from bench_services.generate import (
    DEFAULT_SEED,
    co_occurrence_graph,
    generate_suite,
    meets_class,
    random_walk,
    verify_suite,
    walk_domains,
    write_suite,
)
from bench_services.world import DOMAINS, INTENTS
from click.testing import CliRunner

from bench_kernel import converter
from bench_kernel.testing import bench_cli


def shipped(name: str) -> object:
    return json.loads(files("bench_services").joinpath(f"data/{name}").read_text(encoding="utf-8"))


def test_the_world_has_a_dozen_domains_and_thirty_intents() -> None:
    assert len(DOMAINS) >= 12 and len(INTENTS) >= 30
    assert {i.kind for i in INTENTS.values()} == {"search", "book", "pay", "read", "write"}


def test_the_graph_is_symmetric_counts_co_occurrences_and_leaves_payments_out() -> None:
    graph = co_occurrence_graph([["FindRestaurants", "ReserveRestaurant", "GetWeather"], ["FindRestaurants", "GetWeather"]])
    assert graph["FindRestaurants"] == {"ReserveRestaurant": 1, "GetWeather": 2}
    assert graph["GetWeather"]["FindRestaurants"] == 2 and graph["CheckBalance"] == {}
    assert "MakePayment" not in graph


def test_a_walk_visits_distinct_intents_and_jumps_when_stuck() -> None:
    graph = co_occurrence_graph([["FindRestaurants", "ReserveRestaurant"]])
    walk = random_walk(Random(1), graph, "FindRestaurants", 4)
    assert walk[:2] == ["FindRestaurants", "ReserveRestaurant"] and len(set(walk)) == 4
    assert walk == random_walk(Random(1), graph, "FindRestaurants", 4)
    assert len(walk_domains(co_occurrence_graph())) == len(DOMAINS)  # every domain starts walks (Payment by RequestPayment)


def test_atods_complexity_criteria() -> None:
    assert meets_class("medium", 2, 0) and meets_class("medium", 8, 2)
    assert not meets_class("medium", 1, 0) and not meets_class("medium", 9, 0) and not meets_class("medium", 4, 3)
    assert meets_class("complex", 7, 2) and not meets_class("complex", 6, 5) and not meets_class("complex", 9, 1)


def test_the_shipped_suite_regenerates_identically_from_its_seed(tmp_path: Path) -> None:
    result = CliRunner().invoke(bench_cli(["services"]), ["services", "generate", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "tasks.json").read_text()) == shipped("tasks.json")
    assert json.loads((tmp_path / "db.json").read_text()) == shipped("db.json")


def test_another_seed_gives_another_suite_and_the_same_seed_the_same(tmp_path: Path) -> None:
    counts = {"medium": 3, "complex": 2}
    one, two = generate_suite(DEFAULT_SEED + 1, counts), generate_suite(DEFAULT_SEED + 1, counts)
    assert one == two and one[1] != generate_suite(DEFAULT_SEED, counts)[1]
    assert len(write_suite(tmp_path, DEFAULT_SEED + 1, counts)) == 5
    assert (tmp_path / "policy.md").read_text(encoding="utf-8") == files("bench_services").joinpath("data/policy.md").read_text(encoding="utf-8")


def test_every_shipped_task_meets_its_class_and_carries_the_contract() -> None:
    tasks = shipped("tasks.json")
    assert isinstance(tasks, list)
    classes = {t["attributes"]["complexity"] for t in tasks}
    assert classes == {"medium", "complex"} and 20 <= len(tasks) <= 40
    for task in tasks:
        goals = converter.structure(task["goals"], list[Goal])
        attributes = task["attributes"]
        dependencies = sum(len(g.dependencies) for g in goals)
        assert meets_class(attributes["complexity"], len(goals), dependencies), task["id"]
        assert attributes["num_goals"] == str(len(goals)) and attributes["dependencies"] == str(dependencies)
        assert attributes["proactivity"] == str(attributes["complexity"] == "complex").lower()
        assert attributes["async"] == "true" and attributes["interleaving"] == "true"
        assert not goal_problems(goals), task["id"]
        assert all(g.content and g.core_content and g.slots == sorted(g.slot_values) for g in goals)
        for g in goals:  # dependencies point at earlier goals of the right kind
            for d in g.dependencies:
                needed = next(x for x in goals if x.id == d)
                assert int(needed.id.split("_")[1]) < int(g.id.split("_")[1])
                assert INTENTS[g.intent].kind in ("book", "pay", "write") and INTENTS[needed.intent].kind in ("search", "book", "read")
        moves = [m["goal"] for m in task["plan"]["moves"]]
        assert sorted(set(moves)) == sorted(g.id for g in goals), task["id"]  # every goal is raised by the plan


def test_payments_follow_their_booking_and_the_plan_orders_gold_actions_by_move() -> None:
    for task in shipped("tasks.json"):  # type: ignore[union-attr]
        moves = task["plan"]["moves"]
        order = [int(a["action_id"].split(".")[0][1:]) for a in task["evaluation_criteria"]["actions"]]
        assert order == sorted(order) and max(order) < len(moves)
        names = [a["name"] for a in task["evaluation_criteria"]["actions"]]
        for n, name in enumerate(names):
            if name == "pay_booking":
                booking = task["evaluation_criteria"]["actions"][n]["arguments"]["booking_id"]
                checks = [
                    a
                    for a in task["evaluation_criteria"]["actions"][:n]
                    if a["name"] == "get_booking_status" and a["arguments"]["booking_id"] == booking
                ]
                assert checks, f"{task['id']}: paid {booking} before checking it"


def test_verification_accepts_a_generated_suite_and_names_unsound_tasks() -> None:
    db, tasks = generate_suite(DEFAULT_SEED + 2, {"medium": 2, "complex": 2})
    assert verify_suite(db, tasks) == []
    broken = json.loads(json.dumps(tasks[0]))
    pays = [a for a in broken["evaluation_criteria"]["actions"] if a["name"] == "book"]
    pays[0]["arguments"]["item_id"] = "NOPE"
    only_reads = json.loads(json.dumps(tasks[1]))
    only_reads["evaluation_criteria"]["actions"] = [a for a in only_reads["evaluation_criteria"]["actions"] if a["name"] == "search"]
    problems = verify_suite(db, [broken, only_reads])
    assert any(p.startswith(f"{broken['id']}: gold replay fails") and "NOPE" in p for p in problems)
    assert f"{only_reads['id']}: the do-nothing agent would pass (the gold changes nothing)" in problems
