"""Training a size-agnostic dispatcher with MaskablePPO: the recipe ``crab-gym train`` runs.

``train_candidates(TrainSpec("Realm-P11-v0", steps=..., out="runs/p11"))`` trains
:class:`~crab_gym.baselines.candidate_policy.CandidatePolicy` on the native vector env, on
instances drawn fresh at every reset (Taillard's generator, ``generator=size``; no solver: the
reward is L2D's dense ``reward_mode="makespan"``, scaled), one torch thread, with a progress bar
and a greedy evaluation on the id's ``dev`` split every ``eval_every`` steps. It writes into
``out``:

* ``model.zip``: the model (a ``MaskablePPO.load``-able file, played by
  ``crab-gym run --policy sb3:out/model.zip`` on instances of any size). For a problem trained on
  fresh generated instances (P11) it is the last weights: its ``dev`` curve is flat within 0.005
  from 1M steps on while Taillard's gaps still fall. For a problem trained on a pool of its
  ``dev`` instances it is the weights that scored best there: longer training drifts below the
  early best on P6, P7 and P9;
* ``best_dev.zip``: the weights that scored best on ``dev`` (the same file as ``model.zip`` for
  a pooled problem);
* ``training.json``: the spec, the command that reproduces it, the CPU and wall times, the
  share of training time spent in the env, and the curve (steps, CPU seconds, dev optimality).
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from crab_gym._optional import require
from crab_gym.baselines.candidate_views import CandidateModelPolicy, PooledCandidates, view_for
from crab_gym.envs.realm.common.problem_spec import load_entry_point
from crab_gym.evaluation.episode import EnvCase

#: The torch parts, loaded by name on first use (importing this module imports no torch).
POLICY_CLASS = "crab_gym.baselines.candidate_policy:CandidatePolicy"
VECTOR_ENV = "crab_gym.baselines.sb3_vector:candidate_vec_env"

#: What a saved model leaves out: the last rollout's observations and episode logs (most of
#: the file, and nothing a player or a resumed training needs).
SAVE_EXCLUDE = ("_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer", "ep_success_buffer")
#: Samples per PPO iteration (``n_steps = ROLLOUT // n_envs``).
ROLLOUT = 8192
#: MaskablePPO's settings for the candidate policy (measured on P11 15x15, docs/rl.md).
PPO_DEFAULTS: dict[str, Any] = {
    "batch_size": 2048,
    "n_epochs": 3,
    "learning_rate": 3e-4,
    "gamma": 1.0,
    "gae_lambda": 0.95,
    "ent_coef": 0.01,
}


@dataclass
class TrainSpec:
    """What to train: everything that decides the result (the seed included) is here.

    ``size`` is the generator's ``(n_jobs, n_machines)``; ``n_envs`` the number of envs stepped
    together (default: 256 on a native vector env, 8 pools of dev instances otherwise);
    ``eval_every`` the steps between two ``dev`` evaluations (0: only at the end), over the
    split's instances (the first ``eval_instances`` of them, in the split's order, if given).
    """

    env_id: str = "Realm-P11-v0"
    steps: int = 2_000_000
    out: str = "runs/train"
    seed: int = 0
    size: tuple[int, int] = (15, 15)
    n_envs: int | None = None
    hidden: int = 32
    eval_every: int = 500_000
    eval_split: str = "dev"
    eval_instances: int | None = None
    eval_generated: int = 20
    ppo: dict[str, Any] = field(default_factory=dict)

    def command(self) -> str:
        """The ``crab-gym train`` line that reproduces this spec."""
        parts = ["crab-gym train", f"--env {self.env_id}", f"--steps {self.steps}", f"--out {self.out}",
                 f"--seed {self.seed}"]
        if view_for(self.env_id).vector_kwargs is not None:  # trained on generated instances of a size
            parts.append(f"--size {self.size[0]}x{self.size[1]}")
        parts += [f"--n-envs {self.n_envs}", f"--eval-every {self.eval_every}"]
        return " ".join(parts)


def greedy_optimality(policy_model: Any, cases: Sequence[EnvCase], *, deterministic: bool = True,
                      seed: int = 0) -> list[float]:
    """The optimality the model's greedy (or sampled) plan scores on each case, in order."""
    values = []
    for case in cases:
        env = gym.make(case.env_id, **case.kwargs)
        try:
            values.append(play_optimality(policy_model, env, seed, deterministic))
        finally:
            env.close()
    return values


def generated_optimality(policy_model: Any, spec: TrainSpec) -> list[float]:
    """The greedy optimality on ``spec.eval_generated`` instances of the training size whose
    optimum is known by construction (``construction="bound_tight"``, seeds 10,000 on: never
    drawn in training, no solver): a training curve that the easy ``dev`` split cannot give."""
    shape = {"n_jobs": spec.size[0], "n_machines": spec.size[1], "construction": "bound_tight"}
    env = gym.make(spec.env_id, generator=shape)
    try:
        return [play_optimality(policy_model, env, 10_000 + k) for k in range(spec.eval_generated)]
    finally:
        env.close()


def play_optimality(policy_model: Any, env: gym.Env, seed: int, deterministic: bool = True) -> float:
    """Play one episode of the model in ``env`` (reset with ``seed``; sampled actions seeded by it
    too) and return the optimality the env gives it; the env is left at the episode's end."""
    player = CandidateModelPolicy(policy_model, env, deterministic=deterministic)
    player.seed(seed)
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(player(obs, info))
        done = terminated or truncated
    return float(info["metrics"]["optimality"])


def _vec_env(spec: TrainSpec, cases: Sequence[EnvCase]) -> Any:
    """The training envs: the id's native vector env on fresh instances when its view says so,
    else ``n_envs`` pools of the ``cases`` (:class:`~.candidate_views.PooledCandidates`)."""
    view = view_for(spec.env_id)
    if view.vector_kwargs is not None:
        venv = gym.make_vec(spec.env_id, num_envs=spec.n_envs, vectorization_mode="vector_entry_point",
                            generator=tuple(spec.size), **view.vector_kwargs)
        env = load_entry_point(VECTOR_ENV)(venv, view, reward_scale=view.reward_scale)
    else:
        from stable_baselines3.common.vec_env import DummyVecEnv

        def pool() -> gym.Env:
            return PooledCandidates([gym.make(c.env_id, **c.kwargs) for c in cases], view)

        env = DummyVecEnv([pool] * spec.n_envs)
    env.seed(spec.seed)
    return env


def train_candidates(spec: TrainSpec, dev: Sequence[EnvCase], *, progress: bool = True) -> dict[str, Any]:
    """Train, evaluate on the ``dev`` cases as it goes, write ``out`` (see the module doc); returns
    the record. ``dev`` is the id's ``eval_split`` as ``crab_gym.datasets.splits.select`` gives it
    (made by the caller: the baselines sit below the datasets); a pooled problem also trains on it."""
    require("torch", "rl")
    contrib = require("sb3_contrib", "rl", package="sb3-contrib")
    import torch

    torch.set_num_threads(1)
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    if spec.n_envs is None:
        spec.n_envs = 256 if view_for(spec.env_id).vector_kwargs is not None else 8
    cases = list(dev)[: spec.eval_instances] if spec.eval_instances else list(dev)
    if not cases:
        raise ValueError(f"no {spec.eval_split} instances of {spec.env_id} to evaluate on")
    env = _vec_env(spec, cases)
    ppo = {**PPO_DEFAULTS, "n_steps": max(1, ROLLOUT // spec.n_envs), **view_for(spec.env_id).ppo, **spec.ppo}
    ppo["batch_size"] = min(int(ppo["batch_size"]), int(ppo["n_steps"]) * spec.n_envs)
    model = contrib.MaskablePPO(load_entry_point(POLICY_CLASS), env, device="cpu", seed=spec.seed, verbose=0,
                                policy_kwargs={"hidden": spec.hidden, "view": view_for(spec.env_id).name}, **ppo)
    callback = _make_progress_class()(spec, cases, out, progress)
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    try:
        model.learn(total_timesteps=int(spec.steps), callback=callback)
    finally:
        env.close()
        callback.close()
    callback.evaluate(model, final=True)
    keep_last = view_for(spec.env_id).vector_kwargs is not None or not (out / "best_dev.zip").exists()
    if keep_last:
        model.save(out / "model.zip", exclude=list(SAVE_EXCLUDE))
    else:  # a pooled problem: the best on its dev pool
        shutil.copyfile(out / "best_dev.zip", out / "model.zip")
    chosen = callback.curve[-1] if keep_last else callback.best
    model.save(out / "last.zip", exclude=list(SAVE_EXCLUDE))
    record = {
        "spec": asdict(spec),
        "ppo": ppo,
        "command": spec.command(),
        "cpu_s": round(time.process_time() - start_cpu, 1),
        "wall_s": round(time.perf_counter() - start_wall, 1),
        "steps": int(model.num_timesteps),
        "env_cpu_s": round(callback.env_cpu_s, 1),
        "eval_cpu_s": round(callback.eval_cpu_s, 1),
        "best": callback.best,
        "model": {"weights": "last" if keep_last else "best_dev", **(chosen or {})},
        "curve": callback.curve,
        "dev_instances": [c.instance for c in cases],
    }
    train_cpu = record["cpu_s"] - record["eval_cpu_s"]
    record["steps_per_cpu_s"] = round(record["steps"] / max(train_cpu, 1e-9))
    record["env_share"] = round(record["env_cpu_s"] / max(train_cpu, 1e-9), 3)
    (out / "training.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def _make_progress_class() -> type:
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm.auto import tqdm

    class Progress(BaseCallback):
        """A tqdm bar over the steps, the env's CPU time, and the periodic ``dev`` evaluation
        that keeps the best weights in ``out/best_dev.zip``."""

        def __init__(self, spec: TrainSpec, cases: list[EnvCase], out: Path, enabled: bool) -> None:
            super().__init__()
            self.spec, self.cases, self.out = spec, cases, out
            self.bar = tqdm(total=spec.steps, disable=not enabled, desc=f"train {spec.env_id}", unit="step",
                            unit_scale=True, dynamic_ncols=True)
            self.curve: list[dict[str, Any]] = []
            self.best: dict[str, Any] | None = None
            self.env_cpu_s = self.eval_cpu_s = 0.0
            self._next_eval = spec.eval_every if spec.eval_every > 0 else math.inf
            self._cpu0 = time.process_time()
            # fresh instances of a known optimum only where training draws fresh instances
            self.generated = view_for(spec.env_id).vector_kwargs is not None and spec.eval_generated > 0

        def _on_training_start(self) -> None:
            env = self.training_env
            step_wait = env.step_wait

            def timed_step_wait() -> Any:  # the env's share of the CPU time, measured where it runs
                t = time.process_time()
                result = step_wait()
                self.env_cpu_s += time.process_time() - t
                return result

            env.step_wait = timed_step_wait

        def _on_step(self) -> bool:
            self.bar.update(self.model.n_envs)
            if self.num_timesteps >= self._next_eval:
                self._next_eval += self.spec.eval_every
                self.evaluate(self.model)
            return True

        def evaluate(self, model: Any, *, final: bool = False) -> None:
            if final and self.curve and self.curve[-1]["steps"] == model.num_timesteps:
                return
            t = time.process_time()
            values = greedy_optimality(model, self.cases)
            generated = generated_optimality(model, self.spec) if self.generated else None
            self.eval_cpu_s += time.process_time() - t
            point = {"steps": int(model.num_timesteps),
                     "cpu_s": round(time.process_time() - self._cpu0 - self.eval_cpu_s, 1),
                     "dev_optimality": round(statistics.fmean(values), 4)}
            if generated:
                point["generated_optimality"] = round(statistics.fmean(generated), 4)
            self.curve.append(point)
            self.bar.set_postfix(dev=f"{point['dev_optimality']:.3f}")
            if self.best is None or point["dev_optimality"] > self.best["dev_optimality"]:
                self.best = point
                model.save(self.out / "best_dev.zip", exclude=list(SAVE_EXCLUDE))
            progress = {"finished": False, "best": self.best, "curve": self.curve}  # readable while it trains
            (self.out / "curve.json").write_text(json.dumps(progress, indent=2) + "\n")

        def close(self) -> None:
            self.bar.close()

    return Progress


def plot_curve(record: dict[str, Any], path: str | Path) -> Path:
    """The training curve of a ``training.json`` record as a PNG: optimality on ``dev`` (and on
    generated instances of a known optimum, where measured) against CPU seconds (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = record["curve"]
    fig, ax = plt.subplots(figsize=(7, 3.4))
    seconds = [p["cpu_s"] for p in curve]
    ax.plot(seconds, [p["dev_optimality"] for p in curve], marker="o", label=f"{record['spec']['eval_split']} split")
    if any("generated_optimality" in p for p in curve):
        shown = [p for p in curve if "generated_optimality" in p]
        ax.plot([p["cpu_s"] for p in shown], [p["generated_optimality"] for p in shown], marker="s",
                label="generated, optimum known")
    ax.set_xlabel("training CPU seconds (one thread)")
    ax.set_ylabel("greedy optimality")
    ax.set_title(f"{record['spec']['env_id']}: {record['steps']:,} steps in {record['cpu_s']:.0f} CPU-s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    target = Path(path)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
