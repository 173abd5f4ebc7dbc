"""Small hand-written P6/P9 instances and upstream-shaped mappings for the tests (none copied
from upstream REALM-Bench)."""

from __future__ import annotations

import copy

import pytest

from crab_gym.envs.realm.thanksgiving.model import ThanksgivingInstance

#: 10:00 start, 15:00 deadline, 30 minutes to the airport. car1 waits at home (2 seats),
#: car2 at the airport (1 seat). dad lands 11:00, kid 11:30.
TINY = {
    "name": "tiny",
    "start_time": 600,
    "deadline": 900,
    "travel_minutes": 30,
    "kitchen_capacity": 2,
    "cars": [{"car_id": "car1", "seats": 2, "start": "home"}, {"car_id": "car2", "seats": 1, "start": "airport"}],
    "members": [
        {"member_id": "mom", "skills": ["turkey", "pie"]},
        {"member_id": "dad", "skills": ["gravy"], "flight": "f1"},
        {"member_id": "kid", "skills": ["pie"], "flight": "f2"},
    ],
    "flights": [{"flight_id": "f1", "arrival": 660}, {"flight_id": "f2", "arrival": 690}],
    "tasks": [
        {"task_id": "turkey", "duration": 90, "oven": True},
        {"task_id": "gravy", "duration": 20},
        {"task_id": "pie", "duration": 40, "oven": True},
    ],
    "dependencies": [["turkey", "gravy"]],
}

#: An upstream-shaped P6 mapping, written for these tests.
UPSTREAM_P6 = {
    "instance_id": "handmade_p6",
    "vehicles": [{"id": "van", "capacity": 3, "location": "home"}, {"id": "cab", "capacity": 2, "location": "airport"}],
    "cooking_tasks": ["turkey", "pie", "gravy", "rolls"],
    "family_members": [
        {"id": "ann", "skills": ["turkey", "gravy"], "arrival": "home", "flight": None},
        {"id": "bob", "skills": ["pie"], "arrival": "airport", "flight": "ua1"},
    ],
    "flights": {"ua1": {"arrival_time": "13:10", "airport": "BOS"}},
    "cooking_dependencies": [["turkey", "gravy"], ["pie", "whipped_cream"]],
    "constraints": {"dinner_deadline": "18:30", "max_cooks": 2, "kitchen_capacity": 3},
    "description": "hand-made",
}


def upstream_p9() -> dict:
    """An upstream-shaped P9 mapping: UPSTREAM_P6 plus a delay whose new arrival is written
    the way upstream's generator writes it (base minutes dropped: 13:10 + 35 as "13:35")."""
    data = copy.deepcopy(UPSTREAM_P6)
    data["instance_id"] = "handmade_p9"
    data["disruptions"] = [{"type": "flight_delay", "flight": "ua1", "delay": 35, "new_arrival_time": "13:35"}]
    return data


@pytest.fixture
def tiny() -> ThanksgivingInstance:
    return ThanksgivingInstance.model_validate(TINY)


@pytest.fixture
def tiny_delayed() -> ThanksgivingInstance:
    """TINY with dad's flight 30 minutes late, announced at 10:30."""
    return ThanksgivingInstance.model_validate(
        {**TINY, "name": "tiny_delayed", "delays": [{"flight": "f1", "delay": 30, "announced": 630}]}
    )
