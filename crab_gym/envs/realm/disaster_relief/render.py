"""Pictures of a P7 state: the ``ansi`` text and the ``rgb_array`` map.

The map: the base (black square), each region as a disc sized by its need and coloured by
its coverage (red: nothing yet, amber: partly, green: every need met), ringed in its
severity's colour; trips as lines from the base in their vehicle's colour (dashed while under
way); a weather-blocked region crossed out in blue. A header states the clock and the stock;
a key explains the marks. Drawn with :mod:`crab_gym.envs.canvas` (no plotting library).
"""

from __future__ import annotations

import numpy as np

from crab_gym.envs.canvas import Canvas, LabelPlacer, colour
from crab_gym.envs.realm.common.env import hhmm
from crab_gym.envs.realm.common.viewer import StateViewer
from crab_gym.envs.realm.disaster_relief.model import RESOURCES, P7Instance
from crab_gym.envs.realm.disaster_relief.sim import ReliefSim

WIDTH, HEIGHT, MARGIN, HEAD, FOOT = 640, 480, 40, 44, 40
INK, BG, BLOCK = (30, 30, 30), (244, 244, 238), (40, 90, 220)
SEVERITY_INK = {"critical": (200, 0, 0), "urgent": (230, 130, 0), "normal": (120, 120, 120)}
SHORT = {"medical_supplies": "med", "food": "food", "water": "water", "shelter": "shelter"}


def when(minute: int) -> str:
    """``HH:MM``, with ``+1d`` for a minute on the next day."""
    days, rest = divmod(int(minute), 24 * 60)
    return hhmm(rest) + (f"+{days}d" if days else "")


def coverage(sim: ReliefSim, r: int) -> float:
    """Share of region ``r``'s need that has arrived (on time or late)."""
    needs = sim.inst.regions[r].needs
    total = sum(needs.values())
    got = sum(min(q, sim.on_time[r][k] + sim.late[r][k]) for k, q in needs.items())
    return got / total if total else 1.0


def render_text(inst: P7Instance, sim: ReliefSim, active: list) -> str:
    """The ``ansi`` frame: clock, stock, vehicles, each region's need and what arrived."""
    stock = ", ".join(f"{SHORT[k]} {sim.stock[k]}" for k in RESOURCES)
    lines = [f"{inst.name}: {when(sim.now)} | horizon {when(inst.horizon)} | base stock: {stock}"]
    for v, veh in enumerate(inst.vehicles):
        s = sim.vehicles[v]
        where = "stood down" if s.retired else ("at base" if s.free_at <= sim.now else f"away until {when(s.free_at)}")
        lines.append(f"  {veh.id} ({veh.type}, {veh.capacity} units, {veh.speed_kmh:g} km/h): {where}, {s.trips} trips")
    blocked = {d.region for d in active}
    for r, reg in enumerate(inst.regions):
        parts = [f"{SHORT[k]} {sim.on_time[r][k]}+{sim.late[r][k]} late/{q}" for k, q in reg.needs.items()]
        flag = " BLOCKED" if reg.id in blocked else ""
        lines.append(f"  {reg.id} [{reg.severity}, by {when(reg.deadline)}]{flag}: " + ", ".join(parts))
    return "\n".join(lines) + "\n"


def _positions(inst: P7Instance) -> tuple[np.ndarray, np.ndarray]:
    """Pixel positions of the regions and of the base (north up, equal scale on both axes)."""
    pts = np.array([[r.x, r.y] for r in inst.regions] + [list(inst.base)], dtype=float)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = np.maximum(hi - lo, 1e-9)
    w, h = WIDTH - 2 * MARGIN - 60, HEIGHT - HEAD - FOOT - 2 * MARGIN
    scale = min(w / span[0], h / span[1])
    off = np.array([MARGIN + 30 + (w - span[0] * scale) / 2, HEAD + MARGIN + (h - span[1] * scale) / 2])
    px = np.column_stack([off[0] + (pts[:, 0] - lo[0]) * scale, off[1] + (hi[1] - pts[:, 1]) * scale])
    return px[:-1], px[-1]


def render_image(inst: P7Instance, sim: ReliefSim, active: list) -> np.ndarray:
    c = Canvas(WIDTH, HEIGHT, background=BG)
    labels = LabelPlacer(c)
    regions, base = _positions(inst)
    for trip in sim.trips:  # trips, faint when done, dashed while under way
        x, y = regions[trip.region]
        rgb = colour(trip.vehicle)
        if trip.back <= sim.now:
            c.line(base[0], base[1], x, y, tuple(int(0.55 * a + 0.45 * 244) for a in rgb), width=2)
        else:
            for a in np.arange(0.0, 1.0, 0.1):
                b = min(a + 0.06, 1.0)
                c.line(base[0] + a * (x - base[0]), base[1] + a * (y - base[1]),
                       base[0] + b * (x - base[0]), base[1] + b * (y - base[1]), rgb, width=3)
    biggest = max(sum(r.needs.values()) for r in inst.regions)
    blocked = {d.region for d in active}
    for r, reg in enumerate(inst.regions):
        x, y = regions[r]
        radius = 6 + 14 * np.sqrt(sum(reg.needs.values()) / biggest)
        share = coverage(sim, r)
        fill = (210, 40, 40) if share <= 0 else ((0, 160, 80) if share >= 1 else (240, 180, 0))
        c.disc(x, y, radius + 3, SEVERITY_INK[reg.severity])
        c.disc(x, y, radius, fill)
        labels.block(x - radius - 3, y - radius - 3, x + radius + 3, y + radius + 3)
        if reg.id in blocked:
            for d in (-1, 0, 1):
                c.line(x - radius - 4, y - radius - 4 + d, x + radius + 4, y + radius + 4 + d, BLOCK, width=2)
                c.line(x - radius - 4, y + radius + 4 + d, x + radius + 4, y - radius - 4 + d, BLOCK, width=2)
    c.rect(base[0] - 7, base[1] - 7, base[0] + 8, base[1] + 8, INK)
    labels.block(base[0] - 7, base[1] - 7, base[0] + 8, base[1] + 8)
    labels.place(base[0], base[1], "BASE", INK, gap=10, background=BG)
    for r, reg in enumerate(inst.regions):
        tag = f"{reg.id.upper()} {coverage(sim, r):.0%}" + (" BLOCKED" if reg.id in blocked else "")
        labels.place(regions[r][0], regions[r][1], tag, INK, gap=22, background=BG)
    # header: clock and stock; key
    stock = "  ".join(f"{SHORT[k]} {sim.stock[k]}" for k in RESOURCES)
    c.text(6, 4, f"{inst.name}  {when(sim.now)}  stock: {stock}", INK)
    kx, ky = 6, 18
    for mark, name, ring in (((210, 40, 40), "no relief", False), ((240, 180, 0), "part", False),
                             ((0, 160, 80), "met", False), (SEVERITY_INK["critical"], "ring: critical", True),
                             (SEVERITY_INK["urgent"], "urgent", True), (SEVERITY_INK["normal"], "normal", True),
                             (BLOCK, "X: weather block", False)):
        c.disc(kx + 4, ky + 3, 5, mark)
        if ring:
            c.disc(kx + 4, ky + 3, 3, BG)
        c.text(kx + 12, ky, name, INK)
        kx += 12 + c.text_width(name) + 12
    c.line(0, HEAD - 6, WIDTH, HEAD - 6, (200, 200, 190))
    # footer: vehicles in their colours
    fx, fy = 6, HEIGHT - FOOT + 8
    for v, veh in enumerate(inst.vehicles):
        s = sim.vehicles[v]
        state = "done" if s.retired else ("base" if s.free_at <= sim.now else f"back {when(s.free_at)}")
        tag = f"{veh.id}: {s.trips} trips, {state}"
        if fx + 12 + c.text_width(tag) > WIDTH - 6:
            fx, fy = 6, fy + 12
        c.rect(fx, fy, fx + 8, fy + 8, colour(v))
        c.text(fx + 12, fy + 1, tag, INK)
        fx += 12 + c.text_width(tag) + 14
    return c.image()


#: The env's default viewer (``render()``, ``describe()``): the relief so far and the disruptions in force.
VIEWER = StateViewer(render_text, render_image, state=lambda env: (env.sim, env._active_disruptions()))
