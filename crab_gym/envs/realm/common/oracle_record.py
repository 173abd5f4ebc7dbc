"""The JSON record of an oracle's result: what a family's ``references.json`` and the on-disk
reference cache store for one instance; and the reference of an instance whose family solves
it with such an oracle (:func:`oracle_reference`).

A record holds no wall-clock values (how long the solve took), so two builds of the same
instances can be compared line by line. It reads the common fields of an
:class:`~crab_gym.envs.realm.common.oracle_result.OracleResult`; a family adds what else its
records keep (``bound``, a certificate, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import ortools

from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.common.references import Reference, stored_reference


def oracle_record(result: OracleResult, fingerprint: str) -> dict[str, Any]:
    """The record of ``result`` for the instance with ``fingerprint`` (``value`` is its cost)."""
    return {
        "fingerprint": fingerprint,
        "value": result.cost,
        "status": result.status,
        "time_limit_s": result.time_limit_s,
        "workers": result.workers,
        "solver": result.solver,
        "ortools": ortools.__version__,
        "plan": result.plan,
    }


def oracle_reference(
    problem: str, instance: Any, instance_dir: Path, solve: Callable[[Any], OracleResult]
) -> Reference:
    """The reference of ``instance``: shipped in ``instance_dir/references.json``, else cached
    under ``realm/<problem>/``, else ``solve(instance)`` run now and its record cached
    (:func:`~crab_gym.envs.realm.common.references.stored_reference`)."""
    return stored_reference(
        problem, instance, instance_dir, lambda inst: oracle_record(solve(inst), inst.fingerprint())
    )
