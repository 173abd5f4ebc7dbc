"""Seeded instances of J2, J3 and J4 (the same size and seed give the same instance).

* **J2**: a classical job shop (every job visits every machine once, in a random order) with
  one disruption, as REALM-Bench's J2 puts one disruption on each J1 instance.
* **J3**: REALM-Bench's custom shape: jobs of 8-18 operations (about 13 on average at the
  large size, as upstream's 2,334-2,660 operations over 200 jobs), each on a machine drawn
  uniformly (so a job may revisit a machine), durations 1..100.
* **J4**: J3's shape with three disruptions.

Disruptions strike between 5 % and 60 % of the instance's trivial lower bound and last
5-20 % of it, so that they hit the schedule while it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.env import check_option_keys
from crab_gym.envs.realm.jobshop.variants.model import Disruption, ShopInstance

#: (jobs, machines) per size; J3/J4 jobs have ``OPS[size]`` operations (inclusive range).
SIZES = {"small": (10, 5), "medium": (50, 20), "large": (200, 50)}
J2_SIZES = {"small": (8, 5), "medium": (20, 10), "large": (200, 50)}
OPS = {"small": (3, 8), "medium": (6, 15), "large": (8, 18)}
DURATIONS = (1, 100)
#: The types each problem draws from, in a fixed order.
J2_KINDS = ("machine_breakdown", "power_outage", "supply_delay", "emergency_shutdown", "weather_effect")
J4_KINDS = (*J2_KINDS, "cascading_failure")


def _size(size: str, table: dict) -> tuple[int, int]:
    if size not in table:
        raise ValueError(f"size must be one of {', '.join(table)}, got {size!r}")
    return table[size]


def custom_jobs(rng: np.random.Generator, n_jobs: int, n_machines: int, ops: tuple[int, int]) -> tuple:
    """J3's jobs: each a chain of ``ops`` operations on uniformly drawn machines (job 0 has
    the most, so that every instance of a size has the same observation shape)."""
    lo, hi = DURATIONS
    jobs = []
    for j in range(n_jobs):
        k = ops[1] if j == 0 else int(rng.integers(ops[0], ops[1] + 1))
        machines = rng.integers(0, n_machines, k)
        durations = rng.integers(lo, hi + 1, k)
        jobs.append(tuple((int(m), int(p)) for m, p in zip(machines, durations)))
    return tuple(jobs)


def classic_jobs(rng: np.random.Generator, n_jobs: int, n_machines: int) -> tuple:
    """J1's (classical) jobs: each visits every machine once, in a random order."""
    lo, hi = DURATIONS
    return tuple(tuple((int(m), int(p)) for m, p in zip(rng.permutation(n_machines), rng.integers(lo, hi + 1, n_machines)))
                 for _ in range(n_jobs))


def draw_disruption(rng: np.random.Generator, kind: str, base: ShopInstance, list_jobs: bool) -> Disruption:
    """One disruption of ``kind`` on ``base``, striking while its schedule runs."""
    horizon = base.trivial_lower_bound()
    start = int(rng.integers(max(1, horizon // 20), max(2, horizon * 3 // 5)))
    duration = int(rng.integers(max(1, horizon // 20), max(2, horizon // 5)))
    m, n = base.n_machines, base.n_jobs
    loads = np.asarray(base.machine_loads())
    busy = np.argsort(-loads, kind="stable")[: max(1, m // 2)]
    if kind == "machine_breakdown":
        params = (("machine", int(rng.choice(busy))),)
    elif kind == "power_outage":
        params = (("machines", tuple(sorted(int(x) for x in rng.choice(m, min(m, int(rng.integers(2, 5))), replace=False)))),)
    elif kind == "emergency_shutdown":
        params = (("facility", "main"),)
    elif kind == "supply_delay":
        share = float(rng.integers(10, 41))
        jobs = tuple(sorted(int(x) for x in rng.choice(n, max(1, int(np.ceil(share / 100 * n))), replace=False)))
        params = (("resource", f"material_{int(rng.integers(1, 6))}"), ("shortage_percentage", share),
                  ("jobs", jobs if list_jobs else ()))
    elif kind == "weather_effect":
        picks = []
        for _ in range(int(rng.integers(2, 6))):
            j = int(rng.integers(n))
            picks.append((j, int(rng.integers(len(base.jobs[j])))))
        params = (("operations", tuple(sorted(set(picks)))), ("severity", round(float(rng.uniform(0.3, 0.9)), 2)))
    else:  # cascading_failure
        primary = int(rng.choice(busy))
        others = [x for x in range(m) if x != primary]
        k = min(len(others), int(rng.integers(1, 4)))
        cascade = tuple(sorted(int(x) for x in rng.choice(others, k, replace=False))) if k else ()
        params = (("primary_machine", primary), ("cascading_machines", cascade))
    return Disruption(kind, start, duration, params)


def _with_disruptions(rng: np.random.Generator, base: ShopInstance, kinds: tuple[str, ...], count: int,
                      list_jobs: bool) -> ShopInstance:
    drawn = tuple(draw_disruption(rng, kinds[int(rng.integers(len(kinds)))], base, list_jobs) for _ in range(count))
    return base.with_disruptions(sorted(drawn, key=lambda d: d.start))


def generate_j2(size: str = "small", seed: int = 0, name: str | None = None, n_jobs: int | None = None,
                n_machines: int | None = None) -> ShopInstance:
    """A classical job shop of ``size`` (or ``n_jobs`` x ``n_machines``) with one disruption
    (REALM-Bench's J2)."""
    n, m = _size(size, J2_SIZES)
    n, m = n_jobs or n, n_machines or m
    rng = np.random.default_rng([2, int(seed)])
    base = ShopInstance(classic_jobs(rng, n, m), m, name or f"j2_{size}_seed{seed}", "J2", seed=int(seed))
    return _with_disruptions(rng, base, J2_KINDS, 1, list_jobs=False)


def generate_j3(size: str = "small", seed: int = 0, name: str | None = None, n_jobs: int | None = None,
                n_machines: int | None = None) -> ShopInstance:
    """A custom job shop of ``size`` (large: 200 jobs x 50 machines; or ``n_jobs`` x
    ``n_machines``), no disruption."""
    n, m = _size(size, SIZES)
    n, m = n_jobs or n, n_machines or m
    rng = np.random.default_rng([3, int(seed)])
    return ShopInstance(custom_jobs(rng, n, m, OPS[size]), m, name or f"j3_{size}_seed{seed}", "J3", seed=int(seed))


def generate_j4(size: str = "small", seed: int = 0, name: str | None = None, n_jobs: int | None = None,
                n_machines: int | None = None) -> ShopInstance:
    """J3's shape of ``size`` (or ``n_jobs`` x ``n_machines``) with three disruptions
    (REALM-Bench's J4)."""
    n, m = _size(size, SIZES)
    n, m = n_jobs or n, n_machines or m
    rng = np.random.default_rng([4, int(seed)])
    base = ShopInstance(custom_jobs(rng, n, m, OPS[size]), m, name or f"j4_{size}_seed{seed}", "J4", seed=int(seed))
    return _with_disruptions(rng, base, J4_KINDS, 3, list_jobs=True)


GENERATORS = {"J2": generate_j2, "J3": generate_j3, "J4": generate_j4}


#: The keys of an env's ``generator`` dict.
GENERATOR_KEYS = ("n_jobs", "n_machines", "size")


def generator_options(generator: Any) -> dict[str, Any] | None:
    """The checked ``generator`` argument of a J env (None: no generator): a dict with a
    ``size`` (default ``"small"``) and optional ``n_jobs`` / ``n_machines``."""
    if generator is None:
        return None
    if not isinstance(generator, Mapping):
        raise TypeError(f'generator must be a dict like {{"size": "large"}} (keys: {", ".join(GENERATOR_KEYS)}); '
                        f"got {type(generator).__name__} {generator!r}")
    check_option_keys("generator option", generator, GENERATOR_KEYS)
    opts = {"size": "small", **generator}
    if opts["size"] not in SIZES:
        raise ValueError(f"generator size must be one of {', '.join(SIZES)}, got {opts['size']!r}")
    for key in ("n_jobs", "n_machines"):
        value = opts.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"generator needs {key} >= 1, got {value!r}")
    return opts
