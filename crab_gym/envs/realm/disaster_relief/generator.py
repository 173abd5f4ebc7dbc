"""The seeded P7 generator: disaster-relief instances of three size classes.

Every draw is feasible by construction (the model has no plan-wide hard constraint that a
plan without trips breaks) and is built so that priorities matter: each resource's stock
covers only 50-85 % of what the regions need, vehicles differ in speed and capacity, and
weather blocks and shortages strike at varied minutes. The shipped instances are
``generate_p7(size, seed=k)`` (see :mod:`.build`); :func:`tiny_p7` draws instances small
enough for the exhaustive search of the tests.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from crab_gym.envs.realm.disaster_relief.model import (
    DEADLINE_HOURS,
    RESOURCES,
    P7Instance,
    Region,
    ResourceShortage,
    Vehicle,
    WeatherEvent,
    need_of,
)

Size = Literal["small", "medium", "large"]
SIZES: tuple[str, ...] = ("small", "medium", "large")

#: Regions, vehicles, weather blocks and shortages drawn per size class (inclusive ranges).
SIZE_RANGES: dict[str, dict[str, tuple[int, int]]] = {
    "small": {"regions": (2, 3), "vehicles": (2, 2), "weather": (1, 1), "shortages": (1, 1), "km": (30, 150)},
    "medium": {"regions": (4, 6), "vehicles": (3, 3), "weather": (1, 2), "shortages": (1, 2), "km": (30, 220)},
    "large": {"regions": (8, 12), "vehicles": (4, 5), "weather": (2, 3), "shortages": (2, 2), "km": (30, 300)},
}
#: Vehicle kinds: (type, capacity range in units, speed range in km/h).
KINDS = (("helicopter", (300, 1000), (180, 240)), ("truck", (1500, 5000), (50, 80)), ("boat", (800, 2000), (30, 45)))
SLOT = 30
DAY = 24 * 60


def _vehicles(rng: np.random.Generator, n: int) -> list[Vehicle]:
    out = []
    for i in range(n):
        kind, (c0, c1), (s0, s1) = KINDS[0] if i == 0 else KINDS[1 + int(rng.integers(2)) if i > 1 else 1]
        count = sum(1 for v in out if v.type == kind) + 1
        out.append(Vehicle(id=f"{kind}{count}", type=kind, capacity=int(rng.integers(c0 // 100, c1 // 100 + 1)) * 100,
                           speed_kmh=float(rng.integers(s0, s1 + 1))))
    return out


def _regions(rng: np.random.Generator, n: int, start: int, km: tuple[int, int]) -> list[Region]:
    out = []
    for i in range(n):
        severity = "critical" if i == 0 else str(rng.choice(["critical", "urgent", "normal"], p=[0.25, 0.4, 0.35]))
        population = int(rng.integers(5, 50)) * 100
        wanted = ["medical_supplies"] if severity == "critical" else []
        others = [k for k in RESOURCES if k not in wanted]
        wanted += [str(k) for k in rng.choice(others, size=int(rng.integers(1, 3)), replace=False)]
        angle, dist = rng.uniform(0, 2 * np.pi), rng.uniform(*km)
        out.append(Region(
            id=f"region{i + 1}", severity=severity, population=population,
            x=round(float(dist * np.cos(angle)), 1), y=round(float(dist * np.sin(angle)), 1),
            needs={k: need_of(population, k) for k in RESOURCES if k in wanted},
            deadline=start + DEADLINE_HOURS[severity] * 60,
        ))
    return out


def generate_p7(
    size: Size = "small", seed: int = 0, name: str | None = None, *, n_regions: int | None = None,
    n_vehicles: int | None = None,
) -> P7Instance:
    """A seeded instance of ``size``; ``n_regions`` / ``n_vehicles`` override the size's draw."""
    if size not in SIZE_RANGES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    ranges = SIZE_RANGES[size]
    rng = np.random.default_rng([7, SIZES.index(size), int(seed)])
    n_reg = n_regions if n_regions is not None else int(rng.integers(ranges["regions"][0], ranges["regions"][1] + 1))
    n_veh = n_vehicles if n_vehicles is not None else int(rng.integers(ranges["vehicles"][0], ranges["vehicles"][1] + 1))
    start = 360 + SLOT * int(rng.integers(0, 9))  # 06:00 .. 10:00
    regions = _regions(rng, n_reg, start, ranges["km"])
    totals = {k: sum(r.needs.get(k, 0) for r in regions) for k in RESOURCES}
    stock = {k: int(totals[k] * rng.uniform(0.5, 0.85)) if totals[k] else int(rng.integers(1, 10)) * 100
             for k in RESOURCES}
    disruptions: list = []
    for _ in range(int(rng.integers(ranges["weather"][0], ranges["weather"][1] + 1))):
        reg = regions[int(rng.integers(n_reg))]
        disruptions.append(WeatherEvent(region=reg.id, start=start + SLOT * int(rng.integers(1, 17)),
                                        duration=SLOT * int(rng.integers(4, 17))))
    needed = [k for k in RESOURCES if totals[k]]
    for _ in range(int(rng.integers(ranges["shortages"][0], ranges["shortages"][1] + 1))):
        disruptions.append(ResourceShortage(resource=needed[int(rng.integers(len(needed)))],
                                            start=start + SLOT * int(rng.integers(1, 25)),
                                            fraction=round(float(rng.uniform(0.2, 0.4)), 2)))
    disruptions.sort(key=lambda d: (d.start, d.type))
    return P7Instance(
        name=name or f"p7_{size}_seed{seed}", description=f"generated disaster relief ({size}, seed {seed})",
        size=size, start=start, horizon=start + DAY, slot_minutes=SLOT, stock=stock,
        personnel={"doctors": int(rng.integers(5, 30)), "nurses": int(rng.integers(10, 60)),
                   "logistics": int(rng.integers(5, 40))},
        regions=regions, vehicles=_vehicles(rng, n_veh), disruptions=disruptions,
    )


def tiny_p7(seed: int, n_regions: int = 2, n_vehicles: int = 1, slots: int = 5) -> P7Instance:
    """A toy instance for exhaustive search: hour slots, a few units of need, a stock short
    of them, one-slot or two-slot trips, a block and a shortage."""
    rng = np.random.default_rng([77, int(seed)])
    slot, start = 60, 480
    regions = []
    for i in range(n_regions):
        severity = ("critical", "urgent")[i % 2]
        keys = [str(k) for k in rng.choice(RESOURCES[:2], size=int(rng.integers(1, 3)), replace=False)]
        regions.append(Region(id=f"region{i + 1}", severity=severity, population=10,
                              x=float(rng.choice([40.0, 90.0])), y=0.0,
                              needs={k: int(rng.integers(1, 4)) for k in keys},
                              deadline=start + 60 * int(rng.integers(1, 3))))
    vehicles = [Vehicle(id=f"v{j + 1}", type="truck", capacity=int(rng.integers(2, 5)), speed_kmh=60.0)
                for j in range(n_vehicles)]
    stock = {k: int(rng.integers(2, 5)) for k in RESOURCES}
    disruptions = [
        WeatherEvent(region=regions[0].id, start=start + slot * int(rng.integers(0, 2)),
                     duration=slot * int(rng.integers(2, 4))),
        ResourceShortage(resource=str(rng.choice(RESOURCES[:2])), start=start + slot * int(rng.integers(1, 3)),
                         fraction=0.6),
    ]
    return P7Instance(name=f"p7_tiny_{seed}", size="tiny", start=start, horizon=start + slots * slot,
                      slot_minutes=slot, stock=stock, regions=regions, vehicles=vehicles, disruptions=disruptions)
