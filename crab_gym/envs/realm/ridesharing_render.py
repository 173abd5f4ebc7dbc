"""Drawing P3/P4 states: a map-like ``rgb_array`` frame (numpy canvas) and ``ansi`` text.

Generated instances carry map positions; upstream files only give travel times, so their
places are laid out by classical multidimensional scaling of the travel-time matrix.
"""

from __future__ import annotations

import numpy as np

from crab_gym.datasets.realm.p3 import P3Instance
from crab_gym.envs.canvas import Canvas, colour
from crab_gym.envs.realm.common import classical_mds
from crab_gym.envs.realm.ridesharing_sim import DELIVERED, ONBOARD, WAITING, RideSim, _hhmm

WIDTH, HEIGHT, MARGIN = 480, 360, 24


def layout(instance: P3Instance) -> np.ndarray:
    """Place positions scaled into the frame (pixels), shape (n, 2)."""
    if instance.coords is not None:
        xy = np.asarray(instance.coords, dtype=float)
    else:
        xy = classical_mds(instance.travel, floor=1e-9)
        xy = xy * np.where(xy[np.argmax(np.abs(xy), axis=0), [0, 1]] < 0, -1.0, 1.0)  # fixed orientation
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    span = np.where(hi - lo > 1e-9, hi - lo, 1.0)
    unit = (xy - lo) / span
    return np.column_stack(
        [MARGIN + unit[:, 0] * (WIDTH - 2 * MARGIN), HEIGHT - MARGIN - unit[:, 1] * (HEIGHT - 2 * MARGIN)]
    )


def draw(instance: P3Instance, sim: RideSim, pos: np.ndarray, active: list | None = None) -> np.ndarray:
    """The current state: places (grey), disrupted roads (red), each vehicle's route so far
    (its colour), waiting pickups (green), vehicles (large discs)."""
    c = Canvas(WIDTH, HEIGHT, background=(245, 245, 240))
    for d in active or []:
        for i, j in d.roads(instance.index, instance.locations):
            c.line(*pos[i], *pos[j], (220, 40, 40), width=3)
    for k, veh in enumerate(sim.vehicles):
        here = instance.index[instance.vehicles[k].location]
        for visit in veh.route:
            nxt = sim.stop_loc(visit.stop)
            c.line(*pos[here], *pos[nxt], colour(k), width=2)
            here = nxt
    for x, y in pos:
        c.disc(x, y, 5, (150, 150, 150))
    for r, st in enumerate(sim.status):
        if st == WAITING:
            c.disc(*pos[sim.pick_loc[r]], 3, (0, 170, 60))
    for k, veh in enumerate(sim.vehicles):
        x, y = pos[veh.loc]
        c.disc(x + 3 * (k % 3) - 3, y + 3 * (k // 3) - 3, 7 if not veh.parked else 4, colour(k))
    return c.image()


def text(instance: P3Instance, sim: RideSim, active: list | None = None) -> str:
    """A readable summary of the state, for ``render_mode="ansi"`` and LLM prompts."""
    clock = sim.clock
    lines = [f"{instance.name}: clock {_hhmm(clock) if clock is not None else 'done'}; "
             f"served {sim.served()}/{sim.R}; travel {sim.travel_minutes()} min"]
    names = instance.stop_names()
    for k, veh in enumerate(sim.vehicles):
        v = instance.vehicles[k]
        state = "parked" if veh.parked else f"free at {_hhmm(veh.free)}"
        route = " > ".join(names[x.stop] for x in veh.route) or "-"
        lines.append(
            f"  {v.vehicle_id} at {instance.locations[veh.loc]}, {state}, load {veh.load}/{veh.capacity}: {route}"
        )
    tag = {WAITING: "waiting", ONBOARD: "on board", DELIVERED: "delivered"}
    for r, req in enumerate(instance.requests):
        lo, hi = req.pickup_window
        lines.append(
            f"  {req.passenger_id}: {req.pickup} -> {req.dropoff}, pickup {_hhmm(lo)}-{_hhmm(hi)}, "
            f"dropoff by {_hhmm(req.latest_dropoff)}: {tag[sim.status[r]]}"
        )
    for d in active or []:
        lines.append(f"  DISRUPTION {d.describe()}")
    if sim.violations:
        lines.append("  violations: " + "; ".join(sim.violations))
    return "\n".join(lines)
