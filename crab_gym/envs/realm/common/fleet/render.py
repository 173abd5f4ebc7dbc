"""Drawing a fleet on a map (``rgb_array`` renders of P3/P4 and P5/P8): places laid out in the
frame, each vehicle's route so far in its colour, the vehicles as discs tagged with their ids.

Generated instances carry map positions; upstream files only give travel times, so their
places are laid out by classical multidimensional scaling of the travel-time matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from crab_gym.envs.canvas import Canvas, LabelPlacer, colour, ink_on
from crab_gym.envs.realm.common.env import classical_mds
from crab_gym.envs.realm.common.viewer import StateViewer


def fit_layout(coords: Any, travel: Any, width: int, height: int, side: float, top: float, bottom: float) -> np.ndarray:
    """Place positions (pixels, shape (n, 2)) inside the frame's map area: ``coords`` when the
    instance has them, else a fixed-orientation MDS of ``travel``; ``side``, ``top`` and
    ``bottom`` are the margins."""
    if coords is not None:
        xy = np.asarray(coords, dtype=float)
    else:
        xy = classical_mds(travel, floor=1e-9)
        xy = xy * np.where(xy[np.argmax(np.abs(xy), axis=0), [0, 1]] < 0, -1.0, 1.0)  # fixed orientation
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    span = np.where(hi - lo > 1e-9, hi - lo, 1.0)
    unit = (xy - lo) / span
    return np.column_stack([side + unit[:, 0] * (width - 2 * side), height - bottom - unit[:, 1] * (height - top - bottom)])


def draw_route(c: Canvas, pos: np.ndarray, k: int, places: Sequence[int]) -> None:
    """Vehicle ``k``'s route so far: a line in its colour through ``places`` (start first)."""
    for here, nxt in zip(places, places[1:]):
        c.line(*pos[here], *pos[nxt], colour(k), width=2)


def draw_vehicles(
    c: Canvas, labels: LabelPlacer, pos: np.ndarray, vehicles: Sequence[Any], step: int
) -> list[tuple[float, float]]:
    """Each vehicle as a disc at its place (``step`` pixels apart when they share one; small
    once its route has ended); returns where each one stands, for its tag."""
    spots = []
    for k, veh in enumerate(vehicles):
        x, y = pos[veh.loc]
        x, y = x + step * (k % 3) - step, y + step * (k // 3) - step
        c.disc(x, y, 7 if not veh.ended else 4, colour(k))
        labels.block(x - 7, y - 7, x + 8, y + 8)
        spots.append((x, y))
    return spots


def tag_vehicles(labels: LabelPlacer, spots: Sequence[tuple[float, float]], vehicle_ids: Sequence[str]) -> None:
    """Each vehicle's id, upper case, on its colour next to its disc."""
    for k, (x, y) in enumerate(spots):
        fill = colour(k)
        labels.place(x, y, vehicle_ids[k].upper(), ink_on(fill), gap=10, background=fill)


def fleet_viewer(render_text: Callable[..., str], render_image: Callable[..., np.ndarray]) -> StateViewer:
    """A fleet env's viewer: the family's text of ``(instance, sim, active disruptions)`` and
    picture of ``(instance, sim, place positions, active disruptions)``."""
    return StateViewer(render_text, render_image, state=lambda env: (env.sim, env._active_disruptions()),
                       image_state=lambda env: (env.sim, env._pos, env._active_disruptions()))
