"""Pictures of a P2 schedule: the ``ansi`` text and the ``rgb_array`` Gantt chart.

Pure functions of the instance and the :class:`~.sim.Schedule`, drawn with numpy through
:mod:`crab_gym.envs.canvas` (no plotting library).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crab_gym.envs.canvas import Canvas, colour, ink_on, short_id
from crab_gym.envs.realm.common.env import hhmm
from crab_gym.envs.realm.common.viewer import StateViewer
from crab_gym.envs.realm.group_tours.model import P2Instance
from crab_gym.envs.realm.group_tours.sim import Schedule


def render_text(inst: P2Instance, s: Schedule) -> str:
    """The ``ansi`` frame: the state in one line, each guide's tours, the groups still waiting."""
    lines = [
        f"{inst.name}: {s.G} groups, {s.K} guides, {s.D}-min tours | assigned "
        f"{int((s.guide_of >= 0).sum())}/{s.G} | waiting {s.waiting} min | imbalance {s.imbalance}"
    ]
    for k, gd in enumerate(inst.guides):
        tours = " ".join(f"{inst.group_ids[g]}@{hhmm(a)}" for a, g in s.tours[k])
        lines.append(
            f"{gd.guide_id} [{hhmm(gd.available_from)}-{hhmm(gd.available_to)}, cap {gd.max_group_size}]: "
            f"{tours or '-'}"
        )
    todo = [
        f"{grp.group_id}({grp.size}, arrives {hhmm(grp.arrival)}, prefers {hhmm(grp.preferred)})"
        for g, grp in enumerate(inst.groups)
        if s.guide_of[g] < 0
    ]
    lines.append("waiting for a guide: " + (", ".join(todo) if todo else "none"))
    return "\n".join(lines) + "\n"


INK, GRID, ORANGE = (30, 30, 30), (225, 225, 225), (213, 94, 0)


@dataclass
class _Chart:
    """Where the Gantt chart lies in the frame, and minutes -> x."""

    width: int
    left: int
    right: int
    top: int
    row: int
    t0: int
    t1: int
    scale: float

    def x(self, t: float) -> float:
        """The x pixel of minute ``t``."""
        return self.left + (t - self.t0) * self.scale


def render_image(inst: P2Instance, s: Schedule) -> np.ndarray:
    """The ``rgb_array`` frame: a Gantt chart, one row per guide (availability, tours, waiting
    past the preferred start), preferred starts as ticks, and a key."""
    names = [gd.guide_id.upper() for gd in inst.guides]
    width, right, head, ticks = 640, 20, 30, 10
    left = max(Canvas.text_width(n) for n in names) + 12
    top = head + ticks
    row = max(14, min(48, 400 // s.K))
    height = top + row * s.K + 22
    canvas = Canvas(width, height, background=(255, 255, 255))
    t0 = min(min(g.arrival for g in inst.groups), min(g.available_from for g in inst.guides))
    t1 = max(inst.horizon, int(s.start.max()) + s.D if (s.start >= 0).any() else 0, t0 + 1)
    t0 -= t0 % 60
    chart = _Chart(width, left, right, top, row, t0, t1, (width - left - right) / max(t1 - t0, 1))
    _draw_key(canvas, s)
    _draw_hours(canvas, chart, s.K)
    for k, name in enumerate(names):
        _draw_guide(canvas, chart, inst, s, k, name)
    for g, grp in enumerate(inst.groups):  # preferred starts as ticks above the rows
        canvas.line(chart.x(grp.preferred), head + 1, chart.x(grp.preferred), top - 3, colour(g), width=2)
    return canvas.image()


def _draw_key(canvas: Canvas, s: Schedule) -> None:
    """The header: the state in words, then a key."""
    canvas.text(6, 4, f"assigned {int((s.guide_of >= 0).sum())}/{s.G} groups  waiting {s.waiting} min  "
                      f"imbalance {s.imbalance}  tours {s.D} min", INK)
    kx, ky = 6, 17
    for key, name in (("tour", "tour (group id)"), ("free", "guide available"), ("wait", "wait past preferred"),
                      ("tick", "preferred start")):
        if key == "tour":
            canvas.rect(kx, ky, kx + 10, ky + 7, colour(0))
        elif key == "free":
            canvas.rect(kx, ky, kx + 10, ky + 7, (235, 235, 235))
            canvas.outline(kx, ky, kx + 10, ky + 7, (200, 200, 200))
        elif key == "wait":
            canvas.rect(kx, ky + 2, kx + 10, ky + 5, ORANGE)
        else:
            canvas.line(kx + 5, ky, kx + 5, ky + 7, colour(1), width=2)
        canvas.text(kx + 14, ky, name, INK)
        kx += 14 + canvas.text_width(name) + 14


def _draw_hours(canvas: Canvas, c: _Chart, n_rows: int) -> None:
    """The hour grid behind the rows and the time axis, labelled every few hours."""
    step = 60 * max(1, int(np.ceil((c.t1 - c.t0) / 60 / ((c.width - c.left - c.right) // 40))))
    axis = c.top + c.row * n_rows
    for h in range(c.t0, c.t1 + 1, 60):  # hour grid, labelled every `step` minutes
        canvas.line(c.x(h), c.top - 2, c.x(h), axis + 2, GRID)
        if (h - c.t0) % step == 0:
            canvas.line(c.x(h), axis, c.x(h), axis + 4, INK)
            canvas.label(c.x(h), axis + 7, hhmm(h), INK, align="centre")
    canvas.line(c.left, axis, c.width - c.right, axis, INK)


def _draw_guide(canvas: Canvas, c: _Chart, inst: P2Instance, s: Schedule, k: int, name: str) -> None:
    """Guide ``k``'s row: its availability, its tours (named where they fit), waiting past preferred."""
    gd, row, x = inst.guides[k], c.row, c.x
    y0 = c.top + k * row
    canvas.label(c.left - 6, y0 + row / 2 - 3, name, INK, align="right")
    canvas.rect(x(gd.available_from), y0 + 2, x(gd.available_to), y0 + row - 2, (235, 235, 235))
    for a, g in s.tours[k]:
        fill = colour(g)
        canvas.rect(x(a), y0 + 5, x(a + s.D), y0 + row - 3, fill)
        canvas.outline(x(a), y0 + 5, x(a + s.D) - 1, y0 + row - 3, (40, 40, 40))
        room = x(a + s.D) - x(a) - 4
        for label in (inst.group_ids[g].upper(), short_id(inst.group_ids[g])):
            if canvas.text_width(label) <= room and row - 8 >= 7:
                canvas.text(x(a) + 3, y0 + 5 + (row - 8 - 7) // 2, label, ink_on(fill))
                break
    for a, g in s.tours[k]:  # waiting beyond the preferred start, above the bars
        pref = inst.groups[g].preferred
        if a > pref:
            canvas.rect(x(pref), y0 + 1, x(a) + 1, y0 + 4, ORANGE)
            canvas.rect(x(pref), y0 + 1, x(pref) + 2, y0 + 6, ORANGE)


#: The env's default viewer (``render()``, ``describe()``): these two functions of its state.
VIEWER = StateViewer(render_text, render_image, state=lambda env: (env.schedule,))
