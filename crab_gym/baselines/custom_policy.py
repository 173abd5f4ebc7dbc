"""Your own agent in the benchmark table: ``crab-gym run --policy module:factory`` and
``crab-gym run --policy sb3:model.zip``.

The registry's policy names hold no colon; a ``--policy`` name that does is one of these:

* ``module:factory`` (also ``module:Class`` or ``module:obj.attr``): an importable callable
  ``factory(env) -> policy``, where ``policy(obs, info) -> action`` may have ``reset(env)`` and
  ``seed(seed)`` (the episode runner calls them when present), or a policy class built
  with the env (or with nothing, when its constructor takes no argument). It fits any env,
  unless the callable has an ``env_ids`` attribute listing the ids it fits. A module in the
  current directory is found too, as ``uvicorn module:app`` finds one.
* ``sb3:PATH`` (``sb3:PATH?stochastic`` samples its actions): a model saved by Stable-Baselines3's
  ``model.save``: MaskablePPO (sb3-contrib) or PPO, trained through
  :func:`crab_gym.baselines.sb3.make_masked_env` (``DiscreteActions``: one flat index over the
  env's finite actions, with masks). It plays as :class:`~crab_gym.baselines.sb3.MaskablePPOPolicy`
  does: the same observation reshaping, the env's masks, deterministic unless asked. A model
  trained with observation wrappers of its own (e.g. scaled observations) needs those wrappers:
  play it through a ``module:factory`` that applies them.

The report row is the name as given. Worker processes and Ray tasks receive picklable
factories: :class:`ImportedPolicy` imports ``module:attr`` by name in the worker, and
:class:`SB3ModelPolicy` carries the model file's bytes (read once, so that the run plays the
file as it was when the run began, and workers on other machines need no copy) and loads the
model once per process.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import io
import json
import os
import sys
import threading
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from crab_gym._optional import require
from crab_gym.baselines.candidate_views import VIEWS, CandidateModelPolicy
from crab_gym.baselines.registry import PolicySpec, policy_specs
from crab_gym.baselines.sb3 import MaskablePPOPolicy, masked_spaces, model_fit_problem
from crab_gym.core.keywords import did_you_mean
from crab_gym.evaluation.episode import EnvCase

#: The prefix of a saved Stable-Baselines3 model: ``sb3:PATH``.
SB3_PREFIX = "sb3:"
#: Suffixes of ``sb3:PATH`` that choose how actions are picked (deterministic is the default).
SB3_MODES = {"?stochastic": False, "?deterministic": True}
#: The algorithm that loads a model, by the module of the policy class its file names.
ALGORITHMS = {"sb3_contrib.common.maskable": "MaskablePPO", "stable_baselines3.common.policies": "PPO",
              "crab_gym.baselines.candidate_policy": "MaskablePPO"}


class CustomPolicyError(ValueError):
    """A ``module:factory`` or ``sb3:PATH`` policy that cannot run: the message says why, on one line."""


def is_custom(name: str) -> bool:
    """Whether a ``--policy`` name is your own policy (registry names hold no colon)."""
    return ":" in name


def custom_specs(names: Iterable[str]) -> dict[str, PolicySpec]:
    """A :class:`PolicySpec` per custom name, checked now (import, callable, model file), so that a
    mistake is one line before any episode runs."""
    return {name: custom_spec(name) for name in names}


def custom_spec(name: str) -> PolicySpec:
    """The spec of one ``module:factory`` or ``sb3:PATH`` name."""
    return _sb3_spec(name) if name.startswith(SB3_PREFIX) else _imported_spec(name)


# ============================================================================ module:factory
@dataclass(frozen=True)
class ImportedPolicy:
    """A picklable factory: imports ``target`` (``module:attr``) wherever it is called and builds the
    policy with it. ``search_path``: a folder to import from when the module is found nowhere else
    (the driver's working directory, for workers that do not share its ``sys.path``)."""

    target: str
    search_path: str | None = None

    def __call__(self, env: gym.Env) -> Any:
        factory = import_target(self.target, self.search_path)
        policy = factory(env) if _takes_env(factory, self.target) else factory()
        if not (callable(policy) or callable(getattr(policy, "play_episode", None))):
            raise TypeError(f"{self.target}(env) returned a {type(policy).__name__}, not a policy: "
                            "a factory returns a callable policy(obs, info) -> action")
        return policy


def import_target(target: str, search_path: str | None = None) -> Any:
    """The callable ``module:attr`` names; a :class:`CustomPolicyError` says what is missing."""
    module_name, _, attr_path = target.partition(":")
    if not module_name or not attr_path:
        raise CustomPolicyError(f"policy {target!r}: expected module:factory, e.g. my_agents:make_policy")
    obj: Any = _import_module(module_name, target, search_path)
    owner = module_name
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_") and callable(getattr(obj, n, None))]
            raise CustomPolicyError(f"policy {target!r}: {owner!r} has no attribute {part!r}{did_you_mean(part, names)}")
        obj, owner = getattr(obj, part), f"{owner}.{part}"
    if not callable(obj):
        raise CustomPolicyError(f"policy {target!r} is not callable (its type is {type(obj).__name__}): give a "
                                "factory(env) -> policy or a policy class")
    return obj


def _import_module(name: str, target: str, search_path: str | None) -> Any:
    """Import ``name``; when it is found nowhere, look in ``search_path`` too (appended to
    ``sys.path``, so that it never shadows an installed module)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (name == exc.name or name.startswith(exc.name + ".")):
            raise CustomPolicyError(f"policy {target!r}: importing {name!r} failed: {exc}") from None
        if search_path and search_path not in sys.path:
            sys.path.append(search_path)
            importlib.invalidate_caches()
            return _import_module(name, target, None)
        where = f" nor a module in {search_path}" if search_path else ""
        raise CustomPolicyError(f"policy {target!r}: no module named {name!r} (not importable{where}; "
                                "add its folder to PYTHONPATH)") from None
    except Exception as exc:  # noqa: BLE001 - your module's own error at import, said in one line
        raise CustomPolicyError(f"policy {target!r}: importing {name!r} raised {type(exc).__name__}: "
                                f"{' '.join(str(exc).split())}") from None


def _takes_env(factory: Any, target: str) -> bool:
    """Whether ``factory`` is called with the env (a factory, a class built with it) or with
    nothing (a policy class whose constructor takes no argument)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin: assume the documented form
        return True
    for arguments, takes in (((None,), True), ((), False)):
        try:
            signature.bind(*arguments)
            return takes
        except TypeError:
            continue
    raise CustomPolicyError(f"policy {target!r} takes ({', '.join(signature.parameters)}): a factory takes the env, "
                            "factory(env) -> policy, and returns policy(obs, info) -> action")


def _imported_spec(name: str) -> PolicySpec:
    module_name = name.partition(":")[0]
    if module_name in policy_specs():
        raise CustomPolicyError(f"policy {name!r}: {module_name!r} is a named policy, not a module: "
                                f"--policy {module_name} (an LLM's model goes in --model)")
    search_path = os.getcwd()
    factory = import_target(name, search_path)
    _takes_env(factory, name)
    return PolicySpec(name, ImportedPolicy(name, search_path), _declared_env_ids(factory, name),
                      _first_line(factory.__doc__) or f"your policy {name}")


def _declared_env_ids(factory: Any, name: str) -> tuple[str, ...] | None:
    """The ids ``factory.env_ids`` says it fits; None (any env) when it says nothing."""
    declared = getattr(factory, "env_ids", None)
    if declared is None:
        return None
    if isinstance(declared, str) or not all(isinstance(e, str) for e in declared):
        raise CustomPolicyError(f"policy {name!r}: env_ids must be a list of env ids, got {declared!r}")
    return tuple(declared)


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0].strip()


# ============================================================================ sb3:PATH
@dataclass(frozen=True)
class SB3ModelPolicy:
    """A picklable factory of :class:`MaskablePPOPolicy` for a saved model: the file's bytes,
    loaded once per process (:meth:`model`).

    Attributes:
        name: the policy's name (``sb3:PATH``), for messages.
        data: the model file's bytes.
        algorithm: ``"MaskablePPO"`` or ``"PPO"``.
        deterministic: pick the likeliest action (else sample, seeded per episode).
    """

    name: str
    data: bytes = field(repr=False, compare=False)
    algorithm: str = "MaskablePPO"
    deterministic: bool = True
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", hashlib.sha256(self.data).hexdigest())

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled in a worker: load the model now, before the first episode, so that the
        episode's ``time_s`` measures playing, not torch's import (a failure waits for the
        episode, which records it)."""
        self.__dict__.update(state)
        try:
            self.model()
        except Exception:  # noqa: BLE001, S110 - the first episode raises it again and records it
            pass

    def __call__(self, env: gym.Env) -> Any:
        model = self.model()
        if _is_candidate_model(model):  # size-agnostic: plays any instance of its view's ids
            return CandidateModelPolicy(model, env, deterministic=self.deterministic, name=self.name)
        return MaskablePPOPolicy(model, env, deterministic=self.deterministic, name=self.name)

    def model(self) -> Any:
        """The model, loaded on first use in this process."""
        key = (self.algorithm, self.digest)
        with _MODELS_LOCK:
            if key not in _MODELS:
                _MODELS[key] = _load_model(self.algorithm, self.data)
            return _MODELS[key]


#: Models loaded in this process, by (algorithm, sha256 of the file).
_MODELS: dict[tuple[str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def _load_model(algorithm: str, data: bytes) -> Any:
    return algorithm_class(algorithm).load(io.BytesIO(data), device="cpu")


def algorithm_class(algorithm: str) -> Any:
    """``sb3_contrib.MaskablePPO`` or ``stable_baselines3.PPO``; a MissingExtraError names the
    ``pip install`` when the rl extra is missing."""
    require("torch", "rl")
    sb3 = require("stable_baselines3", "rl", package="stable-baselines3")
    if algorithm == "MaskablePPO":
        return require("sb3_contrib", "rl", package="sb3-contrib").MaskablePPO
    return sb3.PPO


def _sb3_spec(name: str) -> PolicySpec:
    """Check the file (exists, is a PPO or MaskablePPO model, loads) and the rl extra now."""
    text, deterministic = _sb3_mode(name[len(SB3_PREFIX):], name)
    path = _model_path(text, name)
    try:
        algorithm = model_algorithm(path)
    except CustomPolicyError as exc:
        raise CustomPolicyError(f"policy {name!r}: {exc}") from None
    algorithm_class(algorithm)  # the rl extra: a MissingExtraError that names the pip install
    policy = SB3ModelPolicy(name, path.read_bytes(), algorithm, deterministic)
    try:
        policy.model()
    except Exception as exc:  # noqa: BLE001 - a damaged file: one line, before anything runs
        raise CustomPolicyError(f"policy {name!r}: cannot load {path} as a {algorithm} model: "
                                f"{type(exc).__name__}: {' '.join(str(exc).split())}") from None
    mode = "deterministic" if deterministic else "sampled"
    return PolicySpec(name, policy, None, f"{algorithm} model {path} ({mode})")


def _sb3_mode(text: str, name: str) -> tuple[str, bool]:
    """``PATH?stochastic`` -> (PATH, False); a plain PATH is deterministic."""
    for suffix, deterministic in SB3_MODES.items():
        if text.endswith(suffix):
            return text[: -len(suffix)], deterministic
    if "?" in text and not Path(text).expanduser().exists():
        option = text[text.index("?"):]
        raise CustomPolicyError(f"policy {name!r}: unknown option {option!r}; "
                                f"sb3:PATH takes {' or '.join(SB3_MODES)}")
    return text, True


def _model_path(text: str, name: str) -> Path:
    """The model file (``PATH`` or ``PATH.zip``, as SB3's ``load`` finds it)."""
    if not text:
        raise CustomPolicyError(f"policy {name!r}: give the model file, e.g. sb3:runs/ppo_ft06.zip")
    path = Path(text).expanduser()
    if not path.is_file() and path.suffix != ".zip" and path.with_name(path.name + ".zip").is_file():
        path = path.with_name(path.name + ".zip")
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise CustomPolicyError(f"policy {name!r}: the model file {text} {what} (sb3:PATH takes a .zip "
                                "written by model.save)")
    return path


def model_algorithm(path: Path) -> str:
    """``"MaskablePPO"`` or ``"PPO"``, from the policy class a saved model's metadata names."""
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
        module = str(data["policy_class"]["__module__"])
    except (zipfile.BadZipFile, KeyError, TypeError, ValueError, OSError):
        raise CustomPolicyError(f"{path} is no Stable-Baselines3 model (a .zip written by model.save)") from None
    algorithm = next((algo for prefix, algo in ALGORITHMS.items() if module.startswith(prefix)), None)
    if algorithm is None:
        raise CustomPolicyError(f"{path} holds a model whose policy comes from {module}: "
                                "crab-gym plays MaskablePPO (sb3-contrib) and PPO models")
    return algorithm


# ============================================================================ the run's cases
def check_cases(cases: Sequence[EnvCase], policies: Mapping[str, Any]) -> None:
    """Refuse, in one line, a model that does not fit some of the run's instances (a model trained
    on 6x6 job shops asked to play a 10x5 one), naming them and those it fits: every case's env is
    made once to read its spaces. An env that cannot be made is left to the run's own checks."""
    models = {name: p for name, p in policies.items() if isinstance(p, SB3ModelPolicy)}
    if not models:
        return
    spaces = {_case_key(c): _case_spaces(c) for c in cases}
    for name, policy in models.items():
        model = policy.model()
        fits, misfits = [], []
        for case in {_case_key(c): c for c in cases}.values():
            found = spaces[_case_key(case)]
            if found is None:
                continue
            if _is_candidate_model(model):
                why = _candidate_fit_problem(model, case.env_id)
            else:
                why = found if isinstance(found, str) else model_fit_problem(model, *found)
            (misfits if why else fits).append((case, why))
        if misfits:
            raise CustomPolicyError(_misfit_message(name, fits, misfits))


def _is_candidate_model(model: Any) -> bool:
    """A model of crab_gym's size-agnostic CandidatePolicy (told by its class, so that this module
    imports no torch)."""
    policy = getattr(model, "policy", None)
    return type(policy).__module__ == "crab_gym.baselines.candidate_policy" and hasattr(policy, "view")


def _candidate_fit_problem(model: Any, env_id: str) -> str | None:
    """Why a CandidatePolicy model cannot play ``env_id``: it plays every instance of its view's ids."""
    view = VIEWS.get(model.policy.view)
    if view is None:
        return f"the model names the candidate view {model.policy.view!r}, which this crab_gym does not have"
    return None if env_id in view.env_ids else f"the model plays {', '.join(view.env_ids)} only"


def _case_key(case: EnvCase) -> str:
    return json.dumps([case.env_id, dict(case.kwargs)], sort_keys=True, default=str)


def _case_spaces(case: EnvCase) -> tuple[gym.Space, gym.Space] | str | None:
    """A case's spaces as a masked model sees them; a reason when it has none; None when its env
    cannot be made (the run's pre-flight says why)."""
    try:
        env = gym.make(case.env_id, **dict(case.kwargs))
    except Exception:  # noqa: BLE001 - reported by the run's pre-flight or by the episode
        return None
    try:
        return masked_spaces(env)
    except TypeError as exc:
        return str(exc)
    finally:
        env.close()


def _case_label(case: EnvCase) -> str:
    if case.instance is None:
        return case.env_id if not case.kwargs else f"{case.env_id} {json.dumps(dict(case.kwargs), default=str)}"
    size = f" ({case.size})" if case.size else ""
    return f"{case.env_id} {case.instance}{size}"


def _misfit_message(name: str, fits: list[tuple[EnvCase, Any]], misfits: list[tuple[EnvCase, str]]) -> str:
    """``policy 'sb3:m.zip' does not fit 2 of 3 instances (...): <why the first>; it fits ...``."""
    shown = ", ".join(_case_label(c) for c, _ in misfits[:5]) + (f" and {len(misfits) - 5} more" if len(misfits) > 5 else "")
    first, why = misfits[0]
    text = (f"policy {name!r} does not fit {len(misfits)} of {len(fits) + len(misfits)} instances ({shown}): "
            f"on {_case_label(first)} {why}")
    if not fits:
        return text + "; a model plays instances shaped like the ones it was trained on"
    sizes = sorted({c.size for c, _ in fits if c.size})
    whole_sizes = sizes and all(c.size for c, _ in fits) and not {c.size for c, _ in misfits} & set(sizes)
    names = [c.instance for c, _ in fits if c.instance]
    hint = (f"--sizes {' '.join(sizes)}" if whole_sizes else f"--instances {' '.join(names[:5])}" if names
            else "other --env")
    return text + f"; it fits {', '.join(_case_label(c) for c, _ in fits[:5])}: choose those, e.g. {hint}"


__all__ = [
    "SB3_PREFIX",
    "CustomPolicyError",
    "ImportedPolicy",
    "SB3ModelPolicy",
    "check_cases",
    "custom_spec",
    "custom_specs",
    "import_target",
    "is_custom",
    "model_algorithm",
]
