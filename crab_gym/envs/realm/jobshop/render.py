"""Drawing job-shop states: a Gantt chart (``rgb_array``, numpy canvas) and ``ansi`` text."""

from __future__ import annotations

import math

import numpy as np

from crab_gym.envs.canvas import Canvas, colour, ink_on
from crab_gym.envs.realm.common.viewer import StateViewer
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.sim import JobShopSchedule


def render_text(instance: JSSPInstance, schedule: JobShopSchedule, reference: float, kind: str) -> str:
    """The schedule per machine as text (``render_mode="ansi"``): each job's interval on it."""
    s, inst = schedule, instance
    lines = [
        f"{inst.name}: {inst.n_jobs} jobs x {inst.n_machines} machines | scheduled {s.n_scheduled}/{s.n_total} "
        f"| makespan {s.makespan} | lower bound {s.lb_makespan} | reference {reference} ({kind})"
    ]
    width = len(str(inst.n_machines - 1))
    for mc in range(inst.n_machines):
        ops = " ".join(
            f"j{j}[{a}-{b})" for j, a, b in zip(s.m_jobs[mc], s.m_starts[mc], s.m_ends[mc])
        )
        lines.append(f"M{mc:0{width}d}: {ops}")
    nxt = ", ".join(f"j{j}" for j in range(inst.n_jobs) if s.can_dispatch(j))
    lines.append(f"jobs with operations left: {nxt or 'none'}")
    return "\n".join(lines) + "\n"


def render_image(instance: JSSPInstance, schedule: JobShopSchedule, reference: float, kind: str) -> np.ndarray:
    """A Gantt chart (``render_mode="rgb_array"``): one row per machine, one colour per job,
    the makespan (black) and the reference (red) as vertical lines, a time axis and a key."""
    s, inst = schedule, instance
    m = inst.n_machines
    ink, red = (30, 30, 30), (200, 0, 0)
    row = max(6, min(28, 480 // m))
    names = [f"M{mc}" for mc in range(m)]
    left = max(Canvas.text_width(n) for n in names) + 10
    top, width = 34, 982 - left - 14
    height = top + row * m + 24
    canvas = Canvas(width + left + 14, height, background=(255, 255, 255))
    span = max(s.makespan, math.ceil(reference), s.lb_makespan, 1)  # a given reference may be fractional
    scale = width / span
    # header: the objective in words, then a key to the two vertical lines
    canvas.text(6, 4, f"makespan {s.makespan} / ref {reference} ({kind})  "
                      f"lower bound {s.lb_makespan}  scheduled {s.n_scheduled}/{s.n_total} ops  "
                      f"{inst.n_jobs} jobs (colour, J id)", ink)
    kx, ky = 6, 17
    for rgb, name in ((ink, "makespan"), (red, "reference")):
        canvas.line(kx + 4, ky - 1, kx + 4, ky + 8, rgb, width=2 if rgb == red else 1)
        canvas.text(kx + 12, ky, name, ink)
        kx += 12 + canvas.text_width(name) + 14
    axis = top + row * m
    step = _nice_step(span / 10)
    for t in range(0, span + 1, step):  # time axis with a few ticks
        xt = left + t * scale
        canvas.line(xt, top, xt, axis, (238, 238, 238))
        canvas.line(xt, axis, xt, axis + 4, ink)
        canvas.label(xt, axis + 7, str(t), ink, align="centre")
    for mc in range(m):
        y0 = top + mc * row
        if row >= 8 or mc % 2 == 0:
            canvas.label(left - 5, y0 + (row - 7) / 2, names[mc], ink, align="right")
        canvas.rect(left, y0 + row - 1, left + width, y0 + row, (225, 225, 225))
        for j, a, b in zip(s.m_jobs[mc], s.m_starts[mc], s.m_ends[mc]):
            x0, x1 = left + a * scale, left + b * scale
            canvas.rect(x0, y0 + 1, max(x1, x0 + 1), y0 + row - 2, colour(j))
            canvas.outline(x0, y0 + 1, max(x1, x0 + 1) - 1, y0 + row - 2, (40, 40, 40))
            tag = f"J{j}"
            if row >= 11 and canvas.text_width(tag) + 4 <= x1 - x0:
                canvas.text(x0 + 3, y0 + 1 + (row - 3 - 7) // 2, tag, ink_on(colour(j)))
    canvas.line(left, axis, left + width, axis, ink)
    x_ref = left + reference * scale
    canvas.line(x_ref, top - 4, x_ref, axis + 2, red, width=2)
    x_mk = left + s.makespan * scale
    canvas.line(x_mk, top - 4, x_mk, axis + 2, (0, 0, 0))
    return canvas.image()


def _nice_step(raw: float) -> int:
    """The smallest 1, 2 or 5 times a power of ten at least ``raw`` (axis tick spacing)."""
    base = 10 ** max(int(np.floor(np.log10(max(raw, 1)))), 0)
    for k in (1, 2, 5, 10):
        if k * base >= raw:
            return int(k * base)
    return int(10 * base)


#: The env's default viewer: the schedule so far, against the reference makespan and its kind.
VIEWER = StateViewer(render_text, render_image,
                     state=lambda env: (env.schedule, env.reference.value, env._reference_kind()))
