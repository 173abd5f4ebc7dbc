"""Drawing P5/P8 states: a map-like ``rgb_array`` frame and ``ansi`` text.

Generated instances carry map positions; upstream files only give travel times, so their
places are laid out by classical multidimensional scaling of the travel-time matrix.
"""

from __future__ import annotations

import numpy as np

from crab_gym.envs.canvas import Canvas, LabelPlacer, abbreviate, colour
from crab_gym.envs.realm.common.fleet.render import draw_route, draw_vehicles, fit_layout, fleet_viewer, tag_vehicles
from crab_gym.envs.realm.wedding.model import WeddingInstance
from crab_gym.envs.realm.wedding.sim import DELIVERED, ONBOARD, WAITING, WeddingSim, hhmm

WIDTH, HEIGHT, MARGIN = 640, 420, 28
HEAD, FOOT = 30, 16
INK, PLACE, BG, ROAD = (30, 30, 30), (150, 150, 150), (245, 245, 240), (222, 222, 212)
CLOSED, SLOWED = (220, 40, 40), (250, 170, 160)
GUEST, ERRAND, VENUE = (20, 20, 20), (20, 20, 20), (150, 60, 170)


def layout(instance: WeddingInstance) -> np.ndarray:
    """Place positions scaled into the map area of the frame (pixels), shape (n, 2)."""
    side, top, bottom = MARGIN + 30, HEAD + MARGIN, MARGIN + FOOT
    return fit_layout(instance.coords, np.minimum(instance.travel, 10_000), WIDTH, HEIGHT, side, top, bottom)


def render_image(instance: WeddingInstance, sim: WeddingSim, pos: np.ndarray, active: list | None = None) -> np.ndarray:
    """Roads (light), disrupted roads (red: closed, pink: slower), each vehicle's route so far
    (its colour), places still to visit (black ring: a guest waits, black square: an errand), the
    venue (purple), vehicles (discs tagged with their ids), a header and a key."""
    c = Canvas(WIDTH, HEIGHT, background=BG)
    labels = LabelPlacer(c)
    for i, j in sim.net.roads():
        c.line(*pos[i], *pos[j], ROAD, width=1)
    notes = []
    for d in active or []:
        pair = d.pair(instance.places)
        if pair is None:
            continue
        closed = d.type == "road_closure"
        c.line(*pos[pair[0]], *pos[pair[1]], CLOSED if closed else SLOWED, width=3 if closed else 7)
        (x0, y0), (x1, y1) = pos[pair[0]], pos[pair[1]]
        notes.append(((x0 + x1) / 2, (y0 + y1) / 2, "closed" if closed else f"+{d.delay} min"))
    for k, veh in enumerate(sim.vehicles):
        places = [instance.index[instance.vehicles[k].place]] + [int(sim.place[x.stop]) for x in veh.route]
        if veh.finished and places[-1] != sim.venue:
            places.append(sim.venue)
        draw_route(c, pos, k, places)
    guests = {int(sim.place[s]) for s in range(sim.G) if sim.status[s] == WAITING}
    errands = {int(sim.place[s]) for s in range(sim.G, sim.N) if sim.status[s] == WAITING}
    for i, (x, y) in enumerate(pos):
        if i in errands:
            c.rect(x - 6, y - 6, x + 6, y + 6, ERRAND)
        c.disc(x, y, 8 if i == sim.venue else 5, VENUE if i == sim.venue else PLACE)
        if i in guests:
            c.disc(x, y, 8, GUEST)
            c.disc(x, y, 5, BG)
            c.disc(x, y, 3, PLACE)
        labels.block(x - 8, y - 8, x + 9, y + 9)
    spots = draw_vehicles(c, labels, pos, sim.vehicles, 4)
    _header(c, instance, sim, active)
    tag_vehicles(labels, spots, [v.vehicle_id for v in instance.vehicles])
    for x, y, tag in notes:
        labels.place(x, y, tag, CLOSED, gap=4, background=BG)
    for i, name in enumerate(instance.places):
        label = instance.labels.get(name, name) if len(name) <= 2 else name
        labels.place(pos[i][0], pos[i][1], abbreviate(label, 14), (70, 70, 70), gap=9, background=BG)
    return c.image()


def _header(c: Canvas, instance: WeddingInstance, sim: WeddingSim, active: list | None) -> None:
    clock = sim.clock
    line = (f"clock {hhmm(clock) if clock is not None else 'done'}  at venue {sim.served()}/{sim.N}  "
            f"photo {hhmm(instance.photo_time)}  driven {sim.travel_minutes()} min")
    if hasattr(instance, "disruptions"):
        line += f"  disruptions active {len(active or [])}"
    c.text(6, 4, line, INK)
    x, y = 6, 17
    for key, name in (("vehicle", "vehicle, its route"), ("guest", "guest waits"), ("errand", "errand to do"),
                      ("venue", "venue"), ("place", "place")):
        if key == "guest":
            c.disc(x + 3, y + 3, 5, GUEST)
            c.disc(x + 3, y + 3, 3, BG)
        elif key == "errand":
            c.rect(x - 1, y - 1, x + 7, y + 7, ERRAND)
        else:
            c.disc(x + 3, y + 3, 4, {"vehicle": colour(0), "venue": VENUE, "place": PLACE}[key])
        c.text(x + 12, y, name, INK)
        x += 12 + c.text_width(name) + 14
    if hasattr(instance, "disruptions"):
        for rgb, name in ((CLOSED, "closed road"), (SLOWED, "slow road")):
            c.line(x - 1, y + 3, x + 9, y + 3, rgb, width=3)
            c.text(x + 14, y, name, INK)
            x += 14 + c.text_width(name) + 14
    c.line(0, HEAD - 2, WIDTH, HEAD - 2, (215, 215, 205))


def render_text(instance: WeddingInstance, sim: WeddingSim, active: list | None = None) -> str:
    """A readable summary of the state, for ``render_mode="ansi"`` and LLM prompts."""
    clock = sim.clock
    lines = [f"{instance.name}: clock {hhmm(clock) if clock is not None else 'done'}; photo at "
             f"{hhmm(instance.photo_time)}, deadline {hhmm(instance.deadline)}; at the venue {sim.served()}/{sim.N}; "
             f"driven {sim.travel_minutes()} min"]
    names = instance.stop_names()
    for k, veh in enumerate(sim.vehicles):
        v = instance.vehicles[k]
        state = f"ended {hhmm(veh.end_time)}" if veh.finished else f"free at {hhmm(veh.free)}"
        route = " > ".join(names[x.stop] for x in veh.route) or "-"
        lines.append(f"  {v.vehicle_id} at {instance.places[veh.loc]}, {state}, guests {len(veh.guests)}/{veh.capacity}"
                     f", goods {len(veh.goods)}: {route}")
    tag = {WAITING: "to do", ONBOARD: "on board", DELIVERED: "at the venue"}
    for s, g in enumerate(instance.guests):
        lines.append(f"  guest {g.guest_id}: lands {hhmm(g.arrival)} at {g.place}: {tag[sim.status[s]]}")
    for e, er in enumerate(instance.errands):
        s = instance.n_guests + e
        lines.append(f"  errand {er.errand_id}: {er.shop} {hhmm(er.opens)}-{hhmm(er.closes)}, {er.service} min: "
                     f"{tag[sim.status[s]]}")
    for d in active or []:
        lines.append(f"  DISRUPTION {d.describe()}")
    return "\n".join(lines)


#: The env's default viewer (``render()``, ``describe()``).
VIEWER = fleet_viewer(render_text, render_image)
