"""The viewer part of a REALM env: how its state is shown, in words and in a picture.

``RealmEnv`` composes a viewer instead of asking each family for two render hooks, as
Jumanji's environments take a ``viewer``: ``render()`` in ``ansi`` mode and ``describe()``
(the state in words for an LLM prompt) call ``viewer.text(env)``, ``render()`` in
``rgb_array`` mode calls ``viewer.image(env)``. A family's ``render.py`` declares its default
viewer (the ``viewer`` role of its :class:`~crab_gym.envs.realm.common.problem_spec.ProblemSpec`);
a user passes another one with ``gym.make(id, viewer=...)``, for example a terser text for a
small-context model::

    class OneLine:
        def text(self, env): return f"{env.instance.name}: step {env.steps}"
        def image(self, env): return StateViewer(...).image(env)

A viewer reads the env and never changes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Viewer(Protocol):
    """What ``RealmEnv`` needs to show an env: its state in words and as an RGB image."""

    def text(self, env: Any) -> str:
        """The state in words (``render_mode="ansi"``, ``describe()``)."""
        ...

    def image(self, env: Any) -> np.ndarray:
        """The state as an ``(H, W, 3)`` uint8 image (``render_mode="rgb_array"``)."""
        ...


@dataclass(frozen=True)
class StateViewer:
    """A viewer from a family's two render functions of ``(instance, *state)``.

    Attributes:
        render_text: ``render_text(instance, *state) -> str``.
        render_image: ``render_image(instance, *state) -> ndarray``.
        state: ``state(env) -> tuple``: what the render functions take after the instance
            (the episode state, the active disruptions ...); the same for both unless
            ``image_state`` says otherwise.
        image_state: what ``render_image`` takes after the instance, if not ``state``.
    """

    render_text: Callable[..., str]
    render_image: Callable[..., np.ndarray]
    state: Callable[[Any], tuple[Any, ...]]
    image_state: Callable[[Any], tuple[Any, ...]] | None = None

    def text(self, env: Any) -> str:
        return self.render_text(env.instance, *self.state(env))

    def image(self, env: Any) -> np.ndarray:
        state = (self.image_state or self.state)(env)
        return self.render_image(env.instance, *state)


def check_viewer(viewer: Any) -> Any:
    """``viewer`` if it has ``text(env)`` and ``image(env)`` (None stays None), else a TypeError
    that says what a viewer needs."""
    if viewer is None or isinstance(viewer, Viewer):
        return viewer
    missing = [name for name in ("text", "image") if not callable(getattr(viewer, name, None))]
    raise TypeError(
        f"viewer must have text(env) -> str and image(env) -> ndarray methods; "
        f"{type(viewer).__name__} has no {' and no '.join(missing)}"
    )
