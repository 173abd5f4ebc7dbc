"""The seeded P1 generator: feasible campus tours of three size classes.

A hidden tour is planned first and every opening window is drawn around it, so each drawn
instance has a feasible tour by construction; the shipped instances are
``generate_p1(size, seed=k)`` (see :mod:`.build`).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from crab_gym.envs.realm.campus_tour.model import P1Instance

Size = Literal["small", "medium", "large"]

#: Number of locations to visit (the entrance excluded) drawn for each size class.
SIZE_TARGETS: dict[str, tuple[int, int]] = {"small": (5, 7), "medium": (12, 15), "large": (25, 35)}

_BUILDINGS = (
    "library", "cafeteria", "gym", "science_hall", "student_center", "admin_building",
    "art_museum", "chapel", "stadium", "bookstore", "lecture_hall", "chemistry_lab",
    "observatory", "music_hall", "engineering_hall", "medical_center", "theatre",
    "botanical_garden", "computer_lab", "law_school", "business_school", "language_center",
    "sports_field", "swimming_pool", "career_office", "history_museum", "physics_lab",
    "dormitory_north", "dormitory_south", "alumni_house", "innovation_hub", "media_lab",
    "clock_tower", "greenhouse", "planetarium", "robotics_lab", "mathematics_hall",
    "design_studio", "archive", "international_office",
)


def _round_down(x: float, step: int) -> int:
    return int(math.floor(x / step) * step)


def _round_up(x: float, step: int) -> int:
    return int(math.ceil(x / step) * step)


def _nearest_neighbour_2opt(travel: np.ndarray, start: int, nodes: list[int]) -> list[int]:
    """A decent (not optimal) closed tour over ``nodes`` from ``start``, ignoring windows."""
    order, here, left = [], start, set(nodes)
    while left:
        nxt = min(left, key=lambda j: (travel[here, j], j))
        order.append(nxt)
        left.remove(nxt)
        here = nxt

    def cost(seq: list[int]) -> int:
        path = [start, *seq, start]
        return int(sum(travel[a, b] for a, b in zip(path, path[1:])))

    best, improved = cost(order), True
    while improved:
        improved = False
        for i in range(len(order) - 1):
            for j in range(i + 1, len(order)):
                cand = order[:i] + order[i : j + 1][::-1] + order[j + 1 :]
                c = cost(cand)
                if c < best:
                    order, best, improved = cand, c, True
    return order


def generate_p1(
    size: Size = "small", seed: int = 0, name: str | None = None, n_targets: int | None = None
) -> P1Instance:
    """Draw a feasible campus tour of the given size class; the same seed gives the same tour.

    ``n_targets`` fixes the number of locations to visit (the entrance excluded) and names
    them after the first ``n_targets`` campus buildings in a fixed order, so every draw has
    the same location names (an env that draws a new tour per episode keeps its actions).

    Feasibility holds by construction: a hidden tour is planned first (a nearest-neighbour
    tour improved by 2-opt, with random pauses), every window is drawn around that tour's
    visit time, and ``max_travel`` is set above that tour's travel. Walking times come from
    map distances plus a climbing penalty, so they are asymmetric (uphill is slower) and obey
    the triangle inequality.
    """
    if size not in SIZE_TARGETS:
        raise ValueError(f"size must be one of {sorted(SIZE_TARGETS)}, got {size!r}")
    rng = np.random.default_rng([1, seed, list(SIZE_TARGETS).index(size)])
    lo, hi = SIZE_TARGETS[size]
    k = int(rng.integers(lo, hi + 1))
    names = ["entrance"] + [str(b) for b in rng.permutation(_BUILDINGS)[:k]]
    if n_targets is not None:
        if not 1 <= n_targets <= len(_BUILDINGS):
            raise ValueError(f"n_targets must be in 1..{len(_BUILDINGS)}, got {n_targets}")
        k = int(n_targets)
        names = ["entrance", *_BUILDINGS[:k]]
    n = k + 1

    xy = np.column_stack([rng.uniform(0, 1400, n), rng.uniform(0, 1000, n)])
    xy[0] = (700.0, 0.0)  # the entrance sits on the campus edge
    elevation = rng.uniform(0, 30, n)
    elevation[0] = 0.0
    dist = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    climb = np.maximum(0.0, elevation[None, :] - elevation[:, None])
    # 75 m per minute on the flat, 0.2 minute per metre climbed; ceil keeps the triangle rule.
    travel = np.ceil(dist / 75.0 + 0.2 * climb - 1e-9).astype(int)
    travel = np.maximum(travel, 1)
    np.fill_diagonal(travel, 0)

    order = _nearest_neighbour_2opt(travel, 0, list(range(1, n)))
    depart = 8 * 60 + 15 * int(rng.integers(0, 5))  # 08:00 .. 09:00
    pause_max = max(5, 420 // k)  # spreads the hidden tour over about a working day
    visit_time: dict[int, float] = {}
    t, here, walked = float(depart), 0, 0
    for j in order:
        t += travel[here, j] + rng.integers(0, pause_max + 1)  # walk, then an optional pause
        walked += int(travel[here, j])
        visit_time[j] = t
        here = j
    walked += int(travel[here, 0])
    back = t + travel[here, 0]
    closing = max(17 * 60, _round_up(back + rng.uniform(15, 60), 15))
    windows: list[tuple[int, int]] = [(depart, closing)] + [(0, 0)] * k
    for j, t in visit_time.items():
        if rng.random() < 0.25:  # an all-day location
            windows[j] = (depart, closing)
        else:
            windows[j] = (
                max(depart, _round_down(t - rng.uniform(0, 75), 15)),
                min(closing, _round_up(t + rng.uniform(10, 90), 15)),
            )
    max_travel = _round_up(walked * rng.uniform(1.05, 1.25), 5)

    return P1Instance(
        name=name or f"p1_{size}_seed{seed}",
        description=(
            f"Campus tour ({size}): visit {k} locations from the entrance within their opening "
            f"hours, walking at most {max_travel} minutes in total."
        ),
        locations=names,
        start="entrance",
        end="entrance",
        travel=travel.tolist(),
        windows=windows,
        max_travel=max_travel,
        coords=[(round(float(x), 1), round(float(y), 1)) for x, y in xy],
        size=size,
    )
