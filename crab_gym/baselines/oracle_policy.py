"""The OR-Tools oracle as a policy: submit the reference plan with ``submit_plan``.

The oracle is the yardstick of the optimality metric, so running it through the env is the
end-to-end check that an env scores its own reference plan at 1 -- and a baseline row that
users expect next to random and heuristic policies.

Shipped instances use the precomputed plan stored with their reference value (no solver
runs). Other instances are solved when the policy first acts, with the problem's default
budget (P1-P4 cache the result on disk; P11 uses CP-SAT with ``jssp_time_limit`` seconds on
``jssp_workers`` workers). P4 pauses at each disruption; the policy then submits the same plan
again and the env keeps the stops already served.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class OraclePolicy:
    """Plays the reference plan of the env's current instance (REALM envs only).

    Args:
        env: the (possibly wrapped) REALM env the policy acts in.
        jssp_time_limit: CP-SAT budget in seconds for a P11 instance.
        jssp_workers: CP-SAT workers for a P11 instance.
    """

    name = "oracle"

    def __init__(self, env: gym.Env, *, jssp_time_limit: float = 10.0, jssp_workers: int = 2) -> None:
        self.env = env
        self.jssp_time_limit = jssp_time_limit
        self.jssp_workers = jssp_workers
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
        """The ``submit_plan`` arguments of the reference plan for ``base``'s instance."""
        from crab_gym.envs.realm.p11_jssp import JobShopEnv

        if isinstance(base, JobShopEnv):
            return {"sequence": self._jssp_sequence(base)}
        record = base.reference_record if hasattr(base, "reference_record") else None
        if record is None and callable(getattr(base, "reference", None)):
            record = base.reference()
        if not isinstance(record, dict) or not record.get("plan"):
            raise TypeError(
                f"{type(base).__name__} has no oracle plan: OraclePolicy supports Realm-P1..P4 and P11"
            )
        plan = record["plan"]
        if "submit_plan" in base.actions:
            params = base.actions["submit_plan"].param_names
            if len(params) == 1 and params[0] not in plan:
                return {params[0]: plan}
        return dict(plan)

    def _jssp_sequence(self, base: Any) -> list[list[int]]:
        from crab_gym.datasets.jssp.oracle import solve_jssp

        inst = base.instance
        result = solve_jssp(inst, time_limit=self.jssp_time_limit, num_workers=self.jssp_workers, cache=True)
        if result.starts is None:
            raise RuntimeError(f"CP-SAT found no schedule for {inst.name} in {self.jssp_time_limit} s")
        per_machine: list[list[tuple[int, int, int]]] = [[] for _ in range(inst.n_machines)]
        for j, (row_starts, row_machines) in enumerate(zip(result.starts, inst.machines)):
            for k, (start, machine) in enumerate(zip(row_starts, row_machines)):
                per_machine[machine].append((start, k, j))
        return [[j for _, _, j in sorted(ops)] for ops in per_machine]
