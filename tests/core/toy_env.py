"""A small example CrabEnv used by the tests (not registered): light four lamps in order."""

from __future__ import annotations

from typing import Annotated

import gymnasium as gym
import networkx as nx
import numpy as np
from pydantic import Field

from crab_gym.core import action, evaluator
from crab_gym.envs.base import CrabEnv

N_LAMPS = 4


@action
def switch_on(lamp: Annotated[int, Field(ge=0, le=N_LAMPS - 1)], env) -> None:
    """Switch a lamp on.

    Args:
        lamp: index of the lamp.
    """
    env.lit[lamp] = True
    env.order.append(lamp)


@action
def switch_all_off(env) -> None:
    """Switch every lamp off (a wasted move)."""
    env.lit[:] = False
    env.order.append(-1)


def lamp_lit(i: int):
    @evaluator(name=f"lamp_{i}_lit")
    def check(env) -> bool:
        return bool(env.lit[i])

    return check


class LampsEnv(CrabEnv):
    """Light lamps 0..3; sub-goals form a chain; optimal = 4 moves."""

    def __init__(self, render_mode=None, invalid_action_penalty: float = 0.0):
        super().__init__([switch_on, switch_all_off], render_mode=render_mode,
                         invalid_action_penalty=invalid_action_penalty)
        self.observation_space = gym.spaces.Dict(
            {
                "lit": gym.spaces.MultiBinary(N_LAMPS),
                "action_mask": gym.spaces.MultiBinary(self.codec.n_flat),
            }
        )
        self.lit = np.zeros(N_LAMPS, dtype=bool)
        self.order: list[int] = []

    def _reset_state(self, options):
        self.lit = np.zeros(N_LAMPS, dtype=bool)
        # a seeded random lamp starts lit, so that seeds matter
        self.lit[int(self.np_random.integers(N_LAMPS))] = True
        self.order = []

    def _build_graph(self):
        g = nx.DiGraph()
        nodes = [lamp_lit(i) for i in range(N_LAMPS)]
        nx.add_path(g, nodes)
        return g

    def _get_obs(self):
        return {"lit": self.lit.astype(np.int8), "action_mask": self.action_masks().astype(np.int8)}

    def _check_action(self, name, args):
        if name == "switch_on" and self.lit[args["lamp"]]:
            return f"lamp {args['lamp']} is already on"
        return None

    def _action_mask(self):
        return np.concatenate([~self.lit, [True]])

    def _is_terminated(self):
        return bool(self.lit.all())

    def _optimality(self):
        return min(1.0, (N_LAMPS - 1) / max(len(self.order), 1))

    def _final_info(self):
        return {"moves": len(self.order)}, {"order": list(self.order)}

    def render(self):
        if self.render_mode == "ansi":
            return "".join("*" if x else "." for x in self.lit)
        if self.render_mode == "rgb_array":
            img = np.zeros((8, 8 * N_LAMPS, 3), dtype=np.uint8)
            for i, on in enumerate(self.lit):
                img[:, 8 * i : 8 * i + 7] = (255, 220, 0) if on else (40, 40, 40)
            return img
        return None
