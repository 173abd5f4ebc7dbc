"""A greedy Thanksgiving policy: fetch the earliest flights first, cook the longest chains first.

At each decision time (:class:`~.sim.Kitchen` state), in this order:

1. **Fetch**: the unfetched traveller whose flight lands first (as known now) rides with a
   car already waiting at the airport if that delays nobody, else with an idle car, which
   leaves now.
2. **Cook**: among the tasks that can start now, the one with the longest remaining chain
   (its duration plus its longest successor chain), by the idle skilled cook with the fewest
   skills (keeping versatile cooks free).
3. Otherwise **wait** for the next event.

:func:`greedy_action` is the policy as a tool call (the ``thanksgiving_greedy`` baseline);
:func:`greedy_play` plays a whole afternoon on a kitchen.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.policy_fit import EnvFit
from crab_gym.envs.realm.thanksgiving.model import ThanksgivingInstance
from crab_gym.envs.realm.thanksgiving.sim import Kitchen

#: The env :func:`greedy_action` reads (checked once per env class).
FIT = EnvFit(
    "thanksgiving.heuristics.greedy_action",
    "crab_gym.envs.realm.thanksgiving.env.ThanksgivingEnv",
    ("Realm-P6-v0", "Realm-P9-v0"),
)


def chain_lengths(inst: ThanksgivingInstance) -> dict[str, int]:
    """Each task's duration plus its longest chain of successors (minutes)."""
    succ: dict[str, list[str]] = {t: [] for t in inst.task_ids}
    for a, b in inst.dependencies:
        succ[a].append(b)
    out: dict[str, int] = {}

    def length(t: str) -> int:
        if t not in out:
            out[t] = inst.tasks[inst.task_index[t]].duration + max((length(s) for s in succ[t]), default=0)
        return out[t]

    for t in inst.task_ids:
        length(t)
    return out


def greedy_choice(k: Kitchen) -> tuple[str, dict[str, str]]:
    """The greedy decision in ``k``: ``("send_car", {...})``, ``("start_task", {...})`` or
    ``("wait", {})``."""
    inst = k.inst
    waiting = sorted(
        (m for m in inst.travellers if k.trip_of(m) is None), key=lambda m: (k.known_landing(m), m)
    )
    for member in waiting:
        for car in inst.car_ids:
            trip = k.joinable(car)
            if trip is not None and k.known_landing(member) <= trip.leave and k.why_not_send(car, member) is None:
                return "send_car", {"car": car, "member": member}
        for car in inst.car_ids:
            if k.joinable(car) is None and k.why_not_send(car, member) is None:
                return "send_car", {"car": car, "member": member}
    chains = chain_lengths(inst)
    for task in sorted(inst.task_ids, key=lambda t: (-chains[t], inst.task_index[t])):
        cooks = [c for c in inst.skilled(task) if k.why_not_start(task, c) is None]
        if cooks:
            cook = min(cooks, key=lambda c: (len(inst.members[inst.member_index[c]].skills), inst.member_index[c]))
            return "start_task", {"task": task, "cook": cook}
    return "wait", {}


def greedy_play(k: Kitchen, max_steps: int = 10_000) -> Kitchen:
    """Play the greedy policy on ``k`` (changed in place) until the afternoon is over."""
    for _ in range(max_steps):
        if k.complete:
            break
        name, args = greedy_choice(k)
        if name == "send_car":
            k.send(args["car"], args["member"])
        elif name == "start_task":
            k.start(args["task"], args["cook"])
        elif k.can_wait():
            k.wait()
        else:
            break
    return k


def greedy_action(env: Any) -> dict[str, Any]:
    """The greedy decision for a Realm-P6/P9 env, as a tool call."""
    name, args = greedy_choice(FIT.check(env).kitchen)
    return {"name": name, "arguments": args}
