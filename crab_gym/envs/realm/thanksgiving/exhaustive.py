"""Exhaustive search over the step-wise decisions: the brute force that checks the CP-SAT
oracle on tiny generated instances.

At every event time it tries every legal ``send`` and ``start`` and ``wait``
(:class:`~.sim.Kitchen`), and scores each finished afternoon with the independent checker. A
branch whose lower bound (:func:`lower_bound`) exceeds the best cost found is cut.
Every optimal plan can be left-shifted until each task starts when its cook, its
predecessors and the kitchen allow, and each car leaves as soon as it is free, so the optimum
is among these decisions. Exponential: for a handful of tasks and travellers only.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.heuristics import chain_lengths
from crab_gym.envs.realm.thanksgiving.model import ThanksgivingInstance, dinner_cost
from crab_gym.envs.realm.thanksgiving.sim import Kitchen

#: Search nodes after which the search gives up (it is meant for tiny instances).
MAX_NODES = 2_000_000


def brute_force(inst: ThanksgivingInstance, delays: Any = ()) -> tuple[float | None, dict[str, Any] | None]:
    """``(optimal cost, its plan)`` over every step-wise play, flights landing as ``delays``
    say (known from the start); ``(None, None)`` if no play meets every constraint (the
    deadline is soft: a late play counts, at its cost)."""
    landings = landings_of(inst, delays)
    chains = chain_lengths(inst)
    best: list[Any] = [None, None]
    seen: set[tuple] = set()
    nodes = [0]

    def key(k: Kitchen) -> tuple:
        trips = tuple(sorted((t.car, t.depart, tuple(sorted(t.members))) for t in k.trips))
        cooked = tuple(sorted((c.task, c.cook, c.start) for c in k.cooked.values()))
        return k.now, trips, cooked

    def visit(k: Kitchen) -> None:
        nodes[0] += 1
        if nodes[0] > MAX_NODES:
            raise RuntimeError(f"brute force exceeded {MAX_NODES} nodes: the instance is too large")
        state = key(k)
        if state in seen:
            return
        seen.add(state)
        if best[0] is not None and lower_bound(k, chains) > best[0] + 1e-9:
            return
        if k.complete:
            plan = k.plan()
            verdict = check_plan(inst, plan, landings)
            if verdict.feasible and (best[0] is None or verdict.cost < best[0] - 1e-9):
                best[0], best[1] = verdict.cost, plan
            return
        for car in inst.car_ids:
            for member in inst.travellers:
                if k.why_not_send(car, member) is None:
                    nxt = k.copy()
                    nxt.send(car, member)
                    visit(nxt)
        for task in inst.task_ids:
            for cook in inst.skilled(task):
                if k.why_not_start(task, cook) is None:
                    nxt = k.copy()
                    nxt.start(task, cook)
                    visit(nxt)
        if k.can_wait():
            nxt = k.copy()
            nxt.wait()
            visit(nxt)

    visit(Kitchen.start_of(inst, list(delays)))
    return best[0], best[1]


def lower_bound(k: Kitchen, chains: dict[str, int]) -> float:
    """A cost no play from ``k`` can beat: dinner is ready no earlier than any started task's
    end, nor than now plus the chain (duration and successors) of any task not started;
    dinner is served no earlier than the trips under way bring their passengers home; the
    driving done so far stays."""
    inst = k.inst
    ready = max([c.end for c in k.cooked.values()] + [k.now + chains[t] for t in inst.task_ids if t not in k.cooked])
    served = max([ready] + [t.home for t in k.trips])
    return dinner_cost(inst, ready, served, k.driving)
