"""Pictures of a Thanksgiving afternoon: the ``ansi`` text and the ``rgb_array`` Gantt chart
(one row per cook, per car and for the oven), drawn with :mod:`crab_gym.envs.canvas`.

Pure functions of the instance and the :class:`~.sim.Kitchen`.
"""

from __future__ import annotations

import numpy as np

from crab_gym.envs.canvas import Canvas, colour, ink_on
from crab_gym.envs.realm.common.env import hhmm
from crab_gym.envs.realm.common.viewer import StateViewer
from crab_gym.envs.realm.thanksgiving.model import ThanksgivingInstance
from crab_gym.envs.realm.thanksgiving.sim import Kitchen

INK, GRID, AWAY, RED = (30, 30, 30), (225, 225, 225), (236, 236, 236), (200, 30, 30)


def render_text(inst: ThanksgivingInstance, k: Kitchen) -> str:
    """The ``ansi`` frame: the clock, each cook's tasks, each car's trips, what is left."""
    ready = k.ready
    lines = [
        f"{inst.name}: {hhmm(k.now)} | deadline {hhmm(inst.deadline)} | cooked "
        f"{sum(k.task_done(t) for t in inst.task_ids)}/{len(inst.tasks)} | home "
        f"{sum(k.is_home(m) for m in inst.member_ids)}/{len(inst.members)} | driving {k.driving} min"
        + (f" | dinner ready {hhmm(ready)}" if ready is not None else "")
    ]
    for m in inst.members:
        mid = m.member_id
        home = k.expected_home(mid)
        where = "home" if k.is_home(mid) else (f"expected {hhmm(home)}" if home is not None
                                              else f"lands {hhmm(k.known_landing(mid))}, not fetched")
        tasks = " ".join(f"{c['task']}[{hhmm(c['start'])}-{hhmm(c['end'])})" for c in k.cooking_schedule()
                         if c["cook"] == mid)
        lines.append(f"{mid} ({where}; skills {', '.join(m.skills) or '-'}): {tasks or '-'}")
    for car in inst.car_ids:
        trips = " ".join(f"{'+'.join(t.members)}[{hhmm(t.depart)}-{hhmm(k.known_times(t)[1])})" for t in k.car_trips(car))
        lines.append(f"{car} (at {k.car_place(car)}): {trips or '-'}")
    todo = [t for t in inst.task_ids if t not in k.cooked]
    lines.append("to cook: " + (", ".join(todo) if todo else "nothing"))
    for d in k.announced:
        lines.append(f"announced: {d.describe()}")
    return "\n".join(lines) + "\n"


class _Chart:
    """The Gantt chart's canvas and geometry: minutes -> x, and labelled bars."""

    def __init__(self, canvas: Canvas, left: int, right: int, top: int, row: int, t0: int, t1: int) -> None:
        self.canvas, self.left, self.right, self.top, self.row = canvas, left, right, top, row
        self.t0, self.t1 = t0, t1
        self.scale = (canvas.width - left - right) / max(t1 - t0, 1)

    def x(self, t: float) -> float:
        """The x pixel of minute ``t``."""
        return self.left + (t - self.t0) * self.scale

    def bar(self, y0: float, a: int, b: int, labels: list[str], fill: tuple[int, int, int], oven: bool = False) -> None:
        """A bar from minute ``a`` to ``b`` in the row at ``y0``, with the first label that fits."""
        canvas, x, row = self.canvas, self.x, self.row
        canvas.rect(x(a), y0 + 4, x(b), y0 + row - 4, fill)
        canvas.outline(x(a), y0 + 4, x(b) - 1, y0 + row - 4, RED if oven else (40, 40, 40))
        room = x(b) - x(a) - 4
        for text in labels:
            if canvas.text_width(text) <= room:
                canvas.text(x(a) + 3, y0 + (row - 7) // 2, text, ink_on(fill))
                break


def render_image(inst: ThanksgivingInstance, k: Kitchen) -> np.ndarray:
    """The ``rgb_array`` frame: a Gantt chart with a row per cook (away until home, then the
    tasks, oven tasks outlined in red), per car (trips: out, waiting, back) and for the oven;
    the clock (blue) and the deadline (red) as vertical lines."""
    rows = [("cook", m) for m in inst.member_ids] + [("car", c) for c in inst.car_ids] + [("oven", "oven")]
    width, right, head = 760, 24, 34
    left = max(Canvas.text_width(name.upper()) for _, name in rows) + 14
    row = 26
    top = head + 6
    axis = top + row * len(rows)
    height = axis + 24
    canvas = Canvas(width, height, background=(255, 255, 255))
    ends = [c.end for c in k.cooked.values()] + [k.known_times(t)[1] for t in k.trips] + [inst.deadline, k.now]
    t0 = inst.start_time - inst.start_time % 60
    chart = _Chart(canvas, left, right, top, row, t0, max(ends) + 15)
    _draw_key(canvas, inst, k)
    _draw_hours(chart, axis)
    draw_row = {"cook": _draw_cook, "car": _draw_car, "oven": _draw_oven}
    for r, (kind, name) in enumerate(rows):
        y0 = top + r * row
        canvas.label(left - 6, y0 + row / 2 - 3, name.upper(), INK, align="right")
        draw_row[kind](chart, inst, k, name, y0)
    canvas.line(chart.x(k.now), top - 4, chart.x(k.now), axis, (40, 90, 200), width=2)
    canvas.line(chart.x(inst.deadline), top - 4, chart.x(inst.deadline), axis, RED, width=2)
    return canvas.image()


def _draw_key(canvas: Canvas, inst: ThanksgivingInstance, k: Kitchen) -> None:
    """The header: the state in words, then a key to the bars and lines."""
    ready = k.ready
    canvas.text(6, 4, f"{inst.name}  {hhmm(k.now)}  cooked {sum(k.task_done(t) for t in inst.task_ids)}/"
                      f"{len(inst.tasks)}  driving {k.driving} min"
                      + (f"  dinner ready {hhmm(ready)}" if ready is not None else ""), INK)
    kx, ky = 6, 18
    for name, fill in (("task", colour(0)), ("oven task", RED), ("not home yet", AWAY), ("car driving", (120, 120, 120)),
                       ("car waiting", (190, 190, 190)), ("now", (40, 90, 200)), ("deadline", RED)):
        if name == "oven task":
            canvas.rect(kx, ky, kx + 10, ky + 7, colour(0))
            canvas.outline(kx, ky, kx + 10, ky + 7, RED)
        else:
            canvas.rect(kx, ky, kx + 10, ky + 7, fill)
        canvas.text(kx + 14, ky, name, INK)
        kx += 14 + canvas.text_width(name) + 14


def _draw_hours(chart: _Chart, axis: int) -> None:
    """The hour grid and the time axis, labelled every few hours."""
    canvas, x, t0, t1 = chart.canvas, chart.x, chart.t0, chart.t1
    step = 60 * max(1, int(np.ceil((t1 - t0) / 60 / ((canvas.width - chart.left - chart.right) // 50))))
    for h in range(t0, t1 + 1, 60):
        canvas.line(x(h), chart.top - 2, x(h), axis + 2, GRID)
        if (h - t0) % step == 0:
            canvas.line(x(h), axis, x(h), axis + 4, INK)
            canvas.label(x(h), axis + 7, hhmm(h), INK, align="centre")
    canvas.line(chart.left, axis, canvas.width - chart.right, axis, INK)


def _draw_cook(chart: _Chart, inst: ThanksgivingInstance, k: Kitchen, name: str, y0: float) -> None:
    """A cook's row: away until home, then the tasks cooked."""
    x, row = chart.x, chart.row
    home = k.home_at(name) if k.is_home(name) else k.expected_home(name)
    away_to = chart.t1 if home is None else home
    if away_to > inst.start_time:
        chart.canvas.rect(x(inst.start_time), y0 + 8, x(min(away_to, chart.t1)), y0 + row - 8, AWAY)
    for c in k.cooked.values():
        if c.cook == name:
            i = inst.task_index[c.task]
            chart.bar(y0, c.start, c.end, _names(c.task), colour(i), inst.tasks[i].oven)


def _draw_car(chart: _Chart, inst: ThanksgivingInstance, k: Kitchen, name: str, y0: float) -> None:
    """A car's row: each trip out, waiting at the airport, and back with its passengers."""
    x, row = chart.x, chart.row
    for t in k.car_trips(name):
        leave, home = k.known_times(t)
        chart.canvas.rect(x(t.depart), y0 + 10, x(t.airport), y0 + row - 10, (120, 120, 120))
        chart.canvas.rect(x(t.airport), y0 + 12, x(leave), y0 + row - 12, (190, 190, 190))
        first = t.members[0]
        more = f"+{len(t.members) - 1}" if len(t.members) > 1 else ""
        chart.bar(y0, leave, home, ["+".join(t.members), first + more, first[:3] + more, *_names(first)],
                  (120, 120, 120))


def _draw_oven(chart: _Chart, inst: ThanksgivingInstance, k: Kitchen, name: str, y0: float) -> None:
    """The oven's row: the oven tasks cooked."""
    for c in k.cooked.values():
        i = inst.task_index[c.task]
        if inst.tasks[i].oven:
            chart.bar(y0, c.start, c.end, _names(c.task), colour(i), True)


def _names(label: str) -> list[str]:
    """A bar's label, then shorter forms for narrow bars."""
    return [label, label[:3], label[:1]]


#: The env's default viewer (``render()``, ``describe()``): the kitchen's day so far.
VIEWER = StateViewer(render_text, render_image, state=lambda env: (env.kitchen,))
