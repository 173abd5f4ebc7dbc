"""Hand-written mappings in the shape of upstream REALM-Bench P5/P8 files (not copies: our
own names and numbers), for the reader's tests."""

from __future__ import annotations

import copy
from typing import Any


def p5_mapping() -> dict[str, Any]:
    return {
        "instance_id": "hand_p5",
        "locations": {"A": "Riverside Airport", "S": "Gift shop", "K": "Tailor shop", "V": "Wedding venue"},
        "travel_times": {"A-S": 35, "A-K": 28, "A-V": 33, "S-K": 12, "S-V": 20, "K-V": 18},
        "guests": [
            {"name": "Mira", "location": "A", "arrival_time": "10:40", "origin": "Oslo", "needs_ride": True},
            {"name": "Teo", "location": "A", "arrival_time": "12:05", "origin": "Lima", "needs_ride": True},
            {"name": "Uma", "location": "V", "arrival_time": "11:30", "origin": "Rome", "has_car": True,
             "car_capacity": 4},
        ],
        "vehicles": [{"id": "bus", "capacity": 6, "location": "hotel"},
                     {"id": "sedan", "capacity": 3, "location": "church"}],
        "errands": ["flowers", "cake"],
        "constraints": {"wedding_deadline": "17:30", "gift_store_opens": "11:00", "tailor_closes": "13:30",
                        "photo_time": "14:45"},
        "description": "hand-written wedding logistics",
    }


def p8_mapping() -> dict[str, Any]:
    data = copy.deepcopy(p5_mapping())
    data["instance_id"] = "hand_p8"
    data["disruptions"] = [
        {"type": "road_closure", "route": "hotel-church", "duration": 50, "start_time": "12:30"},
        {"type": "traffic_delay", "route": "airport-hotel", "delay": 25, "start_time": "13:15"},
    ]
    return data
