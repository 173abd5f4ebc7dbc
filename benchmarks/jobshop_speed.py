"""Env speed on ta01: steps per second with random legal actions, and reset time.

    python benchmarks/jobshop_speed.py [--seconds 3] [--repeats 3]

Measures Realm-P11-v0 as ``gym.make`` returns it (space-element actions: the RL fast path),
the raw class, and the LLM path (tool-call dicts, validated by pydantic). If JSSEnv
(``pip install JSSEnv``) is importable it is measured on its own bundled ta01 in the same
run, with the same action choice, and the ratio is printed. Single process; best of
``--repeats`` runs, each at least ``--seconds`` long. A random legal action is chosen from
the observation's mask with the same cheap code for every env; that choice is included in
the timing.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import crab_gym  # noqa: F401  (registers Realm-P11-v0)

ENV_ID = "Realm-P11-v0"


def ensure_registered() -> None:
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="crab_gym.envs.realm.jobshop.env:JobShopEnv")


def measure(
    reset: Callable[[], Any], step: Callable[[Any], tuple], make_action: Callable[[int], Any],
    seconds: float, repeats: int,
) -> float:
    """Best steps/s over ``repeats`` runs of whole episodes lasting >= ``seconds``."""
    rng = np.random.default_rng(0)
    rnd = rng.random
    best = 0.0
    for _ in range(repeats):
        steps = 0
        t0 = time.perf_counter()
        while True:
            obs = reset()
            done = False
            while not done:
                legal = np.flatnonzero(obs["action_mask"])
                job = int(legal[int(rnd() * len(legal))])
                out = step(make_action(job))
                obs, done = out[0], out[2]
                steps += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                break
        best = max(best, steps / elapsed)
    return best


def reset_time(reset: Callable[[], Any], count: int = 300) -> float:
    """Mean reset time in microseconds (best of 3 batches)."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(count):
            reset()
        best = min(best, (time.perf_counter() - t0) / count)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ensure_registered()
    rows: list[tuple[str, float, float]] = []

    env = gym.make(ENV_ID, instance="ta01")
    env.reset(seed=0)
    element = lambda j: (0, {"job": j})  # noqa: E731
    rows.append((
        "crab_gym Realm-P11-v0 (gym.make, space elements)",
        measure(lambda: env.reset()[0], env.step, element, args.seconds, args.repeats),
        reset_time(lambda: env.reset()),
    ))
    raw = env.unwrapped
    rows.append((
        "crab_gym JobShopEnv (unwrapped, space elements)",
        measure(lambda: raw.reset()[0], raw.step, element, args.seconds, args.repeats),
        reset_time(lambda: raw.reset()),
    ))
    tool = lambda j: {"name": "dispatch", "arguments": {"job": j}}  # noqa: E731
    generic = lambda j: (0, {"job": _Int(j)})  # noqa: E731
    rows.append((
        "crab_gym, generic CrabEnv path (pydantic validation)",
        measure(lambda: raw.reset()[0], raw.step, generic, args.seconds, 1),
        float("nan"),
    ))
    rows.append((
        "crab_gym, tool-call dicts (LLM shape)",
        measure(lambda: raw.reset()[0], raw.step, tool, args.seconds, 1),
        float("nan"),
    ))

    jss = _jssenv()
    if jss is not None:
        rows.append((
            "JSSEnv 1.x JssEnv (ta01)",
            measure(lambda: _jss_reset(jss), jss.step, lambda j: j, args.seconds, args.repeats),
            reset_time(lambda: _jss_reset(jss)),
        ))

    print("| env (ta01, random legal actions) | steps/s | reset (us) |")
    print("|---|---:|---:|")
    for name, sps, rst in rows:
        print(f"| {name} | {sps:,.0f} | {'-' if rst != rst else f'{rst:,.0f}'} |")
    if jss is not None:
        print(f"\nratio crab_gym (gym.make) / JSSEnv: {rows[0][1] / rows[-1][1]:.2f}x")
    else:
        print("\nJSSEnv is not installed (pip install JSSEnv): no comparison in this run.")
    print("target: >= 50,000 steps/s single process (crab_gym, gym.make).")


class _Int(int):
    """An int subclass: the fast path only takes exact ints, so this forces the generic path."""


def _jssenv() -> Any | None:
    try:
        import JSSEnv  # noqa: F401
        from JSSEnv.envs import JssEnv
    except Exception:
        return None
    import JSSEnv.envs as pkg

    path = Path(pkg.__file__).parent / "instances" / "ta01"
    return JssEnv({"instance_path": str(path)})


def _jss_reset(env: Any) -> Any:
    out = env.reset()
    return out[0] if isinstance(out, tuple) else out


if __name__ == "__main__":
    main()
