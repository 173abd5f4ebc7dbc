"""The kitchen in event time: car trips, joins, seats, cooking rules, delays and their
announcement, whole plans that pause, and agreement with the independent checker."""

from __future__ import annotations

import numpy as np

from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.generator import generate_p9
from crab_gym.envs.realm.thanksgiving.sim import Kitchen, plan_entries


def test_trip_times_from_home_and_from_the_airport(tiny):
    k = Kitchen.start_of(tiny)
    a = k.send("car1", "dad")  # leaves home 10:00, airport 10:30, dad lands 11:00, home 11:30
    b = k.send("car2", "kid")  # already at the airport: waits for 11:30, home 12:00
    assert (a.depart, a.airport, a.leave, a.home, a.driving) == (600, 630, 660, 690, 60)
    assert (b.depart, b.airport, b.leave, b.home, b.driving) == (600, 600, 690, 720, 30)
    assert k.why_not_send("car1", "kid") == "kid is already fetched by car2"
    assert k.why_not_start("gravy", "dad").startswith("dad is not home yet (home at 11:30)")


def test_a_car_at_the_airport_takes_another_passenger_until_it_leaves(tiny):
    k = Kitchen.start_of(tiny)
    k.send("car1", "dad")
    assert k.why_not_send("car1", "kid") is None  # joins: one trip, leaves when kid lands
    trip = k.send("car1", "kid")
    assert len(k.trips) == 1 and trip.members == ["dad", "kid"] and (trip.leave, trip.home) == (690, 720)
    assert k.wait() == ["12:00 car1 home with dad, kid"]  # the stale 11:30 event is skipped
    assert k.is_home("dad") and k.is_home("kid") and k.driving == 60


def test_seats_and_busy_cars_are_refused(tiny):
    k = Kitchen.start_of(tiny)
    k.send("car2", "dad")
    assert k.why_not_send("car2", "kid") == "car2 is full (1 seats)"
    k.wait()  # 11:30: car2 home with dad
    assert k.now == 690 and k.why_not_send("car2", "kid") is None and k.car_place("car2") == "home"


def test_cooking_rules(tiny):
    k = Kitchen.start_of(tiny)
    assert k.why_not_start("gravy", "mom") == "mom cannot cook gravy"
    assert k.why_not_start("gravy", "dad").startswith("dad is not home yet")
    k.start("turkey", "mom")
    assert k.why_not_start("pie", "mom") == "mom is busy until 11:30"
    k.send("car2", "kid")
    while not k.is_home("kid"):
        k.wait()
    assert k.now == 720 and k.task_done("turkey")
    k.send("car1", "dad")
    k.start("pie", "kid")
    assert k.why_not_start("gravy", "dad").startswith("dad is not home yet")
    assert not k.complete


def _variant(tiny, **tasks_update):
    data = tiny.model_dump()
    data.update(tasks_update)
    return type(tiny).model_validate(data)


def test_oven_and_kitchen_capacity(tiny):
    long_turkey = [{**t, "duration": 200} if t["task_id"] == "turkey" else t for t in tiny.model_dump()["tasks"]]
    k = Kitchen.start_of(_variant(tiny, tasks=long_turkey))
    k.start("turkey", "mom")  # 10:00-13:20 in the oven
    k.send("car2", "kid")
    k.wait()
    assert k.now == 720 and k.why_not_start("pie", "kid") == "the oven is in use"
    no_oven = [{**t, "oven": False, "duration": 200} if t["task_id"] != "gravy" else t for t in tiny.model_dump()["tasks"]]
    k = Kitchen.start_of(_variant(tiny, tasks=no_oven, kitchen_capacity=1))
    k.start("turkey", "mom")
    k.send("car2", "kid")
    k.wait()
    assert k.why_not_start("pie", "kid") == "the kitchen is full (1 tasks at once)"


def test_delays_are_real_at_once_and_known_when_announced(tiny_delayed):
    k = Kitchen.start_of(tiny_delayed, tiny_delayed.delays)
    trip = k.send("car1", "dad")
    assert k.known_landing("dad") == 660 and k.landing("dad") == 690
    assert k.expected_home("dad") == 690 and trip.home == 720  # the family does not know yet
    assert k.wait() == ["10:30 f1 delayed by 30 min"]
    assert k.known_landing("dad") == 690 and k.expected_home("dad") == 720
    assert k.first_announcement is not None and k.first_announcement.now == 630


def test_a_plan_pauses_at_an_announcement_and_resumes(tiny_delayed):
    k = Kitchen.start_of(tiny_delayed, tiny_delayed.delays)
    plan = {
        "pickups": [{"car": "car1", "member": "dad", "depart": 600}, {"car": "car1", "member": "kid", "depart": 600}],
        "cooking_schedule": [{"task": "turkey", "cook": "mom", "start": 600}, {"task": "gravy", "cook": "dad", "start": 720},
                             {"task": "pie", "cook": "kid", "start": 720}],
    }
    reason, entries = plan_entries(k, plan)
    assert reason is None and len(entries) == 4  # one shared trip, three starts
    remaining, log = k.run_plan(entries)
    assert k.now == 630 and len(remaining) == 2 and "f1 delayed by 30 min" in log[-1]
    assert plan_entries(k, {**plan, "cooking_schedule": [{"task": "turkey", "cook": "dad", "start": 600}]})[0] == (
        "turkey is already cooked by mom from 10:00; the plan must keep it"
    )
    reason, entries = plan_entries(k, plan)  # the same plan again: what is under way is kept
    assert reason is None and [e.what for e in entries] == [("gravy",), ("pie",)]
    remaining, _ = k.run_plan(entries)
    assert not remaining and k.complete
    verdict = check_plan(k.inst, k.plan(), landings_of(k.inst, k.true_delays))
    assert verdict.feasible and verdict.ready == 760 and verdict.driving == 60
    assert verdict.cost == (760 - 600) + 0.01 * 60


def test_plans_that_start_in_the_past_are_refused(tiny):
    k = Kitchen.start_of(tiny)
    k.start("turkey", "mom")
    k.wait()
    bad = {"pickups": [{"car": "car1", "member": "dad", "depart": 600}], "cooking_schedule": []}
    assert plan_entries(k, bad)[0] == "the pickup of dad leaves at 10:00, before now (11:30)"
    assert plan_entries(k, {"pickups": [{"car": "car1", "member": "mom", "depart": 700}]})[0].startswith("mom is not a")


def test_random_play_agrees_with_the_checker():
    """Whatever legal moves are played, the sim's times are the checker's."""
    rng = np.random.default_rng(0)
    for seed in range(6):
        inst = generate_p9("medium", seed)
        k = Kitchen.start_of(inst, inst.delays)
        while not k.complete:
            moves = [("send", c, m) for c in inst.car_ids for m in inst.travellers if k.why_not_send(c, m) is None]
            moves += [("start", t, c) for t in inst.task_ids for c in inst.skilled(t) if k.why_not_start(t, c) is None]
            if k.can_wait():
                moves.append(("wait",))
            move = moves[int(rng.integers(len(moves)))]
            if move[0] == "send":
                k.send(move[1], move[2])
            elif move[0] == "start":
                k.start(move[1], move[2])
            else:
                k.wait()
        verdict = check_plan(inst, k.plan(), landings_of(inst, inst.delays))
        assert verdict.ready == k.ready and verdict.driving == k.driving
        assert verdict.home == {m: k.home_at(m) for m in inst.member_ids}
        assert all(ok for name, ok in verdict.constraints.items() if not name.startswith(("task:", "fetched:")))
