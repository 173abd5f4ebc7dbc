"""Pictures of a P2 schedule: the ``ansi`` text and the ``rgb_array`` Gantt chart.

Pure functions of the instance and the :class:`~.sim.Schedule`, drawn with numpy through
:mod:`crab_gym.envs.canvas` (no plotting library).
"""

from __future__ import annotations

import numpy as np

from crab_gym.envs.canvas import Canvas, colour, ink_on, short_id
from crab_gym.envs.realm.common.env import clock as _clock
from crab_gym.envs.realm.group_tours.model import P2Instance
from crab_gym.envs.realm.group_tours.sim import Schedule


def render_text(inst: P2Instance, s: Schedule) -> str:
    """The ``ansi`` frame: the state in one line, each guide's tours, the groups still waiting."""
    lines = [
        f"{inst.name}: {s.G} groups, {s.K} guides, {s.D}-min tours | assigned "
        f"{int((s.guide_of >= 0).sum())}/{s.G} | waiting {s.waiting} min | imbalance {s.imbalance}"
    ]
    for k, gd in enumerate(inst.guides):
        tours = " ".join(f"{inst.group_ids[g]}@{_clock(a)}" for a, g in s.tours[k])
        lines.append(
            f"{gd.guide_id} [{_clock(gd.available_from)}-{_clock(gd.available_to)}, cap {gd.max_group_size}]: "
            f"{tours or '-'}"
        )
    todo = [
        f"{grp.group_id}({grp.size}, arrives {_clock(grp.arrival)}, prefers {_clock(grp.preferred)})"
        for g, grp in enumerate(inst.groups)
        if s.guide_of[g] < 0
    ]
    lines.append("waiting for a guide: " + (", ".join(todo) if todo else "none"))
    return "\n".join(lines) + "\n"


def render_image(inst: P2Instance, s: Schedule) -> np.ndarray:
    """The ``rgb_array`` frame: a Gantt chart, one row per guide (availability, tours, waiting
    past the preferred start), preferred starts as ticks, and a key."""
    ink, grid, orange = (30, 30, 30), (225, 225, 225), (213, 94, 0)
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
    scale = (width - left - right) / max(t1 - t0, 1)

    def x(t: float) -> float:
        return left + (t - t0) * scale

    # header: the state in words, then a key
    canvas.text(6, 4, f"assigned {int((s.guide_of >= 0).sum())}/{s.G} groups  waiting {s.waiting} min  "
                      f"imbalance {s.imbalance}  tours {s.D} min", ink)
    kx, ky = 6, 17
    for key, name in (("tour", "tour (group id)"), ("free", "guide available"), ("wait", "wait past preferred"),
                      ("tick", "preferred start")):
        if key == "tour":
            canvas.rect(kx, ky, kx + 10, ky + 7, colour(0))
        elif key == "free":
            canvas.rect(kx, ky, kx + 10, ky + 7, (235, 235, 235))
            canvas.outline(kx, ky, kx + 10, ky + 7, (200, 200, 200))
        elif key == "wait":
            canvas.rect(kx, ky + 2, kx + 10, ky + 5, orange)
        else:
            canvas.line(kx + 5, ky, kx + 5, ky + 7, colour(1), width=2)
        canvas.text(kx + 14, ky, name, ink)
        kx += 14 + canvas.text_width(name) + 14
    step = 60 * max(1, int(np.ceil((t1 - t0) / 60 / ((width - left - right) // 40))))
    axis = top + row * s.K
    for h in range(t0, t1 + 1, 60):  # hour grid, labelled every `step` minutes
        canvas.line(x(h), top - 2, x(h), axis + 2, grid)
        if (h - t0) % step == 0:
            canvas.line(x(h), axis, x(h), axis + 4, ink)
            canvas.label(x(h), axis + 7, _clock(h), ink, align="centre")
    canvas.line(left, axis, width - right, axis, ink)
    for k, gd in enumerate(inst.guides):
        y0 = top + k * row
        canvas.label(left - 6, y0 + row / 2 - 3, names[k], ink, align="right")
        canvas.rect(x(gd.available_from), y0 + 2, x(gd.available_to), y0 + row - 2, (235, 235, 235))
        for a, g in s.tours[k]:
            fill = colour(g)
            canvas.rect(x(a), y0 + 5, x(a + s.D), y0 + row - 3, fill)
            canvas.outline(x(a), y0 + 5, x(a + s.D) - 1, y0 + row - 3, (40, 40, 40))
            room = x(a + s.D) - x(a) - 4
            for name in (inst.group_ids[g].upper(), short_id(inst.group_ids[g])):
                if canvas.text_width(name) <= room and row - 8 >= 7:
                    canvas.text(x(a) + 3, y0 + 5 + (row - 8 - 7) // 2, name, ink_on(fill))
                    break
        for a, g in s.tours[k]:  # waiting beyond the preferred start, above the bars
            pref = inst.groups[g].preferred
            if a > pref:
                canvas.rect(x(pref), y0 + 1, x(a) + 1, y0 + 4, orange)
                canvas.rect(x(pref), y0 + 1, x(pref) + 2, y0 + 6, orange)
    for g, grp in enumerate(inst.groups):  # preferred starts as ticks above the rows
        canvas.line(x(grp.preferred), head + 1, x(grp.preferred), top - 3, colour(g), width=2)
    return canvas.image()
