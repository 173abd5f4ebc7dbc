"""P6/P9 references as :class:`~crab_gym.envs.realm.common.references.Reference` records.

* **P6**: the CP-SAT oracle's plan (:func:`~.oracle.solve`) and its cost.
* **P9**: the best plan known for the afternoon as it happens: CP-SAT with every delay known
  from the start (the hindsight optimum, ``policy: "hindsight_oracle"``), or the adaptive
  oracle's or the greedy policy's afternoon if cheaper (only when the hindsight solve stopped
  early). A plan is a plan: ``submit_plan`` carries out the hindsight plan as written (it pauses
  at an announcement; resubmitting continues it), so a reference without foresight would be
  beaten by it. The best afternoon **without foresight**, the better of the adaptive oracle
  (:mod:`.replan`: the plan made with flights on schedule, re-solved from the state reached at
  each announcement) and the greedy policy, is kept as ``adaptive_value`` (``adaptive_policy``
  says which); ``adaptation_reference="oracle"`` measures adaptation against it.

Every record also holds the one-at-a-time afternoon (:func:`~.coordination.solo_record`:
``solo_value``, ``solo_bound``, ``solo_status``, ``solo_car``), the baseline of coordination
and, for a dinner no plan has ready by the deadline, of optimality (:mod:`.scoring`).

Shipped instances carry theirs in ``instances/p6|p9/references.json`` (``reset()`` never
waits for a solver on them); any other instance is solved when its reference is first needed
and cached on disk by fingerprint (``realm/p6_v2/``, ``realm/p9_v2/``: the model with lateness
as a cost; records cached by earlier versions are not reused).
"""

from __future__ import annotations

from typing import Any

import ortools

from crab_gym.envs.realm.common.oracle_record import oracle_record
from crab_gym.envs.realm.common.references import Reference, stored_reference
from crab_gym.envs.realm.thanksgiving import oracle
from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.coordination import solo_record
from crab_gym.envs.realm.thanksgiving.heuristics import greedy_play
from crab_gym.envs.realm.thanksgiving.model import INSTANCE_DIRS, ThanksgivingInstance
from crab_gym.envs.realm.thanksgiving.replan import replan_from
from crab_gym.envs.realm.thanksgiving.sim import Kitchen

#: The on-disk cache folders (``realm/<key>/``); renamed when the model changes.
CACHE_KEYS = {"p6": "p6_v2", "p9": "p9_v2"}


def p6_record(inst: ThanksgivingInstance) -> dict[str, Any]:
    """The CP-SAT record of the static dinner (delays ignored), with its solo afternoon."""
    static = inst.static()
    res = oracle.solve(static)
    return {**oracle_record(res, static.fingerprint()), "bound": res.bound, "deterministic_time_limit": res.time_limit_s,
            **solo_record(static, (), res.time_limit_s)}


def _adaptive(inst: ThanksgivingInstance, limit: float) -> dict[str, Any]:
    """The best afternoon without foresight: the adaptive oracle's or the greedy policy's."""
    chain = replan_from(Kitchen.start_of(inst, inst.delays), limit)
    greedy = greedy_play(Kitchen.start_of(inst, inst.delays))
    verdict = check_plan(inst, greedy.plan(), landings_of(inst, inst.delays))
    use_chain = chain.feasible and (not verdict.feasible or chain.cost <= verdict.cost)
    return {
        "value": chain.cost if use_chain else verdict.cost if verdict.feasible else None,
        "plan": chain.plan if use_chain else greedy.plan(),
        "status": chain.status if use_chain else "ADAPTIVE(GREEDY)",
        "policy": "adaptive_oracle" if use_chain else "greedy",
        "adaptive_oracle_value": chain.cost if chain.feasible else None,
        "greedy_value": verdict.cost if verdict.feasible else None,
        "resolves": chain.detail["resolves"],
        "solve_statuses": chain.detail["statuses"],
    }


def p9_record(inst: ThanksgivingInstance) -> dict[str, Any]:
    """The best plan known facing the instance's delays (see the module docstring)."""
    limit = oracle.default_limit(inst)
    hindsight = oracle.solve(inst.static(), limit, delays=inst.delays)
    adaptive = _adaptive(inst, limit)
    use_hindsight = hindsight.cost is not None and (adaptive["value"] is None or hindsight.cost <= adaptive["value"])
    best = ({"value": hindsight.cost, "plan": hindsight.plan, "status": hindsight.status, "policy": "hindsight_oracle"}
            if use_hindsight else {k: adaptive[k] for k in ("value", "plan", "status", "policy")})
    return {
        "fingerprint": inst.fingerprint(),
        **best,
        "bound": hindsight.bound,
        "solver": oracle.SOLVER + " with every delay known (hindsight); adaptive: re-solve at each announcement",
        "time_limit_s": limit,
        "deterministic_time_limit": limit,
        "workers": oracle.WORKERS,
        "ortools": ortools.__version__,
        "hindsight_value": hindsight.cost,
        "hindsight_status": hindsight.status,
        "adaptive_value": adaptive["value"],
        "adaptive_status": adaptive["status"],
        "adaptive_policy": adaptive["policy"],
        **{k: adaptive[k] for k in ("adaptive_oracle_value", "greedy_value", "resolves", "solve_statuses")},
        **solo_record(inst, inst.delays, limit),
    }


def p6_reference(inst: ThanksgivingInstance) -> Reference:
    """The P6 reference: shipped, cached or solved now."""
    return stored_reference(CACHE_KEYS["p6"], inst.static(), INSTANCE_DIRS["p6"], p6_record)


def p9_reference(inst: ThanksgivingInstance) -> Reference:
    """The P9 reference (the best plan known facing the instance's delays): shipped, cached
    or solved now."""
    return stored_reference(CACHE_KEYS["p9"], inst, INSTANCE_DIRS["p9"], p9_record)
