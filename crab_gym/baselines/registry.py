"""Named baseline policies for the CLI and benchmarks: name -> factory(env) -> policy.

Each policy also says which env ids it fits: problem-specific heuristics only apply to
their own problem, so ``crab-gym run`` checks the fit before running anything and lists
the policies that do fit (:func:`policies_for`), instead of failing deep inside an episode.
An env registered under another id with the same entry point (a user's alias) fits too.

Built in Python (:func:`policy_factories`, :class:`NamedPolicy`), a policy checks the same fit
on the env it is given: ``spt`` on P1 raises :class:`PolicyMismatchError` naming the envs it
fits and the policies that fit this one, instead of a ``KeyError`` from inside the rule.

The factories are lambdas, which cannot be pickled: worker processes and Ray tasks get a
:class:`NamedPolicy` instead (:func:`named_policies`), which rebuilds the policy from its name
in the worker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from crab_gym._optional import require_installed
from crab_gym.baselines.do_nothing import DoNothingPolicy
from crab_gym.baselines.llm_agent import LLMAgent
from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.baselines.trained import trained_ids, trained_policy
from crab_gym.envs.realm.common.policy_fit import PolicyFitError
from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec, load_entry_point
from crab_gym.envs.realm.index import problem_specs
from crab_gym.envs.registration import multiagent_ids, realm_ids

#: One LLM agent per actor (imported on first use: it needs the multiagent extra).
MULTI_LLM = "crab_gym.baselines.multi_llm_policy:MultiLLMPolicy"
#: The REALM ids at import (the registry reads the index anew at each call).
REALM_IDS = tuple(realm_ids())


class PolicyMismatchError(PolicyFitError, ValueError):
    """A named policy was given an env it does not fit (a ``PolicyFitError``, as a heuristic
    built directly on the wrong env raises; still a ``ValueError`` for older callers)."""


@dataclass(frozen=True)
class PolicySpec:
    """A named policy.

    Attributes:
        name: the name the CLI and reports use.
        factory: ``factory(env) -> policy`` where ``policy(obs, info) -> action``.
        env_ids: the env ids it fits; None: any env.
        description: one line for ``crab-gym list``.
        io_bound: it mostly waits on a server (an LLM endpoint): concurrent episodes then run
            as threads of one process, and ``--workers`` means concurrent requests.
    """

    name: str
    factory: Callable[..., Any]
    env_ids: tuple[str, ...] | None
    description: str
    io_bound: bool = False
    #: The problem's greedy heuristic: the "greedy" the scoring check ranks between random
    #: and the oracle (one per id).
    greedy: bool = False

    def fits(self, env_id: str) -> bool:
        """Whether the policy can act in ``env_id`` (an id or ``module:id``)."""
        if self.env_ids is None:
            return True
        return _entry_point(env_id) in {_entry_point(i) for i in self.env_ids}

    def build(self, env: gym.Env, **options: Any) -> Any:
        """The policy for ``env``, after checking that it fits (an env made by ``gym.make`` knows its
        id; one built directly from a class is checked by that class's registered id)."""
        env_id = _env_id(env)
        if env_id is not None and not self.fits(env_id):
            fitting = [name for name, spec in policy_specs().items() if spec.fits(env_id)]
            raise PolicyMismatchError(
                f"policy {self.name!r} does not fit {env_id}: it fits {', '.join(self.env_ids or ())}; "
                f"policies that fit {env_id}: {', '.join(fitting)}")
        return self.factory(env, **options) if options else self.factory(env)


def _env_id(env: gym.Env) -> str | None:
    """The registered id of ``env`` (its spec, else the id its class is registered under)."""
    for layer in (env, getattr(env, "unwrapped", env)):
        spec = getattr(layer, "spec", None)
        if spec is not None and getattr(spec, "id", None):
            return spec.id
    cls = type(getattr(env, "unwrapped", env))
    target = f"{cls.__module__}:{cls.__qualname__}"
    return next((s.id for s in gym.registry.values() if s.entry_point == target), None)


class _EnvPolicy:
    """Adapts ``f(env) -> action`` heuristics to the ``policy(obs, info)`` signature."""

    def __init__(self, env: gym.Env, choose: Callable[[gym.Env], Any]) -> None:
        self.env, self.choose = env, choose

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        return self.choose(self.env)


def _entry_point(env_id: str) -> str:
    """What identifies an env's class: its registered entry point (else the bare id)."""
    bare = env_id.split(":", 1)[-1]
    spec = gym.registry.get(bare)
    if spec is None or spec.entry_point is None:
        return bare
    entry = spec.entry_point
    return entry if isinstance(entry, str) else f"{entry.__module__}:{entry.__qualname__}"


def policy_specs() -> dict[str, PolicySpec]:
    """Every named policy, with the envs it fits."""
    specs = [
        PolicySpec("random", lambda env: RandomPolicy(env, seed=0), None,
                   "uniform over the legal actions (action mask), else action_space.sample()"),
        PolicySpec("oracle", lambda env: OraclePolicy(env), tuple(realm_ids()),
                   "submits the reference (OR-Tools / CP-SAT) plan: the yardstick of optimality"),
        PolicySpec("do_nothing", DoNothingPolicy, tuple(s.env_id for s in problem_specs() if s.idle_plan),
                   "submits an empty plan or passes: the floor, scoring 0 (not where every move does something)"),
        # the shipped MaskablePPO models (crab_gym/baselines/trained/); torch is imported on first use
        PolicySpec("trained", trained_policy, trained_ids(),
                   "a MaskablePPO CandidatePolicy trained by crab-gym train and shipped (needs the rl extra)"),
        # configured from the environment ($CRAB_GYM_LLM_MODEL, $OPENAI_BASE_URL); openai is
        # imported when the agent first talks to a model
        PolicySpec("llm", lambda env, **options: LLMAgent(**options), None,
                   "an LLM agent through the env's tools ($CRAB_GYM_LLM_MODEL, $OPENAI_BASE_URL)", io_bound=True),
        # the multiagent extra (pettingzoo) is imported when the policy is first built
        PolicySpec("multi-llm", _multi_llm, tuple(multiagent_ids()),
                   "one LLM agent per actor on the multi-agent form (needs the multiagent extra)", io_bound=True),
    ]
    specs[3:3] = heuristic_specs()  # after do_nothing: random, oracle, do_nothing, heuristics, trained, ...
    return {s.name: s for s in specs}


def _multi_llm(env: gym.Env, **options: Any) -> Any:
    """One LLM agent per actor of ``env`` (needs the multiagent extra: said when it is missing)."""
    require_installed("pettingzoo", "multiagent")
    return load_entry_point(MULTI_LLM)(env, **options)


def _heuristic_factory(problem: ProblemSpec, heuristic: NamedHeuristic) -> Callable[..., Any]:
    """``factory(env) -> policy`` for a problem's named heuristic (its part imported on first use)."""
    path = problem.heuristic_entry_point(heuristic)

    def factory(env: gym.Env) -> Any:
        part = load_entry_point(path)
        if heuristic.style == "action":
            return _EnvPolicy(env, part)
        return part if heuristic.style == "fixed" else part(env)

    return factory


def heuristic_specs() -> list[PolicySpec]:
    """The problems' own heuristics, from the problem index: one :class:`PolicySpec` per name,
    fitting every problem that names it (``ridesharing_greedy`` fits P3 and P4)."""
    found: dict[str, tuple[NamedHeuristic, ProblemSpec, list[str]]] = {}
    for problem in problem_specs():
        for heuristic in problem.heuristics:
            entry = found.setdefault(heuristic.name, (heuristic, problem, []))
            entry[2].append(problem.env_id)
    return [PolicySpec(name, _heuristic_factory(problem, h), tuple(ids), h.description, greedy=h.greedy)
            for name, (h, problem, ids) in found.items()]


def policy_factories() -> dict[str, Callable[[gym.Env], Any]]:
    """Every named policy's factory (see :func:`policy_specs` for the envs each fits); each
    checks the fit on the env it is given (:class:`PolicyMismatchError`)."""
    return {name: spec.build for name, spec in policy_specs().items()}


@dataclass(frozen=True)
class NamedPolicy:
    """A picklable factory: the registry's policy ``name``, rebuilt wherever it is called.

    ``options`` are run settings passed to the factory (e.g. an LLM agent's ``max_rps``);
    unlike an episode's policy kwargs they are not part of what identifies an episode.
    """

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, env: gym.Env) -> Any:
        factory = _factories().get(self.name)
        if factory is None:
            raise KeyError(f"no policy named {self.name!r} in crab_gym.baselines.registry")
        return factory(env, **self.options) if self.options else factory(env)


def named_policies(names: list[str], options: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, NamedPolicy]:
    """``{name: NamedPolicy(name)}``: what ``Benchmark.run`` needs for worker processes and Ray."""
    options = options or {}
    return {name: NamedPolicy(name, dict(options.get(name, {}))) for name in names}


#: The factories, by the index's problems they were built for (a family added or removed at
#: run time builds them anew).
_FACTORY_CACHE: dict[tuple[str, ...], dict[str, Callable[..., Any]]] = {}


def _factories() -> dict[str, Callable[..., Any]]:
    """The factories, built once per process and index (a worker calls NamedPolicy once per episode)."""
    key = tuple(spec.env_id for spec in problem_specs())
    if key not in _FACTORY_CACHE:
        _FACTORY_CACHE.clear()
        _FACTORY_CACHE[key] = policy_factories()
    return _FACTORY_CACHE[key]


def policies_for(env_id: str) -> list[str]:
    """The names of the policies that fit ``env_id``."""
    return [name for name, spec in policy_specs().items() if spec.fits(env_id)]
