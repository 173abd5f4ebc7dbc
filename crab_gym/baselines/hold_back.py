"""An adversarial policy: random play that holds one actor (or job) back while anything else
is legal.

It probes the promise that no strategy raises a score without a better plan (DESIGN.md, "The
scoring contract", 7): on REALM's job shops with disruptions, a clock that waits for the
earliest ready job let a never-dispatched job keep every disruption from striking until the
rest was placed, and the adaptation yardstick then had nothing left to re-plan (issue 36).
:func:`crab_gym.checks.scoring_probes.probe_hold_back` plays it beside honest random play.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym.baselines.random_policy import RandomPolicy

#: Action names that make an actor wait.
DELAY_NAMES = frozenset({"wait", "pass", "idle", "hold", "skip", "stay"})


class HoldBackPolicy(RandomPolicy):
    """Uniform over the legal finite actions, except those that name the held entity (the
    ``held``-th value of the first argument of the env's first finite action: job 0 on a job
    shop, the first vehicle of a fleet, the first car, the first component), which it picks
    only when nothing else is legal, and then one of its waiting moves where it has any."""

    name = "hold-back"

    def __init__(self, env: gym.Env, seed: int | None = 0, held: int = 0) -> None:
        super().__init__(env, seed)
        self.held = held
        self._avoid: np.ndarray | None = None
        self._delays: np.ndarray | None = None

    def reset(self, env: gym.Env | None = None) -> None:
        self._avoid = self._delays = None

    def _held_actions(self) -> np.ndarray:
        """The flat action indices whose call names the held entity (worked out once)."""
        if self._avoid is None:
            codec = self.env.unwrapped.codec
            calls = [codec.flat_to_call(i) for i in range(codec.n_flat)]
            key = next(iter(calls[0]["arguments"]), None) if calls else None
            values = list(dict.fromkeys(c["arguments"].get(key) for c in calls if key in c["arguments"]))
            target = values[self.held % len(values)] if values else None
            self._avoid = np.array([key is not None and c["arguments"].get(key, object()) == target
                                    for c in calls], dtype=bool)
        return self._avoid

    def _delay_actions(self) -> np.ndarray:
        """The held entity's own ways of waiting (``wait``, ``pass``, ...): where only the
        held actor may move (an event-driven fleet gives the turn to one vehicle at a
        time), holding it back means taking these."""
        if self._delays is None:
            codec, held = self.env.unwrapped.codec, self._held_actions()
            self._delays = np.array([bool(held[i]) and codec.flat_to_call(i)["name"] in DELAY_NAMES
                                     for i in range(codec.n_flat)], dtype=bool)
        return self._delays

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        base = self.env.unwrapped
        if getattr(base, "codec", None) is None or not base.codec.n_flat or not hasattr(base, "action_masks"):
            return super().__call__(observation, info)
        mask = np.asarray(base.action_masks(), dtype=bool)
        others = mask & ~self._held_actions()
        delays = mask & self._delay_actions()
        legal = np.flatnonzero(others if others.any() else delays if delays.any() else mask)
        if not legal.size:
            return self.env.action_space.sample()
        return base.codec.flat_to_call(int(self.rng.choice(legal)))
