"""The one result type of every REALM family's oracle: what a solve found and how.

Every family's oracle (routing, CP-SAT, an adaptive oracle that re-solves at each
disruption) returns an :class:`OracleResult`, so the code that reads results (reference
records, builds, tests, benchmarks) reads the same fields everywhere, and a result maps onto a
:class:`~crab_gym.envs.realm.common.references.Reference` field for field (``cost`` is the
reference's ``value``). What a family measures besides (dropped visits, travel minutes, the
deterministic time a search used, ...) goes in ``detail``, documented by the family's oracle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crab_gym.envs.realm.common.references import FEASIBLE_STATUSES


@dataclass(frozen=True)
class OracleResult:
    """What an oracle found for one instance (or from one state of an episode).

    Attributes:
        cost: the plan's cost in the reference's unit (None: no usable plan).
        status: the solver's status (``"OPTIMAL"``, ``"FEASIBLE"``, ``"ROUTING_SUCCESS"``,
            ``"INFEASIBLE"``, ``"NO_SOLUTION"``, ``"ADAPTIVE"``, ...).
        plan: the plan as the family's ``submit_plan`` arguments (None: no plan).
        bound: a proven lower bound on the optimum, if the solver gives one.
        time_limit_s: the solver's budget in seconds (wall-clock or deterministic, as the
            family's oracle says).
        workers: the solver's worker count.
        solver: what produced the plan (solver and strategy).
        solve_seconds: wall-clock seconds the solve took (never written to a record, never
            compared: two equal results may take different times).
        detail: what the family measures besides (keys documented by its oracle).
        feasible: whether the plan meets every constraint. Left out, it follows the status
            (a usable plan with a status of
            :data:`~crab_gym.envs.realm.common.references.FEASIBLE_STATUSES`); a family whose
            checker judges the plan passes the checker's verdict.
    """

    cost: float | None
    status: str
    plan: dict[str, Any] | None = None
    bound: float | None = None
    time_limit_s: float | None = None
    workers: int = 1
    solver: str = ""
    solve_seconds: float = field(default=0.0, compare=False)
    detail: Mapping[str, Any] = field(default_factory=dict)
    feasible: bool | None = None  # a bool once constructed (None: derived from the status)

    def __post_init__(self) -> None:
        if self.feasible is None:
            object.__setattr__(self, "feasible", self.cost is not None and self.status in FEASIBLE_STATUSES)
