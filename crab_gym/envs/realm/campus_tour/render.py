"""Pictures of a P1 tour: the ``ansi`` text and the ``rgb_array`` campus map.

Pure functions of the instance and the :class:`~.sim.Tour`, drawn with numpy through
:mod:`crab_gym.envs.canvas` (no plotting library).
"""

from __future__ import annotations

import numpy as np

from crab_gym.envs.canvas import Canvas, LabelPlacer, abbreviate
from crab_gym.envs.realm.campus_tour.model import P1Instance
from crab_gym.envs.realm.campus_tour.sim import Tour
from crab_gym.envs.realm.common.env import classical_mds, hhmm
from crab_gym.envs.realm.common.viewer import StateViewer


def render_text(inst: P1Instance, t: Tour) -> str:
    """The ``ansi`` frame: the state in one line, the route so far, what is left to visit."""
    names = inst.locations
    budget = "no limit" if inst.max_travel is None else f"{inst.max_travel}"
    lines = [
        f"{inst.name}: {len(inst.targets)} locations | at {names[t.pos]} {hhmm(t.clock)} | "
        f"walked {t.walked}/{budget} min | on time {t.targets_on_time}/{len(inst.targets)}"
    ]
    legs = [f"{names[i]}@{hhmm(a)}" for i, a in zip(t.route, t.arrivals)]
    lines.append("route: " + " -> ".join(legs))
    todo = [
        f"{names[j]} [{hhmm(inst.windows[j][0])}-{hhmm(inst.windows[j][1])}]"
        for j in range(inst.n)
        if t.target_mask[j] and not t.visited[j]
    ]
    lines.append("to visit: " + (", ".join(todo) if todo else "none"))
    return "\n".join(lines) + "\n"


def positions(inst: P1Instance) -> np.ndarray:
    """Map points: the instance's coordinates, else a 2-D embedding of its travel times."""
    if inst.coords is not None:
        return np.asarray(inst.coords, dtype=np.float64)
    return classical_mds(inst.travel)


# The frame's size and layout (pixels) and its colours.
WIDTH, HEIGHT, PAD, HEAD, STRIP = 640, 480, 30, 30, 50
INK, BG = (30, 30, 30), (236, 244, 230)
GREY, GREEN, ORANGE, BLUE = (150, 150, 150), (0, 158, 115), (213, 94, 0), (0, 90, 200)


def render_image(inst: P1Instance, t: Tour) -> np.ndarray:
    """The ``rgb_array`` frame: the campus map with the route, a key, the day and the walk budget."""
    canvas = Canvas(WIDTH, HEIGHT, background=BG)
    _draw_map(canvas, inst, t, _pixels(inst))
    _draw_header(canvas, inst, t)
    left, right = PAD + 34, WIDTH - PAD - 36
    y0 = HEIGHT - STRIP + 10
    _draw_day(canvas, inst, t, left, right, y0)
    _draw_walk(canvas, inst, t, left, right, y0 + 20)
    return canvas.image()


def _pixels(inst: P1Instance) -> np.ndarray:
    """The locations' map points scaled into the frame between header and strip, north up."""
    xy = positions(inst)
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    span = np.maximum(hi - lo, 1e-9)
    scale = min((WIDTH - 2 * PAD - 60) / span[0], (HEIGHT - HEAD - STRIP - 2 * PAD) / span[1])
    px = PAD + 30 + (xy - lo) * scale
    px[:, 1] = HEIGHT - STRIP - PAD - (xy[:, 1] - lo[1]) * scale  # north up
    return px


def _draw_map(canvas: Canvas, inst: P1Instance, t: Tour, px: np.ndarray) -> None:
    """The route, a mark a location (square: start/end; colour: on time, late, not yet), names."""
    for a, b in zip(t.route, t.route[1:]):
        canvas.line(px[a, 0], px[a, 1], px[b, 0], px[b, 1], BLUE, width=3)
    labels = LabelPlacer(canvas)
    for j in range(inst.n):
        x, y = px[j]
        labels.block(x - 7, y - 7, x + 8, y + 8)
        if j in (t.s, t.e):
            canvas.rect(x - 7, y - 7, x + 8, y + 8, INK)
            continue
        if not t.visited[j]:
            fill = GREY
        else:
            fill = GREEN if t.on_time[j] else ORANGE
        canvas.disc(x, y, 6, fill)
    x, y = px[t.pos]
    canvas.outline(x - 10, y - 10, x + 10, y + 10, (200, 0, 0))
    for j in range(inst.n):  # names beside the marks, on a background patch over lines
        labels.place(px[j, 0], px[j, 1], abbreviate(inst.locations[j], 11), INK if t.visited[j] else (90, 90, 90),
                     gap=10, background=BG)


def _draw_header(canvas: Canvas, inst: P1Instance, t: Tour) -> None:
    """The header: the state in words, then a key to the marks."""
    n_targets = int(t.target_mask.sum())
    budget = f"/{inst.max_travel}" if inst.max_travel is not None else ""
    canvas.text(6, 4, f"clock {hhmm(t.clock)}  walked {t.walked}{budget} min  "
                      f"visited {int((t.visited & t.target_mask).sum())}/{n_targets}  on time {t.targets_on_time}", INK)
    kx, ky = 6, 17
    for mark, name in (("square", "start/end"), (GREEN, "on time"), (ORANGE, "late"), (GREY, "not yet"),
                       ("here", "here"), ("route", "route")):
        if mark == "square":
            canvas.rect(kx, ky, kx + 7, ky + 7, INK)
        elif mark == "here":
            canvas.outline(kx - 1, ky - 1, kx + 8, ky + 8, (200, 0, 0))
        elif mark == "route":
            canvas.line(kx - 2, ky + 3, kx + 9, ky + 3, BLUE, width=3)
        else:
            canvas.disc(kx + 3, ky + 3, 4, mark)
        canvas.text(kx + 12, ky, name, INK)
        kx += 12 + canvas.text_width(name) + 14
    canvas.line(0, HEAD - 2, WIDTH, HEAD - 2, (200, 210, 195))


def _draw_day(canvas: Canvas, inst: P1Instance, t: Tour, left: float, right: float, y0: float) -> None:
    """The day from departure to closing, filled up to the clock."""
    day0, day1 = inst.departure, max(inst.windows[t.e][1], inst.departure + 1)
    canvas.text(6, y0 + 4, f"day {hhmm(day0)}", INK)
    canvas.rect(left, y0, right, y0 + 14, (210, 210, 210))
    frac = min(max((t.clock - day0) / (day1 - day0), 0.0), 1.0)
    canvas.rect(left, y0, left + frac * (right - left), y0 + 14, (0, 114, 178))
    now = f"now {hhmm(t.clock)}"
    x_now = left + frac * (right - left)
    if frac * (right - left) > canvas.text_width(now) + 6:  # inside the filled part, else after it
        canvas.text(x_now - 3 - canvas.text_width(now), y0 + 4, now, (255, 255, 255))
    else:
        canvas.text(x_now + 3, y0 + 4, now, INK)
    canvas.text(right + 4, y0 + 4, hhmm(day1), INK)


def _draw_walk(canvas: Canvas, inst: P1Instance, t: Tour, left: float, right: float, y1: float) -> None:
    """The walking budget used (or the minutes walked when there is no limit)."""
    canvas.text(6, y1 + 2, "WALK", INK)
    if inst.max_travel:
        used = min(t.walked / inst.max_travel, 1.0)
        canvas.rect(left, y1 + 1, right, y1 + 10, (225, 225, 215))
        canvas.rect(left, y1 + 1, left + used * (right - left), y1 + 10, (230, 159, 0))
        canvas.text(right + 4, y1 + 2, f"max {inst.max_travel}", INK)
        walked = f"{t.walked} min"
        x_used = left + used * (right - left)
        if used * (right - left) > canvas.text_width(walked) + 6:
            canvas.text(x_used - 3 - canvas.text_width(walked), y1 + 2, walked, INK)
        else:
            canvas.text(x_used + 3, y1 + 2, walked, INK)
    else:
        canvas.text(left, y1 + 2, f"{t.walked} min walked, no limit", INK)


#: The env's default viewer (``render()``, ``describe()``): these two functions of its state.
VIEWER = StateViewer(render_text, render_image, state=lambda env: (env.tour,))
