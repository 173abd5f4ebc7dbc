"""P6/P9 references as :class:`~crab_gym.envs.realm.common.references.Reference` records.

* **P6**: the CP-SAT oracle's plan (:func:`~.oracle.solve`) and its cost.
* **P9**: the better of the adaptive oracle (:mod:`.replan`: the plan made with flights on
  schedule, re-solved from the state reached at each delay announcement) and the greedy
  policy (``policy`` says which; neither foresees a delay). Its ``bound`` is the hindsight
  optimum (every delay known from the start), below which no plan can go. Status
  ``ADAPTIVE(OPTIMAL)``: the adaptive oracle's, every solve proven optimal;
  ``ADAPTIVE(GREEDY)``: the greedy policy's (the adaptive oracle's first plan left no feasible
  replan, or cost more).

Shipped instances carry theirs in ``instances/p6|p9/references.json`` (``reset()`` never
waits for a solver on them); any other instance is solved when its reference is first needed
and cached on disk by fingerprint (``realm/p6/``, ``realm/p9/``).
"""

from __future__ import annotations

from typing import Any

import ortools

from crab_gym.envs.realm.common.oracle_record import oracle_record
from crab_gym.envs.realm.common.references import Reference, stored_reference
from crab_gym.envs.realm.thanksgiving import oracle
from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.heuristics import greedy_play
from crab_gym.envs.realm.thanksgiving.model import INSTANCE_DIRS, ThanksgivingInstance
from crab_gym.envs.realm.thanksgiving.replan import replan_from
from crab_gym.envs.realm.thanksgiving.sim import Kitchen


def p6_record(inst: ThanksgivingInstance) -> dict[str, Any]:
    """The CP-SAT record of the static dinner (delays ignored)."""
    static = inst.static()
    res = oracle.solve(static)
    return {**oracle_record(res, static.fingerprint()), "bound": res.bound, "deterministic_time_limit": res.time_limit_s}


def p9_record(inst: ThanksgivingInstance) -> dict[str, Any]:
    """The adaptive oracle's record facing the instance's delays."""
    limit = oracle.default_limit(inst)
    chain = replan_from(Kitchen.start_of(inst, inst.delays), limit)
    greedy = greedy_play(Kitchen.start_of(inst, inst.delays))
    verdict = check_plan(inst, greedy.plan(), landings_of(inst, inst.delays))
    hindsight = oracle.solve(inst.static(), limit, delays=inst.delays)
    proved = all(s == "OPTIMAL" for s in chain.statuses)
    use_chain = chain.feasible and (not verdict.feasible or chain.cost <= verdict.cost)
    feasible = chain.feasible or verdict.feasible
    return {
        "fingerprint": inst.fingerprint(),
        "value": (chain.cost if use_chain else verdict.cost) if feasible else None,
        "policy": "adaptive_oracle" if use_chain else "greedy",
        "status": ("INFEASIBLE" if not feasible else "ADAPTIVE(GREEDY)" if not use_chain
                   else f"ADAPTIVE({'OPTIMAL' if proved else 'FEASIBLE'})"),
        "bound": hindsight.cost if hindsight.status == "OPTIMAL" else hindsight.bound,
        "solver": oracle.SOLVER + " + re-solve at each delay announcement",
        "time_limit_s": limit,
        "deterministic_time_limit": limit,
        "workers": oracle.WORKERS,
        "ortools": ortools.__version__,
        "plan": chain.plan if use_chain else greedy.plan(),
        "adaptive_oracle_value": chain.cost if chain.feasible else None,
        "greedy_value": verdict.cost if verdict.feasible else None,
        "resolves": chain.resolves,
        "solve_statuses": chain.statuses,
        "hindsight_value": hindsight.cost,
        "hindsight_status": hindsight.status,
    }


def p6_reference(inst: ThanksgivingInstance) -> Reference:
    """The P6 reference: shipped, cached or solved now."""
    return stored_reference("p6", inst.static(), INSTANCE_DIRS["p6"], p6_record)


def p9_reference(inst: ThanksgivingInstance) -> Reference:
    """The P9 reference (adaptive oracle facing the instance's delays): shipped, cached or
    solved now."""
    return stored_reference("p9", inst, INSTANCE_DIRS["p9"], p9_record)
