"""How ``instance=`` and ``generator=`` reach a REALM env: one :class:`InstanceSource` per env,
``instance=`` at the problem's ``load`` role in a few files, and a user's generator (a callable
``(rng) -> instance`` or an object with ``__call__``, as in Jumanji and rl4co) drawn at every
reset."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import crab_gym
from crab_gym.envs.realm.common.instance_source import InstanceSource
from crab_gym.envs.realm.index import problem_specs
from crab_gym.envs.realm.jobshop.generator import random_instance
from crab_gym.envs.realm.ridesharing.generator import generate_p3

PACKAGE = Path(crab_gym.__file__).resolve().parent
SPECS = problem_specs()
#: The most files of crab_gym ``instance=`` passes through from ``gym.make`` to the load role.
MOST_FILES = 5


def _path_to_loader(env_id: str, instance: str, loader: Any) -> list[str]:
    """The ``file:function`` of every crab_gym frame on the stack when ``gym.make(env_id,
    instance=instance)`` first calls ``loader`` (the problem's load role), outermost first."""
    target = getattr(loader, "__wrapped__", loader).__code__
    found: list[list[str]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is target and not found:
            stack = []
            while frame is not None:
                path = Path(frame.f_code.co_filename).resolve()
                if path.is_relative_to(PACKAGE):
                    stack.append(f"{path.relative_to(PACKAGE)}:{frame.f_code.co_name}")
                frame = frame.f_back
            found.append(stack[::-1])

    sys.setprofile(profile)
    try:
        gym.make(env_id, instance=instance).close()
    finally:
        sys.setprofile(None)
    assert found, f"gym.make({env_id!r}, instance=...) never called its load role {loader.__qualname__}"
    return found[0]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_instance_reaches_the_load_role_in_at_most_five_files(spec):
    name = spec.part("names")()[0]
    path = _path_to_loader(spec.env_id, name, spec.part("load"))
    files = {hop.split(":")[0] for hop in path}
    assert len(files) <= MOST_FILES, "\n".join(path)
    assert path[-1].endswith(f":{spec.part('load').__name__}")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_every_env_declares_one_instance_source(spec):
    source = spec.part("env").instance_source
    assert type(source) is InstanceSource
    assert source.loader is spec.part("load")  # the env loads as crab_gym.datasets.load_instance does
    if spec.problem == "P11":  # generator= is Taillard's scheme on the env's own np_random
        assert not hasattr(source.generator, "generate")
    else:  # the family's generator is wired once: the env draws with the problem's generate role
        assert source.generator.generate is spec.part("generate")


def _small_ride(rng: np.random.Generator) -> Any:
    """A user's generator function: P3 instances of one shape, drawn from ``rng``."""
    return generate_p3("small", int(rng.integers(1000)), n_requests=3, n_vehicles=2, n_locations=6)


class ShopGenerator:
    """A user's generator object (Jumanji's ``Generator`` shape): ``__call__(rng)``."""

    def __init__(self, n_jobs: int, n_machines: int) -> None:
        self.n_jobs, self.n_machines, self.calls = n_jobs, n_machines, 0

    def __call__(self, rng: np.random.Generator) -> Any:
        self.calls += 1
        return random_instance(self.n_jobs, self.n_machines, rng)


def test_a_generator_function_draws_every_reset():
    env = gym.make("Realm-P3-v0", generator=_small_ride)
    first = env.unwrapped.instance
    assert (len(first.requests), len(first.vehicles)) == (3, 2)
    env.reset(seed=5)
    five = env.unwrapped.instance
    env.reset(seed=6)
    assert env.unwrapped.instance != five and len(env.unwrapped.instance.requests) == 3
    env.reset(seed=5)
    assert env.unwrapped.instance == five  # seeded by the env's np_random
    mine = generate_p3("small", 7, name="mine", n_requests=3, n_vehicles=2, n_locations=6)
    env.reset(options={"instance": mine})  # a swap still overrides the generator
    assert env.unwrapped.instance is mine


def test_a_generator_object_draws_every_reset():
    maker = ShopGenerator(4, 3)
    env = gym.make("Realm-P11-v0", generator=maker)
    assert env.unwrapped.instance.shape[:1] == (4,) and env.unwrapped.instance.n_machines == 3
    obs, info = env.reset(seed=1)
    assert maker.calls == 2 and env.observation_space.contains(obs)
    terminated = False
    while not terminated:
        action = {"name": "dispatch", "arguments": {"job": int(np.flatnonzero(env.unwrapped.action_masks())[0])}}
        obs, reward, terminated, truncated, info = env.step(action)
    assert info["metrics"]["constraint_satisfaction"] == 1.0


def test_a_drawn_instance_that_does_not_fit_the_spaces_is_refused():
    sizes = iter([(4, 3), (5, 3)])
    env = gym.make("Realm-P11-v0", generator=lambda rng: random_instance(*next(sizes), rng))
    with pytest.raises(ValueError, match="this env's spaces are for 4x3"):
        env.reset(seed=0)


def test_what_a_generator_returns_is_checked_like_instance():
    with pytest.raises(TypeError, match="instance must be a shipped P3 instance name"):
        gym.make("Realm-P3-v0", generator=lambda rng: 42)
    with pytest.raises(TypeError, match=r"generator must be .* or a callable \(rng\) -> instance"):
        gym.make("Realm-P3-v0", generator="small")
