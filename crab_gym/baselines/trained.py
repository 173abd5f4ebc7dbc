"""The trained policies shipped with crab_gym: small MaskablePPO models, one per id trained on.

``crab_gym/baselines/trained/manifest.json`` lists each model by the id it was trained on: its
file, the ids its view plays (P11's model also plays J2-J4), and
the ``crab-gym train`` command, seed, steps and CPU time that produced it (from the run's
``training.json``), so a row of the reference results made with a shipped model can be made
again from nothing. ``crab-gym train ... --install`` writes a model and its entry here.

The registry names the shipped models ``trained`` (``crab-gym run --policy trained``); playing
one needs the rl extra (torch, sb3-contrib).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import gymnasium as gym

from crab_gym._optional import require
from crab_gym.baselines.candidate_views import CandidateModelPolicy, view_for

#: Where the shipped models and their manifest live.
TRAINED_DIR = Path(__file__).resolve().parent / "trained"
MANIFEST = TRAINED_DIR / "manifest.json"

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


def manifest() -> dict[str, dict[str, Any]]:
    """The shipped models by the env id each was trained on (empty when none is shipped)."""
    if not MANIFEST.is_file():
        return {}
    return json.loads(MANIFEST.read_text())["models"]


def trained_ids() -> tuple[str, ...]:
    """The env ids a shipped model plays."""
    return tuple(sorted({i for entry in manifest().values() for i in entry["env_ids"]}))


def entry_for(env_id: str) -> tuple[str, dict[str, Any]]:
    """(key, manifest entry) of the shipped model that plays ``env_id``: the one trained on it, else
    one trained on another id of the same view (P11's plays J2-J4)."""
    models = manifest()
    if env_id in models:
        return env_id, models[env_id]
    for name, entry in models.items():
        if env_id in entry["env_ids"]:
            return name, entry
    raise KeyError(f"no trained policy is shipped for {env_id} (shipped for: {', '.join(trained_ids()) or 'none'})")


def trained_model(env_id: str) -> Any:
    """The shipped model for ``env_id``, loaded once per process (needs the rl extra)."""
    require("torch", "rl")
    contrib = require("sb3_contrib", "rl", package="sb3-contrib")
    name, entry = entry_for(env_id)
    with _LOCK:
        if name not in _MODELS:
            _MODELS[name] = contrib.MaskablePPO.load(TRAINED_DIR / entry["file"], device="cpu")
        return _MODELS[name]


def trained_policy(env: gym.Env) -> Any:
    """The ``trained`` policy for ``env``: its shipped model, greedy."""
    env_id = _env_id(env)
    return CandidateModelPolicy(trained_model(env_id), env, deterministic=True, name="trained")


def _env_id(env: gym.Env) -> str:
    """The id ``env`` was made as, else the registered id of its class or of the nearest class it
    derives from (an env built directly, or a subclass such as the scoring probes' test envs)."""
    if env.spec is not None and env.spec.id:
        return env.spec.id
    for cls in type(env.unwrapped).__mro__:
        target = f"{cls.__module__}:{cls.__qualname__}"
        found = next((s.id for s in gym.registry.values() if s.entry_point == target), None)
        if found is not None:
            return found
    return type(env.unwrapped).__name__


def install(run_dir: str | Path) -> dict[str, Any]:
    """Ship a ``crab-gym train`` run: copy ``run_dir/model.zip`` in as ``<view>.zip`` and write its
    manifest entry from ``run_dir/training.json``; returns the entry."""
    run = Path(run_dir)
    record = json.loads((run / "training.json").read_text())
    env_id = record["spec"]["env_id"]
    view = view_for(env_id)
    TRAINED_DIR.mkdir(exist_ok=True)
    file = f"{env_id.removeprefix('Realm-').removesuffix('-v0').lower()}.zip"
    shutil.copyfile(run / "model.zip", TRAINED_DIR / file)
    entry = {
        "file": file,
        "env_ids": list(view.env_ids),
        "view": view.name,
        "command": record["command"],
        "seed": record["spec"]["seed"],
        "steps_run": record["steps"],
        "cpu_s": record["cpu_s"],
        "model": record.get("model") or {"weights": "last", **(record["curve"][-1] if record.get("curve") else {})},
        "curve": record["curve"],
    }
    models = manifest()
    models[env_id] = entry
    MANIFEST.write_text(json.dumps({"models": dict(sorted(models.items()))}, indent=2) + "\n")
    return entry
