"""Drawing J2/J3/J4 states: a Gantt chart that reads at 200 jobs x 50 machines
(``rgb_array``) and text (``ansi``).

The chart has one row per machine (labels on every row down to 9 px rows, every other row
below), one colour per job, known down-times dark grey, aborted attempts of restarted
operations hatched red, the clock (blue), the makespan (black) and the reference (red).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from crab_gym.envs.canvas import PALETTE, Canvas
from crab_gym.envs.realm.jobshop.render import _nice_step

INK, RED, BLUE, DOWN = (30, 30, 30), (200, 0, 0), (30, 90, 220), (55, 55, 55)
#: Job colours: the palette without its black and grey (kept for lines and down-times).
JOB_COLOURS = tuple(c for c in PALETTE if c not in ((0, 0, 0), (127, 127, 127)))


def colour(job: int) -> tuple[int, int, int]:
    return JOB_COLOURS[job % len(JOB_COLOURS)]


def text(env: Any) -> str:
    """The schedule per machine (``j3[0-94)``: job 3 from 0 to 94; ``##[a-b)``: down)."""
    s, inst = env.sim, env.instance
    lines = [f"{inst.name} ({inst.problem}): {inst.n_jobs} jobs x {inst.n_machines} machines | scheduled "
             f"{s.n_scheduled}/{s.n_total} | makespan {s.makespan} | clock {s.now} | reference {env.reference.value}"]
    for d in s.applied:
        lines.append(f"struck: {d.describe()}")
    width = len(str(inst.n_machines - 1))
    for mc in range(inst.n_machines):
        cells = [f"j{j}[{a}-{b})" if j >= 0 else f"##[{a}-{b})"
                 for (j, _), a, b in zip(s.m_ops[mc], s.m_starts[mc], s.m_ends[mc])]
        lines.append(f"M{mc:0{width}d}: {' '.join(cells)}")
    left = [f"j{j}" for j in range(inst.n_jobs) if s.can_dispatch(j)]
    lines.append(f"jobs with operations left ({len(left)}): {', '.join(left[:40]) or 'none'}"
                 + (" ..." if len(left) > 40 else ""))
    return "\n".join(lines) + "\n"


def image(env: Any) -> np.ndarray:
    """The Gantt chart (see the module docstring)."""
    s, inst = env.sim, env.instance
    m = inst.n_machines
    row = max(5, min(28, 560 // m))
    left, top, width = 40, 34, 1180
    canvas = Canvas(left + width + 14, top + row * m + 26, background=(255, 255, 255))
    ref = env.reference.value or 0
    span = max(s.makespan, math.ceil(ref), 1)
    scale = width / span
    canvas.text(6, 4, f"{inst.name} ({inst.problem}) {inst.n_jobs} jobs x {m} machines | makespan {s.makespan} / "
                      f"ref {ref:g} | {s.n_scheduled}/{s.n_total} ops"
                      + (f" | clock {s.now} | {len(s.applied)} of {len(inst.disruptions)} disruption(s) struck, "
                         f"{len(s.restarted)} restart(s)" if inst.disruptions else ""), INK)
    kx = 6
    keys = ((INK, "makespan"), (RED, "reference"), (BLUE, "clock"), (DOWN, "down"), (RED, "restarted (outline)"))
    for rgb, name in keys if inst.disruptions else keys[:2]:
        canvas.rect(kx, 18, kx + 8, 26, rgb)
        canvas.text(kx + 12, 18, name, INK)
        kx += 26 + canvas.text_width(name)
    axis = top + row * m
    step = _nice_step(span / 12)
    for t in range(0, span + 1, step):
        xt = left + t * scale
        canvas.line(xt, top, xt, axis, (236, 236, 236))
        canvas.label(xt, axis + 6, str(t), INK, align="centre")
    for mc in range(m):
        y0 = top + mc * row
        if row >= 9 or mc % 2 == 0:
            canvas.label(left - 4, y0 + (row - 7) / 2, f"M{mc}", INK, align="right")
        for (j, _), a, b in zip(s.m_ops[mc], s.m_starts[mc], s.m_ends[mc]):
            x0, x1 = left + a * scale, max(left + b * scale, left + a * scale + 1)
            canvas.rect(x0, y0 + 1, x1, y0 + row - 1, DOWN if j < 0 else colour(j))
            if j >= 0 and row >= 8 and x1 - x0 >= 4:
                canvas.outline(x0, y0 + 1, x1 - 1, y0 + row - 1, (60, 60, 60))
    for r in s.restarted:
        y0 = top + r["machine"] * row
        x0, x1 = left + r["start"] * scale, left + r["stopped"] * scale
        canvas.outline(x0, y0 + 1, max(x1, x0 + 1), y0 + row - 1, RED)
    canvas.line(left, axis, left + width, axis, INK)
    lines = [(left + ref * scale, RED), (left + s.makespan * scale, INK)]
    if inst.disruptions:
        lines.append((left + s.now * scale, BLUE))
        for spans in s.holds:  # a held job: a dark tick under the axis per hold
            for a, b in spans:
                canvas.rect(left + a * scale, axis + 1, max(left + b * scale, left + a * scale + 1), axis + 4, DOWN)
    for x, rgb in lines:
        if x <= left + width + 1:
            canvas.line(x, top - 4, x, axis + 2, rgb, width=2 if rgb != INK else 1)
    return canvas.image()


class ShopViewer:
    """The J ids' viewer (``render()``, ``describe()``): :func:`text` and :func:`image` of the env."""

    def text(self, env: Any) -> str:
        return text(env)

    def image(self, env: Any) -> np.ndarray:
        return image(env)


VIEWER = ShopViewer()
