"""Reference values for P3/P4: precomputed for shipped instances, solved on demand otherwise.

``reset()`` never waits on a solver: a shipped instance's reference is read from its
``references.json``; any other instance is solved the first time its reference is needed
(at the end of an episode) and cached in memory and on disk, keyed by the instance data
(``realm_p3p4`` under the cache root of :mod:`crab_gym.envs.realm.common.cache`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.cache import cache_dir as shared_cache_dir
from crab_gym.envs.realm.ridesharing.model import INSTANCE_DIRS, P3Instance
from crab_gym.envs.realm.ridesharing.oracle import solve_p3
from crab_gym.envs.realm.ridesharing.oracle_disruptions import adaptive_from_state, best_reference

#: Deterministic search settings for on-demand references (solutions, wall-clock guard in s).
ON_DEMAND_SOLUTION_LIMIT = 300
ON_DEMAND_TIME_GUARD = 30.0

_MEMORY: dict[str, dict[str, Any]] = {}


def cache_dir() -> Path:
    """Where solved P3/P4 references are kept (see :mod:`crab_gym.envs.realm.common.cache`)."""
    return shared_cache_dir("realm_p3p4")


@lru_cache(maxsize=4)
def shipped_references(problem: str) -> dict[str, dict[str, Any]]:
    """``references.json`` of ``"p3"`` or ``"p4"`` ({} when absent)."""
    path = INSTANCE_DIRS[problem] / "references.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def _cached(key: str, compute) -> dict[str, Any]:
    if key in _MEMORY:
        return _MEMORY[key]
    path = cache_dir() / f"{key}.json"
    if path.is_file():
        try:
            value = json.loads(path.read_text())
            _MEMORY[key] = value
            return value
        except (OSError, json.JSONDecodeError):
            pass
    value = compute()
    _MEMORY[key] = value
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(value))
        tmp.replace(path)
    except OSError:  # a read-only home is no reason to fail an episode
        pass
    return value


def _shipped(problem: str, instance: P3Instance) -> dict[str, Any] | None:
    ref = shipped_references(problem).get(instance.name)
    if ref is not None and ref.get("fingerprint") == instance.fingerprint():
        return ref
    return None


def p3_reference(instance: P3Instance) -> dict[str, Any]:
    """``{"value", "plan", "status", ...}`` of the P3 oracle for ``instance`` (disruptions ignored)."""
    ref = _shipped("p3", instance)
    if ref is not None:
        return ref
    plain = P3Instance.model_validate(instance.model_dump(include=set(P3Instance.model_fields)))

    def compute() -> dict[str, Any]:
        res = solve_p3(plain, time_limit=ON_DEMAND_TIME_GUARD, solution_limit=ON_DEMAND_SOLUTION_LIMIT)
        out = res.to_dict()
        out["value"] = out.pop("cost")
        out["fingerprint"] = plain.fingerprint()
        return out

    return _cached(f"p3-{plain.fingerprint()}", compute)


def schedule_key(schedule: Sequence[Any]) -> str:
    text = json.dumps([json.loads(d.model_dump_json()) for d in schedule], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def p4_reference(instance: P3Instance, schedule: Sequence[Any] | None = None) -> dict[str, Any]:
    """The P4 reference ``{"value", "plan", ...}`` facing ``schedule`` (default: the instance's
    own disruptions): the better of the adaptive oracle (the P3 plan, re-solved at each
    disruption) and the greedy policy."""
    own = list(getattr(instance, "disruptions", []))
    schedule = own if schedule is None else list(schedule)
    shipped = _shipped("p4", instance)
    if shipped is not None and schedule == own:
        return shipped
    initial = shipped["initial"] if shipped is not None else p3_reference(instance)

    def compute() -> dict[str, Any]:
        res, policy = best_reference(instance, initial["plan"], schedule)
        return {
            "value": res.cost,
            "policy": policy,
            "travel": res.travel,
            "served": res.served,
            "feasible": res.feasible,
            "plan": res.plan,
            "resolves": res.resolves,
            "initial": {k: initial[k] for k in ("value", "plan", "status", "time_limit_s", "workers") if k in initial},
        }

    return _cached(f"p4-{instance.fingerprint()}-{schedule_key(schedule)}", compute)


def adaptation_reference(
    snapshot: Any, schedule: Sequence[Any], keep: dict[int, list[int]] | None = None
) -> dict[str, Any]:
    """The adaptive oracle taking over from an episode's state at its first disruption.

    ``snapshot`` is a :class:`~crab_gym.envs.realm.ridesharing.sim.RideSim` copy; ``schedule``
    the disruptions still to come after it (as scheduled or injected); ``keep`` the rest of
    the plan the episode was following then (a submitted plan), which the oracle may keep.
    """
    sim = snapshot.copy()
    sim.pending = sorted(schedule, key=lambda d: d.start)
    state = json.dumps(
        {
            "routes": [[(x.stop, x.depart, x.service) for x in v.route] for v in sim.vehicles],
            "parked": [v.parked for v in sim.vehicles],
            "applied": [json.loads(d.model_dump_json()) for d in sim.applied],
            "pending": [json.loads(d.model_dump_json()) for d in sim.pending],
            "keep": None if keep is None else sorted((int(k), list(v)) for k, v in keep.items()),
        },
        sort_keys=True,
    )
    key = "adapt-" + sim.inst.fingerprint() + "-" + hashlib.sha256(state.encode()).hexdigest()[:16]
    if key in _MEMORY:
        return _MEMORY[key]
    res = adaptive_from_state(sim, keep)
    out = {"value": res.cost, "plan": res.plan, "feasible": res.feasible, "resolves": res.resolves}
    if len(_MEMORY) > 10_000:
        _MEMORY.clear()
    _MEMORY[key] = out
    return out
