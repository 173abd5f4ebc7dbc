"""Reference values for P1 and P2: shipped, cached on disk, or solved on demand.

A shipped instance's reference is read from ``instances/p{1,2}/references.json`` (no solver
runs). Any other instance (generated, converted from upstream, hand-made) is solved once
with the oracle's default budget and the record is cached under the user cache directory,
keyed by the instance's fingerprint, so the next episode on it starts without a solver.

The cache directory is ``$CRAB_GYM_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/crab_gym``,
else ``~/.cache/crab_gym``.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import ortools

from crab_gym.envs.realm.campus_tour import model as p1_data
from crab_gym.envs.realm.common.cache import cache_dir as shared_cache_dir
from crab_gym.envs.realm.group_tours import model as p2_data


def cache_dir() -> Path:
    """Where solved references for non-shipped instances are kept."""
    return shared_cache_dir()


@cache
def shipped_references(problem: str) -> dict[str, dict[str, Any]]:
    """The shipped reference records of ``"p1"`` or ``"p2"``, by instance name."""
    folder = {"p1": p1_data.INSTANCE_DIR, "p2": p2_data.INSTANCE_DIR}[problem]
    path = folder / "references.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text())["instances"]


def record_from_result(result: Any, fingerprint: str) -> dict[str, Any]:
    """The JSON record of an oracle result (no wall-clock values)."""
    return {
        "fingerprint": fingerprint,
        "value": result.cost,
        "status": result.status,
        "time_limit_s": result.time_limit_s,
        "workers": result.workers,
        "solver": result.solver,
        "ortools": ortools.__version__,
        "plan": result.plan(),
    }


def _lookup(problem: str, instance: Any, solve: Any) -> dict[str, Any]:
    fp = instance.fingerprint()
    shipped = shipped_references(problem).get(instance.name)
    if shipped is not None and shipped.get("fingerprint") == fp:
        return {**shipped, "source": "shipped"}
    path = cache_dir() / "realm" / problem / f"{fp}.json"
    if path.is_file():
        try:
            return {**json.loads(path.read_text()), "source": "cache"}
        except (OSError, json.JSONDecodeError):
            pass  # a damaged cache entry is solved again
    record = record_from_result(solve(instance), fp)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as fh:
            json.dump(record, fh)
        os.replace(fh.name, path)
    except OSError:
        pass  # a read-only home only costs a re-solve next time
    return {**record, "source": "solved"}


def reference_p1(instance: p1_data.P1Instance) -> dict[str, Any]:
    """Reference record for a P1 instance (``value`` = travel minutes of the oracle's tour)."""
    from crab_gym.envs.realm.campus_tour.oracle import solve_p1

    return _lookup("p1", instance, solve_p1)


def reference_p2(instance: p2_data.P2Instance) -> dict[str, Any]:
    """Reference record for a P2 instance (``value`` = the oracle plan's cost)."""
    from crab_gym.envs.realm.group_tours.oracle import solve_p2

    return _lookup("p2", instance, solve_p2)
