"""The JSON record of an oracle's result: what a family's ``references.json`` and the on-disk
reference cache store for one instance; and the reference of an instance whose family solves
it with such an oracle (:func:`oracle_reference`).

A record holds no wall-clock values (how long the solve took), so two builds of the same
instances can be compared line by line. Any oracle result with ``cost``, ``status``,
``time_limit_s``, ``workers``, ``solver`` and ``plan()`` fits (see :class:`OracleOutcome`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import ortools

from crab_gym.envs.realm.common.references import Reference, stored_reference


class OracleOutcome(Protocol):
    """What :func:`oracle_record` reads from an oracle's result."""

    cost: float | None
    status: str
    time_limit_s: float
    workers: int
    solver: str

    def plan(self) -> Any: ...


def oracle_record(result: OracleOutcome, fingerprint: str) -> dict[str, Any]:
    """The record of ``result`` for the instance with ``fingerprint`` (``value`` is its cost)."""
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


def oracle_reference(
    problem: str, instance: Any, instance_dir: Path, solve: Callable[[Any], OracleOutcome]
) -> Reference:
    """The reference of ``instance``: shipped in ``instance_dir/references.json``, else cached
    under ``realm/<problem>/``, else ``solve(instance)`` run now and its record cached
    (:func:`~crab_gym.envs.realm.common.references.stored_reference`)."""
    return stored_reference(
        problem, instance, instance_dir, lambda inst: oracle_record(solve(inst), inst.fingerprint())
    )
