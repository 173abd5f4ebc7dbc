"""The viewer part: every REALM env shows itself through one (``render()``, ``describe()``),
its family's by default, and ``viewer=`` replaces it for one env without touching the others."""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.realm.index import problem_specs

SPECS = problem_specs()


class Terse:
    """A user's viewer: one line of words, a flat grey picture."""

    def text(self, env: Any) -> str:
        return f"{env.instance.name}, terminated: {env._terminated}"

    def image(self, env: Any) -> np.ndarray:
        return np.full((4, 6, 3), 128, dtype=np.uint8)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_the_default_viewer_shows_words_and_a_picture(spec: Any) -> None:
    text_env = gym.make(spec.env_id, render_mode="ansi").unwrapped
    text_env.reset(seed=0)
    words = text_env.render()
    assert isinstance(words, str) and len(words) > 40
    if spec.problem != "P11":  # P11's describe() gives an LLM each job's remaining operations
        assert words == text_env.describe()
    image_env = gym.make(spec.env_id, render_mode="rgb_array").unwrapped
    image_env.reset(seed=0)
    picture = image_env.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    assert picture.shape[0] >= 100 and picture.shape[1] >= 300
    assert len(np.unique(picture.reshape(-1, 3), axis=0)) > 3  # a drawing, not a blank


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_a_viewer_keyword_replaces_it_for_that_env_only(spec: Any) -> None:
    env = gym.make(spec.env_id, render_mode="ansi", viewer=Terse()).unwrapped
    env.reset(seed=0)
    assert env.render() == f"{env.instance.name}, terminated: False"
    if spec.problem != "P11":
        assert env.describe() == env.render()
    other = gym.make(spec.env_id, render_mode="ansi").unwrapped
    other.reset(seed=0)
    assert other.render() != env.render()
    env.render_mode = "rgb_array"
    assert env.render().shape == (4, 6, 3)
    assert "viewer" in inspect.signature(type(env).__init__).parameters


def test_a_viewer_without_image_is_refused_saying_what_it_lacks() -> None:
    class WordsOnly:
        def text(self, env: Any) -> str:
            return "x"

    with pytest.raises(TypeError, match=r"image\(env\).*WordsOnly has no image"):
        gym.make("Realm-P1-v0", viewer=WordsOnly())
