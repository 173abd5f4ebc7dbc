"""Stable-Baselines3 baselines: MaskablePPO on any env with finite actions.

Every env is wrapped ``gym.make(id) -> your wrappers -> DiscreteActions -> EpisodeStats``
(plus :class:`SB3Observations` when an observation part needs reshaping for SB3), so the
policy picks one flat index among the env's finite choices and ``MaskablePPO`` reads the
legal ones from ``action_masks()`` (also through ``SubprocVecEnv``, which calls the method in
each worker). Needs the ``rl`` extra: ``pip install "crab_gym[rl]"`` (stable-baselines3,
sb3-contrib, torch; a CPU-only torch is enough).

Typical use (``subproc=True`` starts worker processes, which import the main script again:
keep the training under the ``__main__`` guard)::

    from crab_gym.baselines.sb3 import train_maskable_ppo, evaluate_masked
    from crab_gym.datasets.splits import select

    if __name__ == "__main__":
        model = train_maskable_ppo("Realm-P11-v0", 50_000, env_kwargs={"instance": "la01"}, n_envs=2, subproc=True)
        dev = select(["Realm-P11-v0"], split="dev", sizes=["10x5"])  # the dev instances of its size
        print(evaluate_masked(model, dev, episodes=3).mean_metrics)

A saved model plays in a benchmark table as ``crab-gym run --policy sb3:model.zip``
(:mod:`crab_gym.baselines.custom_policy`).
"""

from __future__ import annotations

import functools
import inspect
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym._optional import require
from crab_gym.evaluation.episode import EnvCase
from crab_gym.evaluation.episode_runner import finished_metrics
from crab_gym.wrappers.discrete import (
    DiscreteActions,
    flat_multidiscrete_observation,
    flat_multidiscrete_space,
    needs_flat_multidiscrete,
)

#: A wrapper factory applied between ``gym.make`` and ``DiscreteActions``.
WrapperFn = Callable[[gym.Env], gym.Env]


def _sb3() -> tuple[Any, Any]:
    require("torch", "rl")
    require("stable_baselines3", "rl", package="stable-baselines3")
    contrib = require("sb3_contrib", "rl", package="sb3-contrib")
    from stable_baselines3.common import vec_env

    return contrib, vec_env


def make_masked_env(
    env: str | gym.Env,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    wrappers: Sequence[WrapperFn] = (),
    monitor: bool = True,
) -> gym.Env:
    """One env ready for MaskablePPO: ``make -> wrappers -> DiscreteActions -> EpisodeStats``.

    Args:
        env: an env id (``"Realm-P11-v0"``) or an env instance.
        env_kwargs: keyword arguments for ``gym.make``.
        wrappers: factories applied in order before ``DiscreteActions`` (e.g. a
            ``DisruptionWrapper``).
        monitor: add :class:`EpisodeStats` (episode return and length in ``info["episode"]``
            at the end of an episode, for SB3's logs).
    """
    base = gym.make(env, **dict(env_kwargs or {})) if isinstance(env, str) else env
    for wrap in wrappers:
        base = wrap(base)
    wrapped: gym.Env = DiscreteActions(base)
    if SB3Observations.needed(wrapped.observation_space):
        wrapped = SB3Observations(wrapped)
    check_sb3_observations(wrapped.observation_space, _label(base))
    return EpisodeStats(wrapped) if monitor else wrapped


#: The observation spaces SB3's policies take (alone, or as the parts of one ``Dict``).
SB3_SPACES = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)


def check_sb3_observations(space: gym.Space, label: str) -> None:
    """Refuse, naming the part, an observation SB3 cannot take (the desktop's ``Text`` parts),
    instead of SB3's ``TypeError: 'NoneType' object is not iterable`` from deep inside."""
    parts = space.spaces.items() if isinstance(space, gym.spaces.Dict) else [("", space)]
    for name, part in parts:
        if not isinstance(part, SB3_SPACES):
            where = f"part {name!r}" if name else "observation space"
            keep = [k for k, s in parts if isinstance(s, SB3_SPACES)]
            hint = (f"; wrap it to keep the numeric parts, e.g. wrappers=[lambda env: "
                    f"gymnasium.wrappers.FilterObservation(env, {keep!r})]" if keep else "")
            raise ValueError(
                f"{label}: Stable-Baselines3 cannot take this env's observations: its {where} is "
                f"{type(part).__name__} (SB3 takes Box, Discrete, MultiDiscrete, MultiBinary, or a Dict of them){hint}")


def _label(env: gym.Env) -> str:
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None and getattr(spec, "id", None) else type(env.unwrapped).__name__


class SB3Observations(gym.ObservationWrapper):
    """Reshape the observation parts SB3 cannot take: a ``MultiDiscrete`` with a
    multi-dimensional ``nvec`` (e.g. P3/P4's ``request_places``) becomes a flat one.
    Everything else passes unchanged. ``DiscreteActions`` already does this (by default); this
    wrapper is for an env observed some other way."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = flat_multidiscrete_space(env.observation_space)

    @staticmethod
    def needed(space: gym.Space) -> bool:
        return needs_flat_multidiscrete(space)

    def observation(self, observation: Any) -> Any:
        return flat_multidiscrete_observation(observation, self.env.observation_space)


def sb3_observation(observation: Any, space: gym.Space) -> Any:
    """An env observation in the shape :class:`SB3Observations` gives (for a trained model
    acting on the plain env)."""
    return flat_multidiscrete_observation(observation, space)


class EpisodeStats(gym.Wrapper):
    """Adds ``info["episode"] = {"r": return, "l": length}`` at the end of an episode.

    What SB3 reads for its ``rollout/ep_rew_mean`` log, like SB3's ``Monitor`` but without
    a wall-clock entry (the suite keeps time out of ``info``) and without importing torch
    into every ``SubprocVecEnv`` worker.
    """

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._return, self._length = 0.0, 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        self._length += 1
        if terminated or truncated:
            info = dict(info)
            info["episode"] = {"r": self._return, "l": self._length}
        return obs, reward, terminated, truncated, info


def _make_worker_env(env_id: str, env_kwargs: dict[str, Any], wrappers: tuple[WrapperFn, ...]) -> gym.Env:
    # A fresh worker process has the ids registered: unpickling this function imports this
    # module, and importing any crab_gym module runs crab_gym/__init__.py (register_envs()).
    return make_masked_env(env_id, env_kwargs=env_kwargs, wrappers=wrappers)


def make_masked_vec_env(
    env_id: str,
    n_envs: int = 1,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    wrappers: Sequence[WrapperFn] = (),
    seed: int | None = 0,
    subproc: bool = False,
    start_method: str | None = None,
) -> Any:
    """``n_envs`` masked envs in a ``DummyVecEnv`` (or a ``SubprocVecEnv`` with ``subproc``).

    Env ``i`` is seeded with ``seed + i`` at its first reset. With ``subproc`` the wrapper
    factories must be picklable (module-level functions or ``functools.partial``).
    """
    _, vec_env = _sb3()
    if subproc:  # a worker that cannot build its env dies with EOFError: check here, in words
        make_masked_env(env_id, env_kwargs=env_kwargs, wrappers=wrappers, monitor=False).close()
    thunks = [
        functools.partial(_make_worker_env, env_id, dict(env_kwargs or {}), tuple(wrappers)) for _ in range(n_envs)
    ]
    vec = vec_env.SubprocVecEnv(thunks, start_method=start_method) if subproc else vec_env.DummyVecEnv(thunks)
    if seed is not None:
        vec.seed(seed)
    return vec


def quiet_logger(verbose: int = 0) -> Any:
    """An SB3 ``Logger`` that writes no files and creates no folder (stdout when ``verbose``).

    SB3's default logger makes a ``SB3-<date>`` folder under the temp dir (or
    ``$SB3_LOGDIR``) at every ``learn`` even when it logs nothing; set this one with
    ``model.set_logger(quiet_logger())`` on a model you train yourself.
    """
    _sb3()
    from stable_baselines3.common.logger import HumanOutputFormat, Logger

    return Logger(folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if verbose >= 1 else [])


def default_policy(observation_space: gym.Space) -> str:
    """SB3's policy name for an observation space (Dict -> ``MultiInputPolicy``)."""
    return "MultiInputPolicy" if isinstance(observation_space, gym.spaces.Dict) else "MlpPolicy"


def train_maskable_ppo(
    env_id: str,
    total_timesteps: int,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    wrappers: Sequence[WrapperFn] = (),
    n_envs: int = 1,
    subproc: bool = False,
    seed: int = 0,
    policy: str | None = None,
    ppo_kwargs: Mapping[str, Any] | None = None,
    torch_threads: int | None = 1,
    callback: Any = None,
    verbose: int = 0,
    vec_env: Any = None,
    logger: Any = None,
    progress: bool = True,
) -> Any:
    """Train ``sb3_contrib.MaskablePPO`` on ``env_id``; returns the model.

    Args:
        env_id: a registered id whose env has finite actions.
        total_timesteps: environment steps, over all envs.
        env_kwargs, wrappers, n_envs, subproc: see :func:`make_masked_vec_env`.
        seed: seeds the envs, the policy and torch.
        policy: SB3 policy name (default: from the observation space).
        ppo_kwargs: extra ``MaskablePPO`` arguments (``n_steps``, ``batch_size``, ...).
        torch_threads: ``torch.set_num_threads`` (default 1: torch's default of one thread per
            core made ``learn(1024)`` take 64 s against 4 s on a 2-core machine; None leaves it).
        callback: an SB3 callback.
        verbose: SB3 verbosity (1: progress tables on stdout).
        progress: a progress bar over the steps (tqdm, on stderr).
        logger: an SB3 ``Logger`` (``stable_baselines3.common.logger.configure(folder, [...])``)
            for logs on disk. By default nothing is written to disk: SB3's own default would
            create an empty ``SB3-<date>`` folder in the temp dir on every ``learn``. Passing
            ``tensorboard_log`` in ``ppo_kwargs`` also keeps SB3's own logger (it writes there).
        vec_env: train on this vec env (from :func:`make_masked_vec_env`) instead of making
            one; it is left open. ``env_id`` then only names the run.
    """
    contrib, _ = _sb3()
    import torch

    if torch_threads is not None:
        torch.set_num_threads(int(torch_threads))
    own = vec_env is None
    vec = vec_env if vec_env is not None else make_masked_vec_env(
        env_id, n_envs, env_kwargs=env_kwargs, wrappers=wrappers, seed=seed, subproc=subproc
    )
    kwargs: dict[str, Any] = {"device": "cpu", "seed": seed, "verbose": verbose}
    kwargs.update(ppo_kwargs or {})
    try:
        model = contrib.MaskablePPO(policy or default_policy(vec.observation_space), vec, **kwargs)
        if logger is None and kwargs.get("tensorboard_log") is None:
            logger = quiet_logger(verbose)
        if logger is not None:
            model.set_logger(logger)
        bar = steps_bar(int(total_timesteps), f"train {env_id}") if progress else None
        callbacks = [c for c in (callback, bar) if c is not None]
        model.learn(total_timesteps=int(total_timesteps), callback=callbacks or None)
        if bar is not None:
            bar.close()
    finally:
        if own:
            vec.close()
    return model


def steps_bar(total: int, label: str) -> Any:
    """An SB3 callback showing a tqdm bar over ``total`` env steps."""
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm.auto import tqdm

    class _StepsBar(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.bar = tqdm(total=total, desc=label, unit="step", unit_scale=True, dynamic_ncols=True)

        def _on_step(self) -> bool:
            self.bar.update(self.model.n_envs)
            return True

        def close(self) -> None:
            self.bar.close()

    return _StepsBar()


@dataclass
class MaskedEvaluation:
    """Episodes of a masked policy: returns, lengths, invalid moves and final metrics.

    Each episode record names its env, instance, split and size class (None where the run
    named none), so that an evaluation over a split can be broken down (:meth:`group`)."""

    episodes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mean_return(self) -> float:
        return statistics.fmean(e["return"] for e in self.episodes) if self.episodes else float("nan")

    @property
    def mean_metrics(self) -> dict[str, float]:
        """Means of the numeric final metrics (e.g. ``makespan``, ``optimality``)."""
        names = sorted(
            {k for e in self.episodes for k, v in e["metrics"].items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        )
        return {
            n: statistics.fmean(float(e["metrics"][n]) for e in self.episodes if isinstance(e["metrics"].get(n), (int, float)))
            for n in names
        }

    def group(self, key: str = "instance") -> dict[Any, MaskedEvaluation]:
        """The episodes by one of their labels (``instance``, ``split``, ``size``, ``env_id``, ``seed``),
        in the order they were played: a mean over a split hides which instances the model fails on."""
        groups: dict[Any, MaskedEvaluation] = {}
        for episode in self.episodes:
            groups.setdefault(episode.get(key), MaskedEvaluation()).episodes.append(episode)
        return groups


#: What :func:`evaluate_masked` plays: an env id, an env, or the cases of a split.
EvalTarget = str | gym.Env | Sequence[EnvCase]


def evaluate_masked(
    model: Any,
    env: EvalTarget,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    instances: Sequence[str] | None = None,
    wrappers: Sequence[WrapperFn] = (),
    episodes: int = 5,
    seed: int = 0,
    deterministic: bool = True,
    max_steps: int = 100_000,
) -> MaskedEvaluation:
    """Play ``episodes`` episodes (seeds ``seed``, ``seed + 1``, ...) on every instance asked
    for, with the masks applied.

    A number that describes a model is a mean over a split, not one instance: pass the split's
    cases, ``crab_gym.datasets.splits.select(["Realm-P11-v0"], split="dev", sizes=["10x5"])``
    (made there, since the baselines sit below the datasets), or name ``instances=`` of one id.
    An env id alone plays its default instance (or the one ``env_kwargs`` picks). ``env`` may
    also be an env that already has ``DiscreteActions`` on top. Every move is checked legal by
    the env; ``invalid`` counts the moves it rejected (0 for a masked policy). A model whose
    observation or action space does not fit an instance's is refused before it plays
    (:func:`model_mismatch`), naming the instance.
    """
    if isinstance(env, gym.Env):
        label = _label(env)
        check_model_fits(model, env.observation_space, env.action_space, label)
        return MaskedEvaluation(_play_masked(model, env, _env_case(env), range(seed, seed + episodes),
                                             deterministic=deterministic, max_steps=max_steps))
    result = MaskedEvaluation()
    for case in _eval_cases(env, env_kwargs, instances):
        play = make_masked_env(case.env_id, env_kwargs=case.kwargs, wrappers=wrappers, monitor=False)
        try:
            check_model_fits(model, play.observation_space, play.action_space, _case_label(case))
            result.episodes.extend(_play_masked(model, play, case, range(seed, seed + episodes),
                                                deterministic=deterministic, max_steps=max_steps))
        finally:
            play.close()
    return result


def _eval_cases(env: str | Sequence[EnvCase], env_kwargs: Mapping[str, Any] | None,
                instances: Sequence[str] | None) -> list[EnvCase]:
    """The cases :func:`evaluate_masked` plays: the given ones, the named instances of an id
    (split ``custom``, as ``select`` labels them), or the id's one instance."""
    kwargs = dict(env_kwargs or {})
    if not isinstance(env, str):
        if instances is not None or env_kwargs is not None:
            raise TypeError("evaluate_masked: the cases carry their instances and keywords; "
                            "give instances= and env_kwargs= with an env id only")
        cases = list(env)
        if not all(isinstance(c, EnvCase) for c in cases):
            raise TypeError("evaluate_masked: env must be an env id, an env, or a list of EnvCase "
                            "(crab_gym.datasets.splits.select(...))")
        return cases
    if instances is not None:
        if "instance" in kwargs or "generator" in kwargs:
            raise ValueError("evaluate_masked: env_kwargs already picks the instance; drop it or instances=")
        return [EnvCase(env, {**kwargs, "instance": name}, split="custom", instance=name) for name in instances]
    instance = kwargs.get("instance")
    return [EnvCase(env, kwargs, instance=instance if isinstance(instance, str) else None)]


def _env_case(env: gym.Env) -> EnvCase:
    """The labels of an env given as an object: its id and the instance it was made with."""
    spec = getattr(env, "spec", None)
    kwargs = dict(getattr(spec, "kwargs", None) or {})
    instance = kwargs.get("instance")
    return EnvCase(_label(env), kwargs, instance=instance if isinstance(instance, str) else None)


def _case_label(case: EnvCase) -> str:
    return f"{case.env_id} instance {case.instance}" if case.instance else case.env_id


def _play_masked(model: Any, play: gym.Env, case: EnvCase, seeds: Sequence[int], *, deterministic: bool,
                 max_steps: int) -> list[dict[str, Any]]:
    """One record per seed: ``play`` (with ``DiscreteActions`` on top) driven by the model."""
    records = []
    for episode_seed in seeds:
        obs, info = play.reset(seed=episode_seed)
        total, steps, invalid = 0.0, 0, 0
        terminated = truncated = False
        while not (terminated or truncated) and steps < max_steps:
            masks = play.get_wrapper_attr("action_masks")()
            action, _ = _predict(model, obs, masks, deterministic)
            obs, reward, terminated, truncated, info = play.step(int(np.asarray(action).reshape(-1)[0]))
            total += float(reward)
            steps += 1
            invalid += int(info.get("valid", True) is False)
        records.append({
            "env_id": case.env_id,
            "split": case.split,
            "instance": case.instance,
            "size": case.size,
            "seed": episode_seed,
            "return": total,
            "steps": steps,
            "invalid": invalid,
            "terminated": bool(terminated),
            "metrics": finished_metrics(play, info),  # deferred adaptation solved here
        })
    return records


def _predict(model: Any, observation: Any, masks: np.ndarray, deterministic: bool) -> tuple[Any, Any]:
    """``model.predict`` with the masks: MaskablePPO takes them; a plain PPO model (trained on the
    same flat actions, without masks) gets them applied to its action distribution here, as
    MaskablePPO applies them. Unmasked, a deterministic PPO that picks an illegal move picks it
    again from the unchanged state, until the step cap."""
    if supports_masks(model):
        return model.predict(observation, action_masks=masks, deterministic=deterministic)
    policy = getattr(model, "policy", None)
    if policy is None or not hasattr(policy, "get_distribution"):
        return model.predict(observation, deterministic=deterministic)
    return _masked_ppo_action(policy, observation, masks, deterministic), None


def _masked_ppo_action(policy: Any, observation: Any, masks: np.ndarray, deterministic: bool) -> np.ndarray:
    """A PPO policy's action among the legal ones: its logits with the illegal ones at -inf."""
    import torch

    policy.set_training_mode(False)
    tensor, _ = policy.obs_to_tensor(observation)
    with torch.no_grad():
        logits = policy.get_distribution(tensor).distribution.logits
        legal = torch.as_tensor(np.asarray(masks, dtype=bool).reshape(logits.shape), device=logits.device)
        logits = torch.where(legal, logits, torch.tensor(float("-inf"), device=logits.device))
        action = logits.argmax(dim=-1) if deterministic else torch.distributions.Categorical(logits=logits).sample()
    return action.cpu().numpy()


def supports_masks(model: Any) -> bool:
    """Whether ``model.predict`` takes ``action_masks`` (sb3-contrib's MaskablePPO does, PPO does not)."""
    predict = getattr(model, "predict", None)
    try:
        return predict is not None and "action_masks" in inspect.signature(predict).parameters
    except (TypeError, ValueError):  # a builtin without a signature: assume the masked API
        return True


def model_mismatch(trained: gym.Space, given: gym.Space, part: str = "") -> str | None:
    """Why a model trained on ``trained`` observations cannot take ``given`` ones; None if it can.

    Keys, shapes and the sizes SB3 one-hot encodes (``Discrete.n``, ``MultiDiscrete.nvec``) must
    agree. Box bounds may differ: they follow the instance (a job shop's horizon), and SB3 does
    not rescale a Box by them, so a model trained on ft06 plays any 6x6 instance."""
    where = f"part {part!r}" if part else "the observation"
    if type(trained) is not type(given):
        return f"{where} is {trained} in the model, {given} here"
    if isinstance(trained, gym.spaces.Dict):
        if set(trained.spaces) != set(given.spaces):
            return f"the observation has parts {sorted(trained.spaces)} in the model, {sorted(given.spaces)} here"
        found = (model_mismatch(trained[k], given[k], k) for k in trained.spaces)
        return next((m for m in found if m is not None), None)
    if isinstance(trained, gym.spaces.Discrete):
        same = trained.n == given.n
    elif isinstance(trained, gym.spaces.MultiDiscrete):
        same = np.array_equal(trained.nvec, given.nvec)
    else:
        same = trained.shape == given.shape
    return None if same else f"{where} is {trained} in the model, {given} here"


def check_model_fits(model: Any, observation_space: gym.Space, action_space: gym.Space, label: str) -> None:
    """Refuse, in one line naming ``label``, a model whose spaces are not the ones it would meet
    (a model trained on P11 15x15 run on a 10x5 instance), instead of SB3's shape error mid-episode.
    A model without spaces (a stand-in with only ``predict``) is not checked."""
    why = model_fit_problem(model, observation_space, action_space)
    if why is not None:
        raise ModelMismatchError(f"the model does not fit {label}: {why} (a model plays instances shaped like "
                                 "the ones it was trained on, observed through the same wrappers)")


def model_fit_problem(model: Any, observation_space: gym.Space, action_space: gym.Space) -> str | None:
    """What keeps ``model`` from acting on these spaces (:func:`model_mismatch`, then the number
    of flat actions); None when it fits or has no spaces to compare."""
    trained_obs, trained_act = getattr(model, "observation_space", None), getattr(model, "action_space", None)
    why = model_mismatch(trained_obs, observation_space) if isinstance(trained_obs, gym.Space) else None
    if why is None and isinstance(trained_act, gym.Space) and model_mismatch(trained_act, action_space):
        why = f"the model chooses among {trained_act}, here the actions are {action_space}"
    return why


class ModelMismatchError(ValueError):
    """A trained model's observation or action space is not the env's."""


def masked_spaces(env: gym.Env) -> tuple[gym.Space, gym.Space]:
    """The observation and action spaces :func:`make_masked_env` would give over ``env`` (with no
    more wrappers): what a model trained that way expects of it."""
    codec = getattr(env.unwrapped, "codec", None)
    if codec is None or not hasattr(codec, "n_flat"):
        raise TypeError(f"{_label(env)} has no finite flat actions (no ActionCodec): "
                        "a model trained through DiscreteActions cannot act in it")
    observation_space = env.observation_space
    if SB3Observations.needed(observation_space):
        observation_space = flat_multidiscrete_space(observation_space)
    return observation_space, gym.spaces.Discrete(codec.n_flat)


class MaskablePPOPolicy:
    """A trained MaskablePPO model as a crab_gym policy ``(obs, info) -> tool call``.

    It works on the env *without* ``DiscreteActions`` (the flat index is turned back into a
    tool call through the env's codec), so it plugs into :class:`crab_gym.core.Benchmark`,
    an LLM-free comparison, or a :class:`~crab_gym.wrappers.TrajectoryLogger`. A plain PPO
    model (no masks) plays too; its illegal moves are the env's invalid actions. Sampling
    (``deterministic=False``) draws from torch's generator, which :meth:`seed` sets per episode
    (the runner calls it with the episode's seed) so that a sampled episode can be replayed.
    """

    def __init__(self, model: Any, env: gym.Env, *, deterministic: bool = True, name: str = "maskable_ppo") -> None:
        self.model = model
        self.deterministic = deterministic
        self.name = name
        self.env = self._checked(env)

    def _checked(self, env: gym.Env) -> gym.Env:
        observation_space, action_space = masked_spaces(env)
        check_model_fits(self.model, observation_space, action_space, _label(env))
        return env

    def reset(self, env: gym.Env | None = None) -> None:
        if env is not None and env is not self.env:
            self.env = self._checked(env)

    def seed(self, seed: int) -> None:
        """Seed torch's generator for a sampled episode (a deterministic one draws nothing)."""
        if not self.deterministic:
            import torch

            torch.manual_seed(int(seed))

    def __call__(self, observation: Any, info: dict[str, Any] | None = None) -> dict[str, Any]:
        base = self.env.unwrapped
        masks = np.asarray(base.action_masks(), dtype=bool)
        if not masks.any():
            masks = np.ones_like(masks)
        observation = sb3_observation(observation, base.observation_space)
        action, _ = _predict(self.model, observation, masks, self.deterministic)
        return base.codec.flat_to_call(int(np.asarray(action).reshape(-1)[0]))


def load_maskable_ppo(path: str, **kwargs: Any) -> Any:
    """Load a saved MaskablePPO model (on the CPU)."""
    contrib, _ = _sb3()
    return contrib.MaskablePPO.load(path, device="cpu", **kwargs)
