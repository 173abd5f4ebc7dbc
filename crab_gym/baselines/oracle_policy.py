"""The OR-Tools oracle as a policy: submit the reference plan with ``submit_plan``.

The oracle is the yardstick of the optimality metric, so running it through the env is the
end-to-end check that an env scores its own reference plan at 1 -- and a baseline row that
users expect next to random and heuristic policies.

Shipped instances use the precomputed plan stored with their reference (no solver runs). The
oracle may score below 1 where its plan is not the best plan known: on P11 the yardstick is
the literature's best known makespan, so the stored plan scores best_known / its makespan
(on a generated P11 instance the reference carries the solver's own plan, which scores 1).
Other instances are solved when the policy first acts, with the problem's default budget
(P1-P4 cache the result on disk; P11 -- generated instances and files with data of no shipped
instance -- uses CP-SAT with ``jssp_time_limit`` seconds on ``jssp_workers`` workers, cached
on disk, and says so on stderr unless ``verbose=False``). P4 pauses at each disruption; the policy then submits the same plan
again and the env keeps the stops already served.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import gymnasium as gym

from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.jobshop import oracle
from crab_gym.envs.realm.jobshop.env import JobShopEnv
from crab_gym.envs.realm.jobshop.references import reference_plan

logger = logging.getLogger(__name__)


class OraclePolicy:
    """Plays the reference plan of the env's current instance (REALM envs only).

    Args:
        env: the (possibly wrapped) REALM env the policy acts in.
        jssp_time_limit: CP-SAT budget in seconds for a P11 instance.
        jssp_workers: CP-SAT workers for a P11 instance.
        verbose: announce on stderr when a P11 instance without a stored plan is solved.
    """

    name = "oracle"

    def __init__(
        self, env: gym.Env, *, jssp_time_limit: float = 10.0, jssp_workers: int = 2, verbose: bool = True
    ) -> None:
        self.env = env
        self.jssp_time_limit = jssp_time_limit
        self.jssp_workers = jssp_workers
        self.verbose = verbose
        self._arguments: dict[str, Any] | None = None

    def reset(self, env: gym.Env | None = None) -> None:
        """Forget the plan: the next episode may run another instance."""
        if env is not None:
            self.env = env
        self._arguments = None

    def __call__(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        if self._arguments is None:
            self._arguments = self.plan_arguments(self.env.unwrapped)
        return {"name": "submit_plan", "arguments": self._arguments}

    def plan_arguments(self, base: Any) -> dict[str, Any]:
        """The ``submit_plan`` arguments of the reference plan for ``base``'s instance: the
        env's ``reference.plan`` (every REALM env has one API), else -- a job-shop instance
        with no stored plan -- CP-SAT's best schedule."""
        solved = getattr(base, "solved_reference", None)  # the policy may wait for a solver; step() may not
        ref = solved() if callable(solved) else getattr(base, "reference", None)
        if not isinstance(ref, Reference):
            raise TypeError(f"{type(base).__name__} has no oracle plan: OraclePolicy supports the REALM envs")
        if ref.plan:
            return dict(ref.plan)
        if isinstance(base, JobShopEnv):
            return {"sequence": self._jssp_sequence(base)}
        raise TypeError(f"{type(base).__name__} has no oracle plan for {getattr(base.instance, 'name', '?')}")

    def _jssp_sequence(self, base: Any) -> list[list[int]]:
        """The stored plan of a shipped instance; otherwise CP-SAT's best schedule."""
        inst = base.instance
        plan = reference_plan(inst)
        if plan is not None:
            return [list(row) for row in plan.sequence]
        msg = (
            f"OraclePolicy: {inst.name} ({inst.n_jobs}x{inst.n_machines}) has no stored plan; solving "
            f"with CP-SAT for up to {self.jssp_time_limit:g} s on {self.jssp_workers} worker(s) "
            "(cached on disk)"
        )
        logger.info(msg)
        if self.verbose:
            print(msg, file=sys.stderr, flush=True)
        result = oracle.solve_jssp(
            inst, time_limit=self.jssp_time_limit, num_workers=self.jssp_workers, cache=True
        )
        if result.plan is None:
            raise RuntimeError(f"CP-SAT found no schedule for {inst.name} in {self.jssp_time_limit} s")
        done = f"OraclePolicy: {inst.name}: CP-SAT {result.status}, makespan {result.cost} (bound {result.bound})"
        logger.info(done)
        if self.verbose:
            print(done, file=sys.stderr, flush=True)
        return [list(row) for row in result.plan["sequence"]]
