"""Export recorded trajectories to a Minari dataset (offline RL), with the flattened action.

Minari cannot store ``OneOf`` action spaces, so each step's tool call is stored as its flat
index over the env's finite choices (``codec.call_to_flat``): the dataset's action space is
``Discrete(codec.n_flat)``, the space of :class:`~crab_gym.wrappers.DiscreteActions`, and
``dataset.recover_environment()`` gives ``DiscreteActions(gym.make(env_id))``.

The observations are not taken from the log (it keeps only summaries by default): each
episode is re-run from its recorded seed and actions, and every observation is checked
against the recorded hash, so the dataset holds exactly what the policy saw.

Needs the optional ``minari`` package with its Arrow storage:
``pip install "minari[arrow]"``. Steps the flat space cannot hold -- a non-finite action such
as ``submit_plan``, or a malformed call -- make the export fail with the episode and step
named, unless ``skip_unflattenable=True`` drops those episodes.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym._optional import require
from crab_gym.wrappers._jsonable import decode_value, digest
from crab_gym.wrappers.discrete import DiscreteActions
from crab_gym.wrappers.trajectory import Trajectory, _make_env, read_trajectories


class UnflattenableStepError(ValueError):
    """A recorded step whose action has no flat index (non-finite or malformed)."""


def export_minari(
    trajectories: str | os.PathLike[str] | Sequence[Trajectory],
    dataset_id: str,
    *,
    env: gym.Env | None = None,
    data_path: str | os.PathLike[str] | None = None,
    skip_unflattenable: bool = False,
    include_incomplete: bool = False,
    algorithm_name: str | None = None,
    author: str | None = None,
    author_email: str | None = None,
    code_permalink: str | None = None,
    description: str | None = None,
    overwrite: bool = False,
) -> Any:
    """Write the recorded episodes as a Minari dataset; return the loaded ``MinariDataset``.

    Args:
        trajectories: a trajectory file or the result of ``read_trajectories``.
        dataset_id: Minari's id, e.g. ``"crab_gym/realm-p11/random-v0"``.
        env: the env to re-run the episodes on (fresh, built like the recorded one); default:
            rebuilt from the header, as :func:`~crab_gym.wrappers.replay` does.
        data_path: the datasets folder (default: ``MINARI_DATASETS_PATH`` or ``~/.minari``).
        skip_unflattenable: drop episodes with a step that has no flat index instead of
            raising :class:`UnflattenableStepError`.
        include_incomplete: also export episodes that neither terminated nor were truncated
            (a crash or an early reset cut them off); they are stored as truncated.
        algorithm_name: defaults to the recorded policy name.
        author, author_email, code_permalink, description: Minari metadata.
        overwrite: replace a dataset of the same id in ``data_path`` (else a ``FileExistsError``
            saying so: Minari never writes over a dataset).
    """
    minari = require("minari", "minari", package='"minari[arrow]"')
    require("pyarrow", "minari", package='"minari[arrow]"')
    from minari.data_collector.episode_buffer import EpisodeBuffer

    episodes = read_trajectories(trajectories) if isinstance(trajectories, (str, os.PathLike)) else list(trajectories)
    buffers: list[Any] = []
    spaces_env: gym.Env | None = None
    policies: set[str] = set()
    envs = _Envs(env)
    try:
        for index, traj in enumerate(episodes):
            current = envs.for_episode(traj, keep=spaces_env)
            observations = _rerun(current, traj, index, envs.use_raw)
            actions = _exported_actions(current, traj, index, include_incomplete, skip_unflattenable)
            if actions is None:
                continue
            spaces_env = spaces_env or current
            if traj.policy:
                policies.add(traj.policy)
            buffers.append(_episode_buffer(EpisodeBuffer, len(buffers), traj, observations, actions))
        if not buffers:
            raise ValueError("no episode could be exported (none recorded, or every one was skipped)")
        assert spaces_env is not None
        metadata = {"algorithm_name": algorithm_name or (", ".join(sorted(policies)) or None), "author": author,
                    "author_email": author_email, "code_permalink": code_permalink, "description": description}
        return _create_dataset(minari, dataset_id, buffers, spaces_env, data_path, metadata, overwrite)
    finally:
        envs.close()


class _Envs:
    """The env each recorded episode is re-run on: the caller's, or one rebuilt per recorded spec."""

    def __init__(self, given: gym.Env | None) -> None:
        self.given = given
        self.current: gym.Env | None = given
        self.key: Any = None
        self.use_raw = given is not None

    def for_episode(self, traj: Trajectory, keep: gym.Env | None) -> gym.Env:
        """The env for ``traj``: rebuilt when the recorded spec changes (``keep``, whose spaces
        the dataset takes, is not closed then)."""
        if self.given is None:
            key = (traj.header.get("env_spec"), traj.env_id, repr(sorted(traj.env_kwargs.items())))
            if key != self.key:
                if self.current is not None and self.current is not keep:
                    self.current.close()
                self.current, self.use_raw = _make_env(traj)
                self.key = key
        assert self.current is not None
        return self.current

    def close(self) -> None:
        """Close the env this export built (never the caller's)."""
        if self.given is None and self.current is not None:
            self.current.close()


def _exported_actions(
    env: gym.Env, traj: Trajectory, index: int, include_incomplete: bool, skip_unflattenable: bool
) -> list[int] | None:
    """The episode's flat actions, or None where it is not exported (cut off, unflattenable, empty)."""
    if not traj.complete and not include_incomplete:
        warnings.warn(f"episode {index} did not end (cut off); not exported", stacklevel=3)
        return None
    try:
        actions = [_flat(env, record, index) for record in traj.steps]
    except UnflattenableStepError:
        if skip_unflattenable:
            return None
        raise
    return actions or None


def _episode_buffer(
    buffer_type: Any, buffer_id: int, traj: Trajectory, observations: list[Any], actions: list[int]
) -> Any:
    """One Minari ``EpisodeBuffer``; an episode that was cut off ends truncated."""
    terminations = [bool(s.get("terminated")) for s in traj.steps]
    truncations = [bool(s.get("truncated")) for s in traj.steps]
    if not traj.complete:
        truncations[-1] = True
    return buffer_type(
        id=buffer_id,
        seed=traj.seed,
        options=traj.header.get("options"),
        observations=_stack(observations),
        actions=np.asarray(actions, dtype=np.int64),
        rewards=[float(s["reward"]) for s in traj.steps],
        terminations=terminations,
        truncations=truncations,
        infos={},
    )


def _create_dataset(
    minari: Any,
    dataset_id: str,
    buffers: list[Any],
    spaces_env: gym.Env,
    data_path: str | os.PathLike[str] | None,
    metadata: dict[str, Any],
    overwrite: bool = False,
) -> Any:
    """Write the buffers as a dataset over the flat action space and load it back."""
    codec = spaces_env.unwrapped.codec
    recover = _recoverable_spec(spaces_env)
    with _datasets_path(data_path), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Minari nags about unset metadata
        if dataset_id in minari.list_local_datasets():
            if not overwrite:
                raise FileExistsError(f"a Minari dataset {dataset_id!r} already exists in "
                                      f"{data_path or 'the default folder'}: pass overwrite=True to replace it, "
                                      "or another dataset_id")
            minari.delete_dataset(dataset_id)
        minari.create_dataset_from_buffers(
            dataset_id,
            buffers,
            env=recover,
            action_space=gym.spaces.Discrete(codec.n_flat),
            observation_space=spaces_env.observation_space,
            data_format="arrow",
            **metadata,
        )
        return minari.load_dataset(dataset_id)


def _rerun(env: gym.Env, traj: Trajectory, index: int, use_raw: bool) -> list[Any]:
    """Replay one episode; return its observations (reset + one per step), hash-checked."""
    obs, _ = env.reset(seed=traj.seed, options=traj.header.get("options"))
    _check(traj.header.get("obs_digest"), obs, index, 0)
    observations = [obs]
    for record in traj.steps:
        call = record.get("action")
        action = decode_value(record.get("raw_action")) if use_raw or call is None else call
        obs, *_ = env.step(action)
        _check(record.get("obs_digest"), obs, index, int(record.get("step", 0)))
        observations.append(obs)
    return observations


def _check(recorded: str | None, obs: Any, episode: int, step: int) -> None:
    if recorded is not None and recorded != digest(obs):
        where = "reset" if step == 0 else f"step {step}"
        raise ValueError(
            f"episode {episode}, {where}: the re-run observation differs from the recorded one; "
            "pass the env the episodes were recorded on (same wrappers) as env="
        )


def _flat(env: gym.Env, record: dict[str, Any], episode: int) -> int:
    call = record.get("action")
    step = record.get("step")
    if call is None:
        raise UnflattenableStepError(f"episode {episode}, step {step}: a malformed action has no flat index")
    codec = env.unwrapped.codec
    if not codec.is_finite(call["name"]):
        raise UnflattenableStepError(
            f"episode {episode}, step {step}: action {call['name']!r} has non-finite parameters, so the "
            f"flat Discrete({codec.n_flat}) space cannot hold it (pass skip_unflattenable=True to drop such episodes)"
        )
    return int(codec.call_to_flat(call))


def _stack(observations: list[Any]) -> Any:
    """A list of observations -> Minari's column form (dicts and tuples of stacked arrays)."""
    first = observations[0]
    if isinstance(first, dict):
        return {k: _stack([o[k] for o in observations]) for k in first}
    if isinstance(first, tuple):
        return tuple(_stack([o[i] for o in observations]) for i in range(len(first)))
    if isinstance(first, str):
        return list(observations)
    return np.stack([np.asarray(o) for o in observations])


def _recoverable_spec(env: gym.Env) -> Any:
    """The spec of ``DiscreteActions(<the env>)`` when JSON can hold it, for
    ``dataset.recover_environment()``; else None."""
    spec = env.spec
    if spec is None:
        return None
    try:
        has_flat = any(w.name == "DiscreteActions" for w in spec.additional_wrappers)
        if not has_flat:
            spec = DiscreteActions(env).spec
        spec.to_json()
        return spec
    except Exception:
        return None


@contextlib.contextmanager
def _datasets_path(path: str | os.PathLike[str] | None) -> Iterator[None]:
    if path is None:
        yield
        return
    old = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(Path(path).resolve())  # Minari mangles relative paths
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = old
