"""Hand-written files in the upstream REALM-Bench shapes (written here, copied from nowhere)."""

from __future__ import annotations

import json
from pathlib import Path

PLACES = ["depot", "old-town", "museum", "harbor"]


def _distances() -> dict[str, int]:
    minutes = {
        ("depot", "old-town"): 12,
        ("depot", "museum"): 20,
        ("depot", "harbor"): 30,
        ("old-town", "museum"): 7,
        ("old-town", "harbor"): 15,
        ("museum", "harbor"): 9,
    }
    out = {}
    for (a, b), m in minutes.items():
        out[f"{a}-{b}"] = m
        if (a, b) != ("museum", "harbor"):  # one direction left out on purpose
            out[f"{b}-{a}"] = m
    return out


def p3_mapping() -> dict:
    return {
        "instance_id": "hand_p3",
        "city_map": {"locations": list(PLACES), "distances": _distances()},
        "ride_requests": [
            # a normal window: 9:15 .. 9:45, deadline 30 -> latest dropoff 10:15
            {"passenger_id": "ann", "pickup": "old-town", "dropoff": "harbor", "time_window": [9.25, 9.75], "deadline": 30},
            # inverted upstream window: 9:45 + 40 min was written as 9.0 + 25/60 -> [9.75, 9.4166..]
            {"passenger_id": "bob", "pickup": "museum", "dropoff": "depot", "time_window": [9.75, 9.0 + 25 / 60], "deadline": 45},
            {"passenger_id": "cy", "pickup": "harbor", "dropoff": "old-town", "time_window": [10.5, 11.0], "deadline": 40},
        ],
        "vehicles": [
            {"vehicle_id": "v001", "location": "depot", "capacity": 2, "fuel": 80},
            {"vehicle_id": "v002", "location": "harbor", "capacity": 3, "fuel": 65},
        ],
        "description": "hand-written test file",
    }


def p4_mapping() -> dict:
    data = p3_mapping()
    data["instance_id"] = "hand_p4"
    data["disruptions"] = [
        {"type": "traffic_delay", "route": "old-town-harbor", "delay": 20, "start_time": 9, "duration": 90,
         "impact": "increased_travel_time"},
        {"type": "accident", "location": "museum", "start_time": 10, "duration": 45, "impact": "local_traffic_congestion"},
        {"type": "road_closure", "route": "depot-old-town", "start_time": 11, "duration": 60, "impact": "route_unavailable"},
        {"type": "construction", "route": "museum-harbor", "start_time": 8, "duration": 240, "impact": "reduced_capacity"},
    ]
    return data


def p1_mapping() -> dict:
    locs = ["entrance", "library", "gym"]
    dist = {}
    for a in locs:
        for b in locs:
            if a != b:
                dist[f"{a}-{b}"] = 5 + len(a) % 3 + len(b) % 4
    return {
        "instance_id": "hand_p1",
        "locations": locs,
        "start_location": "entrance",
        "end_location": "entrance",
        "distances": dist,
        "time_windows": {"entrance": [8, 18], "library": [9, 17], "gym": [10, 16]},
        "max_duration": 180,
        "description": "hand-written P1",
    }


def p2_mapping() -> dict:
    return {
        "visitor_groups": [
            {"group_id": "g1", "size": 10, "preferred_time": 10, "arrival_time": 9.5},
            {"group_id": "g2", "size": 8, "preferred_time": 11, "arrival_time": 10.5},
        ],
        "tour_guides": [{"guide_id": "guide1", "availability": [9, 17], "max_group_size": 12}],
        "tour_duration": 60,
        "max_group_size": 15,
    }


def write(tmp: Path, name: str, data: dict) -> Path:
    path = tmp / name
    path.write_text(json.dumps(data, indent=2))
    return path
