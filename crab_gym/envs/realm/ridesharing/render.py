"""Drawing P3/P4 states: a map-like ``rgb_array`` frame (numpy canvas) and ``ansi`` text.

Generated instances carry map positions; upstream files only give travel times, so their
places are laid out by classical multidimensional scaling of the travel-time matrix.
"""

from __future__ import annotations

import numpy as np

from crab_gym.envs.canvas import Canvas, LabelPlacer, abbreviate, colour
from crab_gym.envs.realm.common.fleet.render import draw_route, draw_vehicles, fit_layout, fleet_viewer, tag_vehicles
from crab_gym.envs.realm.ridesharing.model import P3Instance
from crab_gym.envs.realm.ridesharing.sim import DELIVERED, ONBOARD, WAITING, RideSim, hhmm

WIDTH, HEIGHT, MARGIN = 480, 360, 24
#: room for the header (state + key) above the map, and for the P4 disruption key below it
HEAD, FOOT = 30, 14
INK, PLACE, BG = (30, 30, 30), (150, 150, 150), (245, 245, 240)
CLOSED, SLOWED = (220, 40, 40), (250, 170, 160)
PICKUP = (0, 170, 60)


def layout(instance: P3Instance) -> np.ndarray:
    """Place positions scaled into the map area of the frame (pixels), shape (n, 2)."""
    side, top, bottom = MARGIN + 16, HEAD + MARGIN - 8, MARGIN + (FOOT if hasattr(instance, "disruptions") else 0)
    return fit_layout(instance.coords, instance.travel, WIDTH, HEIGHT, side, top, bottom)


def _is_closure(d: object) -> bool:
    return getattr(d, "type", "") == "road_closure"


def _draw_disruptions(c: Canvas, instance: P3Instance, pos: np.ndarray, active: list | None) -> list:
    """Disrupted roads (light red: slower; red: closed; red ring: accident); returns their labels."""
    notes: list[tuple[float, float, str, tuple[int, int, int]]] = []
    for d in active or []:
        closed = _is_closure(d)
        roads = d.roads(instance.index, instance.locations)
        for i, j in roads:
            if i < j or (j, i) not in roads:
                c.line(*pos[i], *pos[j], CLOSED if closed else SLOWED, width=3 if closed else 7)
        if getattr(d, "type", "") == "accident":
            x, y = pos[instance.index[d.location]]
            c.disc(x, y, 11, CLOSED)
            c.disc(x, y, 8, BG)
            notes.append((x, y, f"accident +{d.delay} min", CLOSED))
        elif roads:
            (x0, y0), (x1, y1) = pos[roads[0][0]], pos[roads[0][1]]
            tag = "closed" if closed else f"+{getattr(d, 'delay', 0)} min"
            notes.append(((x0 + x1) / 2, (y0 + y1) / 2, tag, CLOSED))
    return notes


def render_image(instance: P3Instance, sim: RideSim, pos: np.ndarray, active: list | None = None) -> np.ndarray:
    """The current state: places (grey, named), disrupted roads (light red: slower; red:
    closed; red ring: accident), each vehicle's route so far (its colour), waiting pickups
    (small green), vehicles (large discs tagged with their ids), a header and a key."""
    c = Canvas(WIDTH, HEIGHT, background=BG)
    labels = LabelPlacer(c)
    notes = _draw_disruptions(c, instance, pos, active)
    for k, veh in enumerate(sim.vehicles):
        start = instance.index[instance.vehicles[k].location]
        draw_route(c, pos, k, [start] + [sim.stop_loc(visit.stop) for visit in veh.route])
    for x, y in pos:
        c.disc(x, y, 5, PLACE)
        labels.block(x - 6, y - 6, x + 7, y + 7)
    for r, st in enumerate(sim.status):
        if st == WAITING:
            c.disc(*pos[sim.pick_loc[r]], 3, PICKUP)
    spots = draw_vehicles(c, labels, pos, sim.vehicles, 3)
    _header(c, instance, sim, active)
    if hasattr(instance, "disruptions"):
        _disruption_key(c)
    # labels: vehicle tags first (most important), then disruptions, then place names
    tag_vehicles(labels, spots, [v.vehicle_id for v in instance.vehicles])
    for x, y, tag, rgb in notes:
        labels.place(x, y, tag, rgb, gap=4, background=BG)
    for i, name in enumerate(instance.locations):
        labels.place(pos[i][0], pos[i][1], abbreviate(name, 10), (70, 70, 70), gap=8, background=BG)
    return c.image()


def _header(c: Canvas, instance: P3Instance, sim: RideSim, active: list | None) -> None:
    clock = sim.clock
    line = (f"clock {hhmm(clock) if clock is not None else 'done'}  served {sim.served()}/{sim.R}  "
            f"travel {sim.travel_minutes()} min")
    if hasattr(instance, "disruptions"):
        line += f"  disruptions {len(active or [])} active"
    c.text(6, 4, line, INK)
    x, y = 6, 17
    for key, name in (("veh", "vehicle (id)"), ("route", "its route"), ("pick", "waiting pickup"), ("place", "place")):
        if key == "veh":
            c.disc(x + 3, y + 3, 4, colour(0))
        elif key == "route":
            c.line(x - 2, y + 3, x + 8, y + 3, colour(0), width=2)
        else:
            c.disc(x + 3, y + 3, 3, PICKUP if key == "pick" else PLACE)
        c.text(x + 12, y, name, INK)
        x += 12 + c.text_width(name) + 12
    c.line(0, HEAD - 2, WIDTH, HEAD - 2, (215, 215, 205))


def _disruption_key(c: Canvas) -> None:
    """What the disruption marks mean (P4)."""
    y = HEIGHT - FOOT + 2
    c.line(0, y - 4, WIDTH, y - 4, (215, 215, 205))
    x = 6
    for key, name in (("slow", "slower road (delay, works)"), ("closed", "closed road"), ("acc", "accident")):
        if key == "acc":
            c.disc(x + 4, y + 3, 5, CLOSED)
            c.disc(x + 4, y + 3, 3, BG)
        else:
            c.line(x - 1, y + 3, x + 9, y + 3, SLOWED if key == "slow" else CLOSED, width=5 if key == "slow" else 3)
        c.text(x + 14, y, name, INK)
        x += 14 + c.text_width(name) + 14


def render_text(instance: P3Instance, sim: RideSim, active: list | None = None) -> str:
    """A readable summary of the state, for ``render_mode="ansi"`` and LLM prompts."""
    clock = sim.clock
    lines = [f"{instance.name}: clock {hhmm(clock) if clock is not None else 'done'}; "
             f"served {sim.served()}/{sim.R}; travel {sim.travel_minutes()} min"]
    names = instance.stop_names()
    for k, veh in enumerate(sim.vehicles):
        v = instance.vehicles[k]
        state = "parked" if veh.parked else f"free at {hhmm(veh.free)}"
        route = " > ".join(names[x.stop] for x in veh.route) or "-"
        lines.append(
            f"  {v.vehicle_id} at {instance.locations[veh.loc]}, {state}, load {veh.load}/{veh.capacity}: {route}"
        )
    tag = {WAITING: "waiting", ONBOARD: "on board", DELIVERED: "delivered"}
    for r, req in enumerate(instance.requests):
        lo, hi = req.pickup_window
        lines.append(
            f"  {req.passenger_id}: {req.pickup} -> {req.dropoff}, pickup {hhmm(lo)}-{hhmm(hi)}, "
            f"dropoff by {hhmm(req.latest_dropoff)}: {tag[sim.status[r]]}"
        )
    for d in active or []:
        lines.append(f"  DISRUPTION {d.describe()}")
    if sim.violations:
        lines.append("  violations: " + "; ".join(sim.violations))
    return "\n".join(lines)


#: The env's default viewer (``render()``, ``describe()``).
VIEWER = fleet_viewer(render_text, render_image)
