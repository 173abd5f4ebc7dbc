"""TrajectoryLogger: record episodes as JSON Lines; read them back; replay them.

One file holds any number of episodes. Each line is one JSON object with a ``"type"``:

* ``"episode"`` (at every reset): ``env_id``, ``env_kwargs``, ``env_spec`` (Gymnasium's JSON
  spec of the env *below* the logger, wrappers included, when it can be serialised),
  ``wrappers``, ``seed``, ``options``, ``policy``, ``versions`` (Python and packages), the
  reset ``observation`` summary, ``obs_digest`` and ``info``;
* ``"step"``: ``step`` (from 1), ``action`` (the tool call ``{"name", "arguments"}`` the env
  ran, or None when the action was malformed), ``raw_action`` (the action exactly as given,
  losslessly encoded), ``reward``, ``terminated``, ``truncated``, ``info``, ``observation``
  (a summary), ``obs_digest`` (a hash of the full observation) and, for LLM policies, ``llm``:
  with a text env (an LLM adapter) the ``prompt`` the model saw, its ``response``, the
  parsed ``tool_call`` and any ``error``; plus whatever ``info`` holds under
  :data:`LLM_INFO_KEYS` and what the agent passed to :meth:`TrajectoryLogger.attach_llm`;
* ``"end"``: ``steps``, ``return``, ``terminated``, ``truncated`` and the final ``metrics``.

Crash safety: every line is flushed as it is written, so a crash loses at most the step in
flight, and :func:`read_trajectories` skips a truncated last line. Resuming with
``append=True`` first repairs such a file (:func:`repair_torn_tail`: the partial record is cut
off, with a :class:`TornRecordWarning`), so the new records start on a line of their own;
the reader also skips a torn record in the middle of a file where a later run resumed it.

Replay: a first ``reset`` without a seed would make the episode irreproducible, so the
logger then draws a seed itself (from fresh entropy: the env is just as random) and records
it. Later unseeded resets continue the env's generator, as Gymnasium does, and a replay that
runs the file's episodes in order on one env reproduces them too.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec

from crab_gym.wrappers._jsonable import decode_value, digest, encode_value, to_jsonable

#: Version tag of the file format, written in every episode header.
FORMAT = "crab_gym.trajectory/1"

#: ``info`` keys an LLM adapter may use for the step's messages / tool calls.
LLM_INFO_KEYS = ("llm", "llm_messages", "messages", "tool_calls", "raw_response")

_CORE_PACKAGES = ("crab_gym", "gymnasium", "numpy", "pydantic", "networkx", "ortools")
_OPTIONAL_PACKAGES = {  # import name -> distribution name; recorded only when imported
    "torch": "torch",
    "stable_baselines3": "stable-baselines3",
    "sb3_contrib": "sb3-contrib",
    "openai": "openai",
    "minari": "minari",
}
#: Wrappers ``gym.make`` adds that do not change what an env does.
_TRANSPARENT_WRAPPERS = {"PassiveEnvChecker", "OrderEnforcing", "EnvChecker"}

ObsMode = Literal["summary", "full", "none"]

#: How every episode header starts on disk (compact separators, ``type`` first): how the
#: reader finds a resumed run's header glued to a torn record by an older writer.
_HEADER_START = '{"type":"episode"'


class TornRecordWarning(UserWarning):
    """A trajectory file held a record cut off mid-write (a crash); it was dropped."""


def repair_torn_tail(path: str | os.PathLike[str]) -> int:
    """Make a trajectory file end on a whole line before more records are appended to it.

    A crash mid-write leaves a last line without its newline; appending after it would glue
    the next record onto that line. A tail that is a whole record only lacks its newline
    (it is added); a partial record is truncated away. Returns the number of bytes dropped
    (0 when the file is missing, empty or whole) and warns (:class:`TornRecordWarning`)
    when it drops any.
    """
    return _repair_torn_tail(path, stacklevel=3)


def _repair_torn_tail(path: str | os.PathLike[str], *, stacklevel: int) -> int:
    """:func:`repair_torn_tail`, warning ``stacklevel`` frames up (at its callers' caller)."""
    dropped = _cut_torn_tail(path)
    if dropped:
        warnings.warn(f"{path}: the last record was cut off mid-write (a crash?); dropped its {dropped} "
                      "byte(s) so that new records start on a line of their own",
                      TornRecordWarning, stacklevel=stacklevel)
    return dropped


def _cut_torn_tail(path: str | os.PathLike[str]) -> int:
    """Cut a torn last record off the file (or add the missing newline); the bytes dropped."""
    try:
        f = open(path, "rb+")  # noqa: SIM115
    except FileNotFoundError:
        return 0
    with f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        start, pos = 0, size
        while pos > 0:  # the start of the last line: scan back in chunks
            chunk = min(1 << 16, pos)
            pos -= chunk
            f.seek(pos)
            newline = f.read(chunk).rfind(b"\n")
            if newline >= 0:
                start = pos + newline + 1
                break
        f.seek(start)
        if _parse_record(f.read()) is not None:
            f.seek(size)
            f.write(b"\n")
            return 0
        f.truncate(start)
    return size - start


def _parse_record(data: bytes | str) -> dict[str, Any] | None:
    """The record a line holds, or None when it is not a whole trajectory record."""
    try:
        record = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) and "type" in record else None


def package_versions() -> dict[str, str]:
    """Python and the versions of the packages that decide an episode's outcome."""
    versions = {"python": platform.python_version()}
    names = list(_CORE_PACKAGES) + [dist for mod, dist in _OPTIONAL_PACKAGES.items() if mod in sys.modules]
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def summarize_observation(obs: Any, *, text_limit: int = 4000, small: int = 16) -> Any:
    """A compact, readable JSON summary of an observation.

    Arrays give their shape and dtype, their values when they hold at most ``small``
    numbers, else min/max/sum; strings (LLM prompts) are kept up to ``text_limit``
    characters; dicts and tuples are summarised field by field.
    """
    if isinstance(obs, dict):
        return {str(k): summarize_observation(v, text_limit=text_limit, small=small) for k, v in obs.items()}
    if isinstance(obs, (tuple, list)):
        return [summarize_observation(v, text_limit=text_limit, small=small) for v in obs[:small]]
    if isinstance(obs, str):
        out: dict[str, Any] = {"text": obs[:text_limit]}
        if len(obs) > text_limit:
            out["length"] = len(obs)
        return out
    if isinstance(obs, (np.ndarray, np.generic)):
        arr = np.asarray(obs)
        out = {"shape": list(arr.shape), "dtype": str(arr.dtype)}
        if arr.size <= small:
            out["values"] = to_jsonable(arr.tolist())
        elif arr.dtype.kind in "biuf":
            out.update(min=to_jsonable(arr.min()), max=to_jsonable(arr.max()), sum=to_jsonable(arr.sum()))
        return out
    return to_jsonable(obs)


class TrajectoryLogger(gym.Wrapper):
    """Record every episode of the wrapped env to a JSON Lines file.

    Args:
        env: any Gymnasium env (a CrabEnv, possibly wrapped: an LLM adapter, DiscreteActions).
        path: the ``.jsonl`` file to write; its folder is created.
        policy: the name of the policy acting (also settable later: ``logger.policy = ...``).
        append: add to an existing file instead of starting it afresh.
        observations: ``"summary"`` (default, see :func:`summarize_observation`), ``"full"``
            (every observation in the lossless encoding of :func:`encode_value`, for offline
            RL straight from the file), ``"none"``, or a callable ``obs -> JSON``. The
            ``obs_digest`` hash is always written, so any mode can be replayed and checked.
        env_id, env_kwargs: recorded in the header; default to ``env.spec``.
        fsync: also ``os.fsync`` after each line (survives a power cut, costs time).

    A file that ends in a torn record (the previous run crashed mid-write) is repaired
    before appending: see :func:`repair_torn_tail`.
    """

    def __init__(
        self,
        env: gym.Env,
        path: str | os.PathLike[str],
        *,
        policy: str | None = None,
        append: bool = False,
        observations: ObsMode | Callable[[Any], Any] = "summary",
        env_id: str | None = None,
        env_kwargs: dict[str, Any] | None = None,
        fsync: bool = False,
    ) -> None:
        super().__init__(env)
        if not callable(observations) and observations not in ("summary", "full", "none"):
            raise ValueError(f"observations must be 'summary', 'full', 'none' or a callable, got {observations!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.policy = policy
        self.observations = observations
        self.fsync = fsync
        spec = env.spec
        self.env_id = env_id if env_id is not None else (spec.id if spec is not None else None)
        self.env_kwargs = dict(env_kwargs) if env_kwargs is not None else dict(spec.kwargs if spec else {})
        if append:
            _repair_torn_tail(self.path, stacklevel=3)
        self._file = open(self.path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115
        self._episode = -1
        self._step = 0
        self._return = 0.0
        self._ended = True
        self._ever_reset = False
        self._last_obs: Any = None
        self._pending_llm: dict[str, Any] = {}

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if seed is None and not self._ever_reset:
            seed = int(np.random.SeedSequence().generate_state(1)[0] & 0x7FFFFFFF)
        self._ever_reset = True
        obs, info = self.env.reset(seed=seed, options=options)
        self._episode += 1
        self._step = 0
        self._return = 0.0
        self._ended = False
        header = {
            "type": "episode",
            "format": FORMAT,
            "episode": self._episode,
            "env_id": self.env_id,
            "env_kwargs": to_jsonable(self.env_kwargs),
            "env_spec": self._spec_json(),
            "wrappers": self._wrapper_names(),
            "seed": seed,
            "options": to_jsonable(options),
            "policy": self.policy,
            "versions": package_versions(),
            "observation": self._summary(obs),
            "obs_digest": digest(obs),
            "info": to_jsonable(info),
        }
        self._write(header)
        self._last_obs = obs
        return obs, info

    def attach_llm(self, **data: Any) -> None:
        """Attach LLM data (e.g. ``messages=[...]``, ``tool_calls=[...]``, ``usage={...}``) to
        the *next* step record's ``llm`` entry: for agents that keep the conversation."""
        self._pending_llm.update(to_jsonable(data))

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._step += 1
        self._return += float(reward)
        record: dict[str, Any] = {
            "type": "step",
            "episode": self._episode,
            "step": self._step,
            "action": _tool_call(info),
            "raw_action": encode_value(action),
            "reward": to_jsonable(float(reward)),
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "info": to_jsonable(info),
            "observation": self._summary(obs),
            "obs_digest": digest(obs),
        }
        llm = self._llm_record(action, info)
        if llm:
            record["llm"] = llm
        self._last_obs = obs
        self._write(record)
        if (terminated or truncated) and not self._ended:
            self._ended = True
            metrics = info.get("metrics", {}) if isinstance(info, dict) else {}
            self._write(
                {
                    "type": "end",
                    "episode": self._episode,
                    "steps": self._step,
                    "return": to_jsonable(self._return),
                    "terminated": bool(terminated),
                    "truncated": bool(truncated),
                    "metrics": to_jsonable(metrics),
                }
            )
        return obs, reward, terminated, truncated, info

    @property
    def spec(self) -> Any:
        """The wrapped env's spec: recording changes nothing, and an env rebuilt from a spec
        (``gym.make(env.spec)``) must not write to this file again."""
        return self.env.spec

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
        super().close()

    # ------------------------------------------------------------------ internals
    def _write(self, record: dict[str, Any]) -> None:
        if self._file.closed:
            raise ValueError(f"the trajectory file {self.path} is closed (the env was closed)")
        self._file.write(json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n")
        self._file.flush()
        if self.fsync:
            os.fsync(self._file.fileno())

    def _summary(self, obs: Any) -> Any:
        if callable(self.observations):
            return to_jsonable(self.observations(obs))
        if self.observations == "summary":
            return summarize_observation(obs)
        if self.observations == "full":
            return encode_value(obs)
        return None

    def _spec_json(self) -> str | None:
        spec = self.env.spec
        if spec is None:
            return None
        try:
            return spec.to_json()
        except Exception:  # kwargs that are not JSON (callables, objects): replay needs env=
            return None

    def _wrapper_names(self) -> list[str]:
        names = []
        env = self.env
        while isinstance(env, gym.Wrapper):
            if env.class_name() not in _TRANSPARENT_WRAPPERS:
                names.append(env.class_name())
            env = env.env
        return names

    def _llm_record(self, action: Any, info: Any) -> dict[str, Any]:
        """The step's LLM exchange: a text env's prompt and reply (an LLM adapter), what the
        info carries under :data:`LLM_INFO_KEYS`, and what :meth:`attach_llm` gave."""
        out: dict[str, Any] = {}
        if isinstance(action, str) and isinstance(self._last_obs, str):
            out["prompt"] = self._last_obs
            out["response"] = action
            out["tool_call"] = _tool_call(info)
            if isinstance(info, dict) and info.get("error"):
                out["error"] = to_jsonable(info["error"])
        if isinstance(info, dict):
            for key in LLM_INFO_KEYS:
                value = info.get(key)
                if value is None:
                    continue
                if key == "llm" and isinstance(value, dict):
                    out.update(to_jsonable(value))
                else:
                    out[key] = to_jsonable(value)
        if self._pending_llm:
            out.update(self._pending_llm)
            self._pending_llm = {}
        return out


def _tool_call(info: Any) -> dict[str, Any] | None:
    call = info.get("action") if isinstance(info, dict) else None
    if isinstance(call, dict) and "name" in call:
        return to_jsonable(call)
    return None


# ====================================================================== reading
@dataclass
class Trajectory:
    """One recorded episode: its header, its step records and its end record (if it ended)."""

    header: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None

    @property
    def env_id(self) -> str | None:
        return self.header.get("env_id")

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return dict(self.header.get("env_kwargs") or {})

    @property
    def seed(self) -> int | None:
        return self.header.get("seed")

    @property
    def policy(self) -> str | None:
        return self.header.get("policy")

    @property
    def actions(self) -> list[dict[str, Any] | None]:
        """The tool calls, one per step (None for a malformed action)."""
        return [s.get("action") for s in self.steps]

    @property
    def raw_actions(self) -> list[Any]:
        """The actions exactly as the policy gave them (decoded)."""
        return [decode_value(s.get("raw_action")) for s in self.steps]

    @property
    def rewards(self) -> list[float]:
        return [float(s["reward"]) for s in self.steps]

    @property
    def episode_return(self) -> float:
        return float(sum(self.rewards))

    @property
    def complete(self) -> bool:
        """True when the episode terminated or was truncated (not cut off by a crash/reset)."""
        return self.end is not None

    def __len__(self) -> int:
        return len(self.steps)


def iter_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Every JSON record of a trajectory file, in order, skipping records torn by a crash.

    A torn record is a line that does not parse and is the last line (the line in flight
    when the writer stopped) or is followed by an episode header (a run resumed the file
    with ``append=True``; an older writer even glued that header onto the torn line: it is
    recovered). The skipped middle ones are reported with a :class:`TornRecordWarning`.
    Any other line that does not parse means the file is damaged: ``ValueError`` names the
    file and the line.
    """
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
            record = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if number == len(lines):
                return  # the line in flight when the writer stopped
            resumed = _resumed_header(raw)
            if resumed is not None or _next_is_header(lines, number):
                warnings.warn(f"{path}, line {number}: skipped a record cut off mid-write (a crash)",
                              TornRecordWarning, stacklevel=2)
                if resumed is not None:
                    yield resumed
                continue
            raise ValueError(f"{path}, line {number}: not a JSON record ({exc})") from None
        if not isinstance(record, dict) or "type" not in record:
            raise ValueError(f"{path}, line {number}: not a trajectory record (no 'type')")
        yield record


def _resumed_header(raw: bytes) -> dict[str, Any] | None:
    """An episode header glued after torn bytes on one line, or None."""
    text = raw.decode("utf-8", errors="replace")
    at = text.find(_HEADER_START, 1)
    while at > 0:
        record = _parse_record(text[at:])
        if record is not None and record["type"] == "episode":
            return record
        at = text.find(_HEADER_START, at + 1)
    return None


def _next_is_header(lines: list[bytes], number: int) -> bool:
    """Whether the first non-blank line after line ``number`` (1-based) is an episode header."""
    for raw in lines[number:]:
        if raw.strip():
            record = _parse_record(raw)
            return record is not None and record["type"] == "episode"
    return False


def read_trajectories(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Load every episode of a trajectory file (see :class:`Trajectory`)."""
    episodes: list[Trajectory] = []
    for record in iter_records(path):
        kind = record["type"]
        if kind == "episode":
            episodes.append(Trajectory(header=record))
        elif not episodes:
            raise ValueError(f"{path}: a '{kind}' record comes before any episode header")
        elif kind == "step":
            episodes[-1].steps.append(record)
        elif kind == "end":
            episodes[-1].end = record
    return episodes


# ====================================================================== replay
@dataclass
class Difference:
    """One way a replayed step differs from the recording."""

    episode: int
    step: int
    field: str
    recorded: Any
    replayed: Any

    def __str__(self) -> str:
        where = "reset" if self.step == 0 else f"step {self.step}"
        return f"episode {self.episode}, {where}: {self.field} recorded {self.recorded!r}, replayed {self.replayed!r}"


@dataclass
class ReplayReport:
    """What a replay found: nothing (``ok``) or the differing rewards/observations/flags."""

    episodes: int = 0
    steps: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def __str__(self) -> str:
        head = f"replayed {self.episodes} episode(s), {self.steps} step(s): "
        if self.ok:
            return head + "identical"
        lines = [head + f"{len(self.differences)} difference(s)"]
        lines += [f"  {d}" for d in self.differences[:20]]
        if len(self.differences) > 20:
            lines.append(f"  ... and {len(self.differences) - 20} more")
        return "\n".join(lines)


def replay(
    path: str | os.PathLike[str],
    env: gym.Env | None = None,
    *,
    episodes: Sequence[int] | None = None,
    actions: Literal["auto", "raw", "call"] = "auto",
    reward_tol: float = 1e-9,
) -> ReplayReport:
    """Re-run the recorded actions on a fresh env with the recorded seeds; report differences.

    Args:
        path: a file written by :class:`TrajectoryLogger`.
        env: the env to replay on (fresh, built like the recorded one, wrappers included).
            Default: rebuilt from the header -- from ``env_spec`` (which keeps the wrappers
            that record their arguments, e.g. ``DiscreteActions``), else
            ``gym.make(env_id, **env_kwargs)``.
        episodes: indices (in file order) to check; the episodes before the last one asked
            for are still replayed, so that unseeded resets see the same generator state.
        actions: ``"raw"`` feeds the actions exactly as recorded; ``"call"`` feeds the tool
            calls (for an env rebuilt without the recorded wrappers); ``"auto"`` uses raw
            actions when the env is given or rebuilt from the spec, tool calls otherwise.
        reward_tol: absolute tolerance on rewards.

    A malformed recorded action (no tool call) is fed raw in every mode, so the env rejects
    it again.
    """
    trajectories = read_trajectories(path)
    wanted = set(range(len(trajectories))) if episodes is None else set(int(i) for i in episodes)
    last = max(wanted) if wanted else -1
    report = ReplayReport()
    current: gym.Env | None = env
    current_key: Any = None
    use_raw = actions == "raw"
    for index, traj in enumerate(trajectories[: last + 1]):
        check = index in wanted
        if env is None:
            key = (traj.header.get("env_spec"), traj.env_id, json.dumps(traj.env_kwargs, sort_keys=True))
            if key != current_key:
                if current is not None:
                    current.close()
                current, from_spec = _make_env(traj)
                current_key = key
                use_raw = actions == "raw" or (actions == "auto" and from_spec)
        elif actions == "auto":
            use_raw = True
        assert current is not None
        _replay_episode(current, traj, index, check, use_raw, reward_tol, report)
    if env is None and current is not None:
        current.close()
    return report


def _make_env(traj: Trajectory) -> tuple[gym.Env, bool]:
    spec_json = traj.header.get("env_spec")
    if spec_json:
        try:
            return gym.make(EnvSpec.from_json(spec_json)), True
        except Exception:
            pass  # an unregistered wrapper or entry point: fall back to the id
    if not traj.env_id:
        raise ValueError("the trajectory names no env id; pass the env to replay on as env=")
    return gym.make(traj.env_id, **traj.env_kwargs), False


def _replay_episode(
    env: gym.Env, traj: Trajectory, index: int, check: bool, use_raw: bool, tol: float, report: ReplayReport
) -> None:
    diffs = report.differences
    obs, _ = env.reset(seed=traj.seed, options=traj.header.get("options"))
    if check:
        report.episodes += 1
        if traj.header.get("obs_digest") not in (None, digest(obs)):
            diffs.append(Difference(index, 0, "observation", traj.header["obs_digest"], digest(obs)))
    for record in traj.steps:
        call = record.get("action")
        action = decode_value(record.get("raw_action")) if use_raw or call is None else call
        obs, reward, terminated, truncated, _ = env.step(action)
        if not check:
            continue
        report.steps += 1
        step = int(record.get("step", 0))
        recorded_reward = float(record["reward"])
        if not abs(float(reward) - recorded_reward) <= tol:
            diffs.append(Difference(index, step, "reward", recorded_reward, float(reward)))
        if record.get("obs_digest") not in (None, digest(obs)):
            diffs.append(Difference(index, step, "observation", record["obs_digest"], digest(obs)))
        for flag, value in (("terminated", terminated), ("truncated", truncated)):
            if bool(record.get(flag)) != bool(value):
                diffs.append(Difference(index, step, flag, bool(record.get(flag)), bool(value)))
