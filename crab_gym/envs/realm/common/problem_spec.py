"""One record per REALM problem: its parts, named by dotted path and loaded on first use.

A family says once, in its ``spec.py``, where each part of a problem lives; everything that
used to be keyed by problem id outside the family (registration, the datasets facade, upstream
detection, the policy registry, the contract and scoring checks, the lowest-versions CI list)
reads the :mod:`crab_gym.envs.realm.index` of these records instead. Parts are strings, so
reading the index imports no family module and no OR-Tools; :meth:`ProblemSpec.part` imports
one part when it is first asked for.

Each role has one signature, the same in every family:

=============  =====================================================================
role           signature
=============  =====================================================================
``env``        the ``gymnasium.Env`` class (``gym.make(spec.env_id, **kwargs)``)
``names``      ``names() -> list[str]``: the shipped instance names
``load``       ``load(name | path | mapping | instance) -> instance``
``generate``   ``generate(size="small", seed=0, **kwargs) -> instance``: a seeded instance
``upstream``   ``convert(data: dict, source: str) -> instance``: an upstream REALM file
``check``      ``check(instance, plan) -> PlanCheck``: the independent plan checker
``reference``  ``reference(instance) -> Reference``: the yardstick of optimality
``viewer``     a :class:`~crab_gym.envs.realm.common.viewer.Viewer`: ``text(env)``, ``image(env)``
``vector_env`` the native vector env class (``gym.make_vec``), or None
=============  =====================================================================

The problem's named policies are its ``heuristics`` (:class:`NamedHeuristic`: a name, the part
that makes the policy, what kind of part that is); the first greedy one is the one the scoring
check ranks between random and the oracle.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Literal

from crab_gym.envs.realm.common.index_permutation import Numbering
from crab_gym.envs.realm.common.splits import Splits

#: The roles a spec names, in the order the docs list them.
ROLES = ("env", "names", "load", "generate", "upstream", "check", "reference", "viewer", "vector_env")


@dataclass(frozen=True)
class NamedHeuristic:
    """A problem-specific policy the registry offers under ``name`` (``crab-gym run --policy``).

    Problems that share a heuristic (P3 and P4) name the same ``name`` and ``factory``; the
    registry then fits it to both ids.
    """

    name: str
    factory: str
    description: str
    #: The problem's greedy heuristic: ranked between random and the oracle by the scoring check.
    greedy: bool = True
    #: What ``factory`` names: ``"policy"``, a ``factory(env) -> policy`` (a policy class);
    #: ``"action"``, a ``choose(env) -> action`` that the registry wraps into a policy;
    #: ``"fixed"``, a policy that needs no env (a dispatching rule).
    style: Literal["policy", "action", "fixed"] = "policy"


@dataclass(frozen=True)
class ProblemSpec:
    """Where each part of one REALM problem lives.

    Attributes:
        problem: ``"P3"``: the key of the datasets facade, and the id's middle (``Realm-P3-v0``).
        title: a few words for listings (``"urban ride-sharing"``).
        package: the family's package (``__package__`` of its ``spec.py``); parts are
            ``"module:attribute"`` inside it.
        env, names, load, generate, check, reference: the parts every problem has.
        viewer: how the env is shown (``render()``, ``describe()``): the env's default viewer.
        upstream: the upstream REALM-Bench converter, or None (P11 reads the job-shop formats).
        upstream_keys: the keys that mark an upstream file of this problem (detection order is
            the index's: a problem whose keys extend another's comes first).
        vector_env: a native vector env, or None.
        heuristics: the problem's named policies (the first greedy one is "the greedy").
        multiagent: it has a PettingZoo view (one agent per actor).
        disruptions: disruptions strike during its episodes (the adaptation metric applies).
        docs: the family's docs page; tests: its test folder (both from the repository root).
        version: the id's version (``-v0``).
    """

    problem: str
    title: str
    package: str
    env: str
    names: str
    load: str
    generate: str
    check: str
    reference: str
    viewer: str | None = None
    upstream: str | None = None
    upstream_keys: tuple[str, ...] = ()
    upstream_marks: tuple[str, ...] = ()
    vector_env: str | None = None
    heuristics: tuple[NamedHeuristic, ...] = ()
    multiagent: bool = False
    disruptions: bool = False
    #: an empty plan (or every actor passing) is a legal move: the ``do_nothing`` baseline
    #: applies (False where every move does something: P1's walker, the job shops' dispatches)
    idle_plan: bool = True
    #: ``attack(instance, reference_plan, seconds) -> (cost, plan)``: the scoring probes'
    #: attempt to beat a reference (a hinted solver run); None: the problem declares none
    reference_attack: str | None = None
    #: more re-planners (``module:factory``, ``factory(env) -> policy``) the scoring probes
    #: continue with from a disruption's strike, beside the named heuristics and random play
    probe_replanners: tuple[str, ...] = ()
    #: the frozen instance splits (dev, test, quick, named sets): what benchmark numbers are
    #: given on (:mod:`crab_gym.envs.realm.common.splits`); None: the problem declares none
    splits: Splits | None = field(default=None, compare=False, hash=False)
    docs: str = ""
    tests: str = ""
    version: int = 0
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, hash=False)
    #: renaming (``gym.make(id, obfuscate=True)``, :mod:`~crab_gym.envs.realm.common.obfuscation`):
    #: the instance fields that hold names a model could recognise the instance by -- ``a.b`` an
    #: attribute, ``[]`` every item of a list, ``{}`` every key of a dict (P3:
    #: ``("locations[]", "requests[].passenger_id", "vehicles[].vehicle_id")``); ``()``: none
    #: besides the instance's own name (always hidden); None: not declared (renaming refuses)
    name_fields: tuple[str, ...] | None = None
    #: instance words renaming keeps on purpose: kinds, not entities (P7's resources, severities)
    kept_names: tuple[str, ...] = ()
    #: entities that are numbers (P11's jobs and machines), renumbered under renaming; None: none
    numbering: Numbering | None = field(default=None, compare=False, hash=False)

    @property
    def env_id(self) -> str:
        """The Gymnasium id (``Realm-P3-v0``)."""
        return f"Realm-{self.problem}-v{self.version}"

    def entry_point(self, role: str = "env") -> str | None:
        """The ``"package.module:attribute"`` of a role (None: the problem has no such part)."""
        local = getattr(self, role)
        return None if local is None else f"{self.package}.{local}"

    def part(self, role: str) -> Any:
        """The object a role names, imported on first use (None: no such part)."""
        if role not in self._loaded:
            self._loaded[role] = load_entry_point(self.entry_point(role))
        return self._loaded[role]

    def greedy(self) -> NamedHeuristic | None:
        """The problem's greedy heuristic (None: it has none)."""
        return next((h for h in self.heuristics if h.greedy), None)

    def heuristic_entry_point(self, heuristic: NamedHeuristic) -> str:
        """Where ``heuristic.factory`` lives, in full."""
        return f"{self.package}.{heuristic.factory}"


def load_entry_point(path: str | None) -> Any:
    """``"package.module:attribute"`` imported (None stays None)."""
    if path is None:
        return None
    module, _, attribute = path.partition(":")
    if not attribute:
        raise ValueError(f"a part is named 'package.module:attribute', got {path!r}")
    return getattr(importlib.import_module(module), attribute)
