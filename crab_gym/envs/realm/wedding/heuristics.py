"""A greedy heuristic for P5/P8: each free vehicle takes the legal stop it can begin soonest.

Rules, in order, for the vehicle that acts: the legal guest or errand whose service can begin
soonest (ties: the nearer one; the mask already keeps a seat free and everything on board in
time for the photo); otherwise unload at the venue if it carries anything; otherwise wait for
the next event if something is still to do; otherwise end the route. It never looks ahead,
so it does not foresee disruptions either.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.policy_fit import EnvFit
from crab_gym.envs.realm.wedding.sim import WAITING, WeddingSim

#: The env :func:`greedy_action` reads (checked once per env class).
FIT = EnvFit(
    "wedding.heuristics.greedy_action",
    "crab_gym.envs.realm.wedding.env.WeddingEnv",
    ("Realm-P5-v0", "Realm-P8-v0"),
)


def greedy_choice(sim: WeddingSim, v: int) -> tuple[str, int | None]:
    """``("drive", stop)``, ``("wait", None)`` or ``("finish", None)`` for vehicle ``v``."""
    veh = sim.vehicles[v]
    legal = [s for s in sim.legal_stops(v) if s != sim.N]
    m = sim.matrix(veh.free)
    if legal:
        best = min(legal, key=lambda s: (sim.timing(v, s, m)[1], int(m[veh.loc, sim.place[s]]), s))
        return "drive", best
    if not veh.empty:
        return "drive", sim.N
    if any(st == WAITING for st in sim.status) and sim.next_event(v) is not None:
        return "wait", None
    return "finish", None


def greedy_step(sim: WeddingSim) -> None:
    """One greedy move of the first vehicle that acts."""
    v = sim.acting()[0]
    kind, stop = greedy_choice(sim, v)
    if kind == "drive":
        sim.drive(v, stop)
    elif kind == "wait":
        sim.wait(v)
    else:
        sim.finish(v)


def run_greedy(sim: WeddingSim) -> WeddingSim:
    """Drive ``sim`` to the end greedily (disruptions apply as the clock reaches them)."""
    while True:
        sim.advance()
        if sim.done:
            return sim
        greedy_step(sim)


def greedy_completion(sim: WeddingSim) -> dict[int, list[int]]:
    """The stops the greedy policy would take from this state, as a plan (per vehicle index),
    simulated on a copy that knows only the disruptions already applied."""
    trial = sim.copy()
    trial.pending = []
    start = [len(v.route) for v in trial.vehicles]
    run_greedy(trial)
    return {k: [x.stop for x in v.route[start[k]:]] for k, v in enumerate(trial.vehicles) if not sim.vehicles[k].finished}


def greedy_action(env: Any) -> dict[str, Any]:
    """The greedy move in a Realm-P5/P8 env, as a tool call (for the CLI's policy registry)."""
    base = FIT.check(env)
    sim = base.sim
    v = sim.acting()[0]
    kind, stop = greedy_choice(sim, v)
    vid = base.vehicle_ids[v]
    if kind == "drive":
        return {"name": "drive", "arguments": {"vehicle": vid, "stop": base.stop_names[stop]}}
    return {"name": kind, "arguments": {"vehicle": vid}}
