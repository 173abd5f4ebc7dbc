"""Drawing P10 states: ``ansi`` text and an ``rgb_array`` chart of the days so far.

The chart has three panels over the days: units on hand at the end of each day (stacked:
one colour per component, then work in progress), units made per day (stacked by stage),
and money spent so far against the budget line. Days a disruption is in force are shaded
in every panel and named in the key.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from crab_gym.envs.canvas import Canvas, colour
from crab_gym.envs.realm.common.viewer import StateViewer
from crab_gym.envs.realm.supply_chain.model import STAGES, Breakdown, P10Instance, Shortage
from crab_gym.envs.realm.supply_chain.sim import SupplySim

INK, GRID, RED = (30, 30, 30), (225, 225, 225), (200, 0, 0)
SHADE = {"resource_shortage": (255, 236, 200), "machine_breakdown": (225, 225, 250)}
STAGE_RGB = ((117, 85, 160), (150, 150, 60), (120, 80, 50))
WIP_RGB = ((160, 160, 160), (110, 110, 110))


def render_text(inst: P10Instance, sim: SupplySim, active: list[Any]) -> str:
    """The day, money, stocks, orders on their way and disruptions in force, as text."""
    lines = [
        f"{inst.name}: day {sim.day}/{inst.end_day}{' (over)' if sim.done else ''} (due day {inst.due_day}) | "
        f"demand {inst.demand}, packaged {sim.delivered + sim.made_today[-1]} | spent {sim.spent}/{inst.budget} | "
        f"holding {sim.holding} | lateness {sim.lateness} | cost if it ended now {sim.cost()}",
        "on hand: " + ", ".join(f"{n} {q}" for n, q in zip(inst.component_names, sim.on_hand)),
        f"work in progress: assembled {sim.stock[0]}, tested {sim.stock[1]}; made today: "
        + ", ".join(f"{s} {q}" for s, q in zip(STAGES, sim.made_today)),
    ]
    coming = sorted(sim.in_transit())
    lines.append("arriving: " + (", ".join(f"day {t}: {q} {inst.component_names[c]}" for t, c, q in coming)
                                 or "nothing"))
    lines.append("in force: " + ("; ".join(d.describe() for d in active) or "no disruption"))
    return "\n".join(lines) + "\n"


def _spans(sim: SupplySim, days: int) -> list[tuple[int, int, str, str]]:
    """``(first day, last day, type, label)`` of every disruption that struck."""
    out = []
    for d in sim.fired:
        end = days - 1 if d.duration is None else min(days - 1, d.start + d.duration - 1)
        if isinstance(d, Shortage):
            label = f"shortage {d.component} -{d.shortage:.0%}"
        elif isinstance(d, Breakdown):
            label = f"{d.facility} down"
        else:  # pragma: no cover - the two types above are all
            label = d.type
        out.append((d.start, end, d.type, label))
    return out


def render_image(inst: P10Instance, sim: SupplySim) -> np.ndarray:
    """Stacked inventory and production per day, spend against the budget, disruption spans."""
    days = inst.n_days
    width, left, right, panel, gap = 760, 64, 16, 110, 30
    plot_w = width - left - right
    bar = plot_w / days
    hist = sim.history
    spans = _spans(sim, days)
    placed, ky = _key_layout(inst, spans, width)
    top = ky + 26
    cv = Canvas(width, top + 3 * panel + 2 * gap + 30)
    cv.text(6, 4, f"{inst.name}  day {sim.day}/{inst.end_day} (due {inst.due_day})  packaged {sim.delivered}/{inst.demand}  "
                  f"spent {sim.spent}/{inst.budget}  cost if it ended now {sim.cost()}", INK)
    for kx, ky, rgb, name in placed:
        cv.rect(kx, ky, kx + 9, ky + 8, rgb)
        cv.outline(kx, ky, kx + 9, ky + 8, INK)
        cv.text(kx + 13, ky + 1, name, INK)

    inventory = [list(r.on_hand) + list(r.stock) for r in hist]
    made = [list(r.made) for r in hist]
    panels = [
        ("units on hand (end of day)", inventory, [colour(c) for c in range(len(inst.components))] + list(WIP_RGB)),
        ("units made per day", made, list(STAGE_RGB)),
    ]
    for p, (title, rows, rgbs) in enumerate(panels):
        y0 = top + p * (panel + gap)
        peak = max([sum(r) for r in rows] + [1])
        _frame(cv, y0, panel, left, plot_w, days, bar, spans, title, peak)
        _stacked_bars(cv, y0 + panel, panel, left, bar, rows, rgbs, peak)
    y0 = top + 2 * (panel + gap)
    _spend_panel(cv, inst, [r.spent for r in hist], y0, panel, left, plot_w, bar, spans)
    axis = y0 + panel
    for d in range(days):
        if days <= 20 or d % max(1, days // 15) == 0:
            cv.label(left + (d + 0.5) * bar, axis + 4, str(d), INK, align="centre")
    cv.label(left + plot_w / 2, axis + 16, "day", INK, align="centre")
    return cv.image()


def _key_layout(
    inst: P10Instance, spans: list[tuple[int, int, str, str]], width: int
) -> tuple[list[tuple[int, int, tuple[int, int, int], str]], int]:
    """Where each key entry goes (components, work in progress, stages, disruptions), wrapping
    onto as many rows as it needs; and the last row's y."""
    keys = [(colour(c), n) for c, n in enumerate(inst.component_names)] + [
        (WIP_RGB[0], "assembled"), (WIP_RGB[1], "tested")]
    keys += [(STAGE_RGB[k], f"made: {s}") for k, s in enumerate(STAGES)]
    keys += [(SHADE[t], label) for _, _, t, label in spans]
    placed, kx, ky = [], 6, 18
    for rgb, name in keys:  # the key wraps onto as many rows as it needs
        w = 14 + Canvas.text_width(name) + 12
        if kx + w > width - 4:
            kx, ky = 6, ky + 13
        placed.append((kx, ky, rgb, name))
        kx += w
    return placed, ky


def _stacked_bars(cv: Canvas, bottom: float, panel: int, left: int, bar: float, rows: list[list[int]],
                  rgbs: list[tuple[int, int, int]], peak: float) -> None:
    """One stacked bar a day (a colour a quantity), scaled so ``peak`` fills the panel."""
    for d, row in enumerate(rows):
        base = bottom
        for q, rgb in zip(row, rgbs):
            if q <= 0:
                continue
            h = q / peak * (panel - 4)
            cv.rect(left + d * bar + 2, base - h, left + (d + 1) * bar - 2, base, rgb)
            base -= h


def _spend_panel(cv: Canvas, inst: P10Instance, spend: list[int], y0: float, panel: int, left: int, plot_w: int,
                 bar: float, spans: list[tuple[int, int, str, str]]) -> None:
    """Money spent so far, day by day, against the budget line (red)."""
    peak = max([inst.budget, *spend, 1])
    _frame(cv, y0, panel, left, plot_w, inst.n_days, bar, spans, "money spent so far (red: budget)", peak)
    yb = y0 + panel - inst.budget / peak * (panel - 4)
    cv.line(left, yb, left + plot_w, yb, RED, width=2)
    points = [(left + (d + 0.5) * bar, y0 + panel - s / peak * (panel - 4)) for d, s in enumerate(spend)]
    for (xa, ya), (xb, yb2) in zip(points, points[1:]):
        cv.line(xa, ya, xb, yb2, INK, width=2)
    for x, y in points:
        cv.disc(x, y, 2.5, INK)


def _frame(cv: Canvas, y0: float, panel: int, left: int, plot_w: int, days: int, bar: float,
           spans: list[tuple[int, int, str, str]], title: str, peak: float) -> None:
    """A panel's shaded disruption days, grid, axes, title and top value."""
    for first, last, kind, _ in spans:
        cv.rect(left + first * bar, y0, left + (last + 1) * bar, y0 + panel, SHADE[kind])
    for frac in (0.25, 0.5, 0.75):
        y = y0 + panel - frac * (panel - 4)
        cv.line(left, y, left + plot_w, y, GRID)
    cv.line(left, y0 + panel, left + plot_w, y0 + panel, INK)
    cv.line(left, y0, left, y0 + panel, INK)
    cv.text(left + 4, y0 - 11, title, INK)
    cv.label(left - 4, y0 + 1, f"{peak:,.0f}", INK, align="right")
    cv.label(left - 4, y0 + panel - 8, "0", INK, align="right")


#: The env's default viewer (``render()``, ``describe()``): these two functions of its state.
VIEWER = StateViewer(render_text, render_image, state=lambda env: (env.sim, env._active_disruptions()), image_state=lambda env: (env.sim,))
