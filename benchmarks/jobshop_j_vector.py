"""Realm-J2-v0 and Realm-J4-v0 vector envs: the registered one against Gymnasium's
``SyncVectorEnv`` of the same single envs, in one run.

    python benchmarks/jobshop_j_vector.py [--ids Realm-J2-v0,Realm-J4-v0] [--sizes 1,16,256]
                                          [--seconds 1] [--repeats 5] [--timer cpu|wall]

Env-steps per second of ``step()`` (the actions, random legal jobs drawn from the masks by the
same cheap rule, are chosen outside the timed region; autoresets are included) at each N, for:

* ``registered``: ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``;
* ``sync``: ``gym.vector.SyncVectorEnv`` (autoreset ``NEXT_STEP``, ``copy=True``) of the same
  single env class, behind a wrapper that takes a job index as the action (the vector env's
  ``single_action_space``); Gymnasium merges each env's whole ``info``;
* ``sync, slim info``: the same, the wrapper passing on only what the registered env reports
  (``valid``; ``makespan`` and ``optimality`` when an episode ends).

The contenders take turns (``--repeats`` rounds of ``--seconds`` each); each one's best round
is printed. ``--timer cpu`` (the default) counts this process's CPU time, which moves less
than wall time with the other work on a shared machine.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import load_env_creator

import crab_gym  # noqa: F401  (registers the ids)


class JobIndex(gym.Wrapper):
    """A single J env whose action is a job index (``(0, {"job": j})`` to the env); ``slim``
    passes on only the info the registered vector env reports."""

    def __init__(self, env: gym.Env, slim: bool) -> None:
        super().__init__(env)
        self.action_space = spaces.Discrete(env.unwrapped.instance.n_jobs)
        self.slim = slim

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        obs, info = self.env.reset(**kwargs)
        return obs, ({} if self.slim else info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, term, trunc, info = self.env.step((0, {"job": int(action)}))
        if self.slim:
            slim = {"valid": info["valid"]}
            if term:
                slim["makespan"] = info["metrics"].get("makespan", 0)
                slim["optimality"] = info["metrics"].get("optimality") or 0.0
            info = slim
        return obs, reward, term, trunc, info


def sync_env(env_id: str, n: int, slim: bool) -> tuple[gym.vector.VectorEnv, Callable[[], np.ndarray]]:
    """Gymnasium's ``SyncVectorEnv`` of ``n`` single envs (the registered vector env's class),
    and its (N, n_jobs) masks (every job for an env awaiting its autoreset)."""
    env_class = load_env_creator(gym.spec(env_id).entry_point)
    venv = gym.vector.SyncVectorEnv([lambda: JobIndex(env_class(), slim) for _ in range(n)])

    def masks() -> np.ndarray:
        m = np.stack([e.unwrapped.action_masks()[: venv.single_action_space.n] for e in venv.envs]).astype(bool)
        m[venv._autoreset_envs] = True
        return m

    return venv, masks


def registered_env(env_id: str, n: int) -> tuple[gym.vector.VectorEnv, Callable[[], np.ndarray]]:
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    return venv, venv.unwrapped.action_masks


def runner(venv: gym.vector.VectorEnv, masks: Callable[[], np.ndarray], n: int,
           clock: Callable[[], float]) -> Callable[[float], float]:
    """A function that steps ``venv`` for about ``seconds`` of timed ``step()`` and returns
    env-steps/s."""
    rng = np.random.default_rng(0)
    venv.reset(seed=0)

    def run(seconds: float) -> float:
        steps, timed = 0, 0.0
        while steps == 0 or timed < seconds:
            m = masks()
            actions = (rng.random(m.shape) * m).argmax(axis=1)
            t = clock()
            venv.step(actions)
            timed += clock() - t
            steps += n
        return steps / timed

    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", default="Realm-J2-v0,Realm-J4-v0")
    parser.add_argument("--sizes", default="1,16,256")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timer", choices=["wall", "cpu"], default="cpu")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.timer == "wall" else time.process_time
    print(f"{args.timer} time, best of {args.repeats} rounds x {args.seconds:g} s, step() only, env-steps/s")
    print("| id | N | registered | sync | sync, slim info | registered / sync | registered / slim |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for env_id in args.ids.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            runs = {"registered": runner(*registered_env(env_id, n), n, clock),
                    "sync": runner(*sync_env(env_id, n, slim=False), n, clock),
                    "slim": runner(*sync_env(env_id, n, slim=True), n, clock)}
            best = dict.fromkeys(runs, 0.0)
            for _ in range(args.repeats):
                for name, run in runs.items():
                    best[name] = max(best[name], run(args.seconds))
            print(f"| {env_id} | {n} | {best['registered']:,.0f} | {best['sync']:,.0f} | {best['slim']:,.0f} | "
                  f"{best['registered'] / best['sync']:.2f} | {best['registered'] / best['slim']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
