"""Fuzz every REALM id with odd input and count the exceptions that escape (issue 38).

Four doors, each driven with a mix of legal moves (the action mask), random elements of the
action space and hostile input (malformed tool calls, JSON strings, deep nesting, NaN, huge
numbers, wrong types):

* ``plain``: ``gym.make(id).step(x)``;
* ``obfuscate``: ``gym.make(id, obfuscate=1).step(x)``;
* ``llm``: ``LLMAdapter(gym.make(id)).step(text)`` (model output as text);
* ``vector``: ``gym.make_vec(id, num_envs=4, vectorization_mode="vector_entry_point")`` for the
  ids with a native vector env; a batch the env refuses must raise ``ValueError`` before any
  env moves (counted as ``refused``), anything else is an escape.

An escape is any exception out of ``step()`` (for the vector envs: other than the documented
``ValueError`` refusal). The command prints one row per (id, door) and exits 1 if any escaped::

    python benchmarks/fuzz_escapes.py --steps 20000           # the issue's figure
    python benchmarks/fuzz_escapes.py --steps 500 --ids Realm-P3-v0
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.registration import env_specs, realm_ids
from crab_gym.wrappers import LLMAdapter


def _deep(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = {"a": [value]}
    return value


#: Hostile actions for the env doors (tool calls gone wrong, and things that are no call).
HOSTILE: list[Any] = [
    None, 0, -1, 10**30, float("nan"), float("inf"), "dispatch", "", [1, 2], (1,), {}, {"name": None},
    {"name": 5}, {"name": "submit_plan"}, {"name": "submit_plan", "arguments": None},
    {"name": "submit_plan", "arguments": "{bad json"}, {"name": "submit_plan", "arguments": "[1, 2]"},
    {"name": "submit_plan", "arguments": [1, 2]}, {"name": "submit_plan", "arguments": {"x": _deep(50)}},
    {"name": "dispatch", "arguments": {"job": 10**30}}, {"name": "dispatch", "arguments": {"job": float("nan")}},
    {"name": "dispatch", "arguments": {"job": "0"}}, {"name": "dispatch", "arguments": '{"job": 0}'},
    _deep(1000), np.array([1, 2, 3]), np.float32("nan"),
]
#: Hostile model output for the LLM adapter.
HOSTILE_TEXT: list[str] = [
    "", "hello", "{", "[]", "null", "{\"name\": 5}", json.dumps({"name": "submit_plan", "arguments": "{bad"}),
    "[" * 1200 + "]" * 1200, "{\"a\":" * 1000 + "0" + "}" * 1000, "```json\n{\"name\": \"x\"}\n```",
    json.dumps({"name": "dispatch", "arguments": {"job": 10**30}}), "\x00\x01", "NaN",
]


def _legal(env: gym.Env, rng: np.random.Generator) -> Any:
    """A legal flat move as a tool call (else a random space element)."""
    base = env.unwrapped
    mask = base.action_masks() if hasattr(base, "action_masks") else None
    if mask is not None and mask.any():
        return base.codec.flat_to_call(int(rng.choice(np.flatnonzero(mask))))
    return env.action_space.sample()


def _drive(make: Callable[[], gym.Env], steps: int, seed: int, text: bool) -> Counter:
    """``steps`` mixed steps through one door; the counts of escapes by exception type."""
    rng = np.random.default_rng(seed)
    env = make()
    env.action_space.seed(seed)
    escapes: Counter = Counter()
    env.reset(seed=seed)
    for i in range(steps):
        draw = rng.random()
        if draw < 0.6:
            action = _legal(env if not text else env.env, rng)
            action = json.dumps(action) if text and isinstance(action, dict) else action
        elif draw < 0.75 and not text:
            action = env.action_space.sample()
        else:
            pool = HOSTILE_TEXT if text else HOSTILE
            action = pool[int(rng.integers(len(pool)))]
        try:
            _, _, terminated, truncated, _ = env.step(action)
        except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
            escapes[type(exc).__name__] += 1
            terminated = truncated = True
        if terminated or truncated:
            env.reset(seed=seed + i)
    env.close()
    return escapes


def _drive_vector(env_id: str, steps: int, seed: int) -> tuple[Counter, int]:
    """Batches of 4 with one odd entry now and then; (escapes, refused batches)."""
    rng = np.random.default_rng(seed)
    venv = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point")
    venv.reset(seed=seed)
    n = int(venv.single_action_space.n) if hasattr(venv.single_action_space, "n") else 8
    odd = [-1, n, 10**30, np.nan, np.inf, 0.5]
    escapes: Counter = Counter()
    refused = 0
    for _ in range(max(1, steps // 4)):
        batch = rng.integers(0, n, size=4).astype(object)
        if rng.random() < 0.2:
            batch[int(rng.integers(4))] = odd[int(rng.integers(len(odd)))]
        actions = np.asarray(batch.tolist())  # numpy's own dtype: int64, float64, or object for 10**30
        try:
            venv.step(actions)
        except ValueError:
            refused += 1
        except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
            escapes[type(exc).__name__] += 1
            venv.reset(seed=seed)
    venv.close()
    return escapes, refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20000, help="steps per id and door (default 20000)")
    parser.add_argument("--ids", nargs="*", default=None, help="env ids (default: every REALM id)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    ids = args.ids or realm_ids()
    vector_ids = {s.id for s in env_specs() if s.vector_entry_point}
    print("| env | door | steps | escapes | refused batches | CPU s |")
    print("|---|---|---:|---|---:|---:|")
    total = 0
    for env_id in ids:
        doors: dict[str, Callable[[], tuple[Counter, int]]] = {
            "plain": lambda e=env_id: (_drive(lambda: gym.make(e), args.steps, args.seed, False), 0),
            "obfuscate": lambda e=env_id: (_drive(lambda: gym.make(e, obfuscate=1), args.steps, args.seed, False), 0),
            "llm": lambda e=env_id: (_drive(lambda: LLMAdapter(gym.make(e)), args.steps, args.seed, True), 0),
        }
        if env_id in vector_ids:
            doors["vector"] = lambda e=env_id: _drive_vector(e, args.steps, args.seed)
        for door, run in doors.items():
            started = time.process_time()
            escapes, refused = run()
            total += sum(escapes.values())
            shown = ", ".join(f"{k} x{v}" for k, v in escapes.items()) or "0"
            print(f"| {env_id} | {door} | {args.steps} | {shown} | {refused} | {time.process_time() - started:.0f} |",
                  flush=True)
    print(f"\nescapes in all: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
