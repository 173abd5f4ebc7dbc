"""Greedy baseline for Realm-P2-v0 (group tours): earliest preferred start first.

:class:`EarliestStartPolicy` follows the policy protocol of
:mod:`crab_gym.baselines.random_policy`: ``policy = EarliestStartPolicy(env); action =
policy(observation, info)``, returning a tool call. It takes the unassigned group with the
earliest preferred start (then arrival, then id order) and gives it to the legal guide who
can start it soonest, ties to the guide with fewer tours (then id order).
:func:`earliest_start_plan` runs the same rule on an instance without an env (the oracle's
hint).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from crab_gym.envs.realm.common.policy_fit import EnvFit, FittedPolicy
from crab_gym.envs.realm.group_tours.model import P2Instance
from crab_gym.envs.realm.group_tours.sim import Schedule

#: The env the policy reads.
FIT = EnvFit("EarliestStartPolicy", "crab_gym.envs.realm.group_tours.env.GroupToursEnv", ("Realm-P2-v0",))


class EarliestStartPolicy(FittedPolicy):
    """Earliest-preferred group first, to the guide who can start it soonest."""

    name = "p2_earliest_start"
    fit = FIT

    def __call__(self, observation: Any, info: dict[str, Any]) -> dict:
        base = self.env.unwrapped
        inst, sched = base.instance, base.schedule
        mask = np.asarray(base.action_masks(), dtype=bool).reshape(sched.G, sched.K)
        open_groups = np.flatnonzero(mask.any(axis=1))
        if open_groups.size == 0:  # nothing legal: the env reports it as invalid
            return {"name": "assign", "arguments": {"group": inst.group_ids[0], "guide": inst.guide_ids[0]}}
        g = min(open_groups, key=lambda g: (inst.groups[g].preferred, inst.groups[g].arrival, g))
        loads = [len(t) for t in sched.tours]
        k = min(np.flatnonzero(mask[g]), key=lambda k: (sched.earliest(int(g), int(k)), loads[k], k))
        return {"name": "assign", "arguments": {"group": inst.group_ids[g], "guide": inst.guide_ids[k]}}


def earliest_start_plan(instance: P2Instance) -> dict:
    """The :class:`EarliestStartPolicy` rule run on a P2 instance directly (no env):
    a plan in REALM's shape ``{"assignments": {...}}``; groups it cannot place are left out."""
    sched = Schedule(instance)
    order = sorted(range(sched.G), key=lambda g: (instance.groups[g].preferred, instance.groups[g].arrival, g))
    for g in order:
        options = [
            (s, len(sched.tours[k]), k)
            for k in map(int, np.flatnonzero(sched.compatible[g]))
            if (s := sched.earliest(g, k)) is not None
        ]
        if options:
            s, _, k = min(options)
            sched.assign(g, k, s)
    return sched.plan()
