"""The seeded P1 generator: an open day on a campus of building clusters, three size classes.

The visitor's day is a programme of sessions: a hidden itinerary visits the locations in a
random order (as booked, not as walked best), and each location's opening window is drawn
around that itinerary's visit, so every drawn instance has a feasible tour by construction.
The windows are staggered sessions of one to two and a half hours, plus a few all-day
locations. Because the itinerary is not a good walk while consecutive sessions overlap, the
shortest feasible tour must reorder the visits within what the windows allow: order
matters, and cheapest insertion falls clearly short of the optimum on most medium and large
instances. (Narrow 15-minute slots and sessions that close over lunch were tried: they pin
the order and made the instances easier.) The shipped instances are
``generate_p1(size, seed=k)`` (see :mod:`.build`).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from crab_gym.envs.realm.campus_tour.model import P1Instance

Size = Literal["small", "medium", "large"]

#: Number of locations to visit (the entrance excluded) drawn for each size class.
SIZE_TARGETS: dict[str, tuple[int, int]] = {"small": (6, 8), "medium": (16, 22), "large": (32, 40)}
#: Session windows last this many minutes (drawn uniformly), before rounding to 5 minutes.
SESSION_MINUTES = (60.0, 150.0)
#: Share of all-day locations (open from departure to closing) among the targets.
P_ALL_DAY = 0.10

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


def _campus(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Map positions (metres) in 3-6 clusters of buildings, and walking minutes between them.

    75 m per minute on the flat plus 0.2 minute per metre climbed, rounded up: asymmetric
    (uphill is slower) and obeying the triangle inequality.
    """
    c = int(rng.integers(3, 7))
    centres = np.column_stack([rng.uniform(150, 1450, c), rng.uniform(200, 1050, c)])
    xy = centres[rng.integers(0, c, n)] + rng.normal(0.0, 110.0, (n, 2))
    xy[:, 0] = np.clip(xy[:, 0], 0, 1600)
    xy[:, 1] = np.clip(xy[:, 1], 50, 1100)
    xy[0] = (800.0, 0.0)  # the entrance sits on the campus edge
    elevation = rng.uniform(0, 30, n)
    elevation[0] = 0.0
    dist = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    climb = np.maximum(0.0, elevation[None, :] - elevation[:, None])
    travel = np.maximum(np.ceil(dist / 75.0 + 0.2 * climb - 1e-9).astype(int), 1)
    np.fill_diagonal(travel, 0)
    return xy, travel


def _itinerary(rng: np.random.Generator, travel: np.ndarray, depart: int) -> tuple[dict[int, int], int, int]:
    """The hidden programme: every target in a random order, a 0-3 minute pause after each
    walk. Returns the visit minute of each target, the minutes walked and the minute it is
    back at the entrance."""
    t, here, walked, visit = depart, 0, 0, {}
    for j in (int(x) for x in rng.permutation(np.arange(1, len(travel)))):
        t += int(travel[here, j]) + int(rng.integers(0, 4))
        walked += int(travel[here, j])
        visit[j], here = t, j
    return visit, walked + int(travel[here, 0]), t + int(travel[here, 0])


def _window(rng: np.random.Generator, t: int, depart: int, closing: int) -> tuple[int, int]:
    """The opening window of a location the hidden visitor reaches at minute ``t``."""
    if rng.random() < P_ALL_DAY:
        return depart, closing
    width = rng.uniform(*SESSION_MINUTES)  # the session contains t, starting up to width before
    lo = max(depart, _round_down(t - rng.uniform(0, width), 5))
    return lo, min(closing, max(_round_up(t, 5), _round_up(lo + width, 5)))


def generate_p1(
    size: Size = "small", seed: int = 0, name: str | None = None, n_targets: int | None = None
) -> P1Instance:
    """Draw a feasible campus tour of the given size class; the same seed gives the same tour.

    ``n_targets`` fixes the number of locations to visit (the entrance excluded) and names
    them after the first ``n_targets`` campus buildings in a fixed order, so every draw has
    the same location names (an env that draws a new tour per episode keeps its actions).

    Feasibility holds by construction: the hidden itinerary (:func:`_itinerary`) meets every
    window, returns before the entrance closes and walks no more than ``max_travel``.
    """
    if size not in SIZE_TARGETS:
        raise ValueError(f"size must be one of {sorted(SIZE_TARGETS)}, got {size!r}")
    rng = np.random.default_rng([2, seed, list(SIZE_TARGETS).index(size)])
    lo, hi = SIZE_TARGETS[size]
    k = int(rng.integers(lo, hi + 1))
    names = ["entrance"] + [str(b) for b in rng.permutation(_BUILDINGS)[:k]]
    if n_targets is not None:
        if not 1 <= n_targets <= len(_BUILDINGS):
            raise ValueError(f"n_targets must be in 1..{len(_BUILDINGS)}, got {n_targets}")
        k = int(n_targets)
        names = ["entrance", *_BUILDINGS[:k]]
    xy, travel = _campus(rng, k + 1)
    depart = 8 * 60 + 15 * int(rng.integers(0, 5))  # 08:00 .. 09:00
    visit, walked, back = _itinerary(rng, travel, depart)
    closing = _round_up(back + rng.uniform(10, 45), 15)
    windows = [(depart, closing)] + [_window(rng, visit[j], depart, closing) for j in range(1, k + 1)]
    max_travel = _round_up(walked * rng.uniform(1.0, 1.1), 5)
    return P1Instance(
        name=name or f"p1_{size}_seed{seed}",
        description=(
            f"Campus open day ({size}): visit {k} locations from the entrance within their "
            f"session windows, walking at most {max_travel} minutes in total."
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
