"""The scoring contract, checked: plans built to break each promise, on every shipped instance.

A REALM score is a promise (DESIGN.md, "The scoring contract"):

1. **1 is the best plan known**: no plan found scores a lower cost than the reference measure.
2. **Doing nothing scores 0**: optimality at most 0.05, no success, no quality metric above 0.
3. **Monotone**: a cheaper feasible plan never scores lower on optimality, return or success;
   equal cost, equal scores on every metric.
4. **Infeasible is 0** on optimality, coordination and adaptation; a metric that does not
   apply is ``None``, never 1.0.
5. **It discriminates**: mean optimality of do-nothing < random < greedy < oracle.
6. **The checker agrees**: the family's independent checker (``env.check_plan()``, the
   ``check`` role) finds every finished episode's plan feasible or not, and its cost, as the
   env scored it.

:func:`check_scoring` plays, per instance: doing nothing (``submit_plan`` with the emptiest
arguments its schema allows, else the problem's pass move to the end), masked random play,
the id's greedy heuristic, the oracle (the reference plan), reorderings of the reference plan
(same plan, other order of its records: equal cost expected) and a short local search from
the reference plan (numbers shifted, items swapped, dropped or moved between actors) that
tries to beat the reference and yields infeasible plans on the way. Every plan is scored by
the env itself, through ``submit_plan``; the plan's cost and feasibility come from the env's
own hooks (``_agent_cost``, ``_plan_feasible``), and the family's checker is asked too.

It sits on top of the package (it drives envs with the suite's baselines and shipped
instances, as the CLI does); nothing in the library imports it.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.baselines.registry import policy_specs
from crab_gym.core.schema import emptiest_arguments
from crab_gym.datasets import generate_instance, list_instances
from crab_gym.evaluation.episode import episode_success
from crab_gym.evaluation.episode_runner import deferred_return, finished_metrics

#: Metrics that claim quality: doing nothing must not score above 0 on any of them.
QUALITY_METRICS = ("optimality", "planning_quality", "coordination", "adaptation")
#: Metrics an infeasible plan must score 0 on (or ``None``: not applicable).
ZERO_IF_INFEASIBLE = ("optimality", "coordination", "adaptation")
#: The most a do-nothing plan may score on optimality.
DO_NOTHING_MAX = 0.05
#: Cost tolerance (costs are integers or sums of a few floats).
EPS = 1e-6
#: Steps before a policy's episode is cut (more where the env says a legal episode may need
#: more: its ``most_steps``, e.g. a 200x50 job shop's 10,000 dispatches).
MAX_STEPS = 5000


def step_cap(env: gym.Env) -> int:
    """The steps a policy's episode may take here: :data:`MAX_STEPS`, or the env's own
    ``most_steps`` (the most a legal episode of this instance can take) where larger."""
    return max(MAX_STEPS, int(getattr(_base(env), "most_steps", 0) or 0))
#: Resubmissions of one plan (envs with disruptions pause at each and wait for a new plan).
MAX_RESUBMITS = 50
#: Failures of one kind kept verbatim in a report (the rest are counted).
EXAMPLES_PER_KIND = 3


@dataclass
class Outcome:
    """One plan (or policy episode) on one instance, as the env scored it."""

    label: str
    terminated: bool
    feasible: bool
    cost: float | None
    episode_return: float
    success: bool
    completeness: float
    metrics: dict[str, Any]
    plan: Any = None
    #: The independent checker's verdict on the episode's plan (``info["solution"]``):
    #: (feasible, cost); None where the env names no checker or the episode did not finish.
    checked: tuple[bool, float] | None = None

    @property
    def optimality(self) -> float:
        value = self.metrics.get("optimality")
        return float(value) if isinstance(value, (int, float)) and self.terminated else 0.0

    def short(self) -> str:
        cost = "n/a" if self.cost is None else f"{self.cost:g}"
        return (f"{self.label}: cost {cost}, feasible {self.feasible}, optimality {self.optimality:.3f}, "
                f"return {self.episode_return:.3f}, success {self.success}")


@dataclass
class InstanceScores:
    """The outcomes of one instance, by role."""

    instance: str
    outcomes: list[Outcome] = field(default_factory=list)
    #: one of the set the discrimination promise is about (not a generated extra)
    ranked: bool = True

    def by(self, label: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.label == label]


@dataclass
class ScoringReport:
    """What :func:`check_scoring` played and found for one id."""

    env_id: str
    instances: list[InstanceScores] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the adversarial probes' figures by probe (:mod:`.scoring_probes`), one row per instance
    probe_rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _kinds: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return not self.failures

    def fail(self, message: str, kind: str | None = None) -> None:
        """Record a broken promise; of one ``kind`` (e.g. "P2 infeasible coordination") only
        the first :data:`EXAMPLES_PER_KIND` are kept verbatim, the rest counted."""
        kind = kind or message
        seen = self._kinds.get(kind, 0)
        self._kinds[kind] = seen + 1
        if seen < EXAMPLES_PER_KIND:
            self.failures.append(message)

    def absorb(self, other: ScoringReport) -> None:
        """Take in another check's findings on the same id (the adversarial probes')."""
        for kind, count in other.kinds().items():
            self._kinds[kind] = self._kinds.get(kind, 0) + count
        self.failures += other.failures
        self.notes += other.notes
        self.probe_rows.update(other.probe_rows)

    def kinds(self) -> dict[str, int]:
        """How often each kind of failure occurred."""
        return dict(self._kinds)

    def raise_if_failed(self) -> None:
        if self.failures:
            counts = "\n  ".join(f"{n} x {kind}" for kind, n in self._kinds.items())
            shown = "\n  ".join(self.failures)
            raise AssertionError(f"{self.env_id} breaks the scoring contract:\n  {counts}\nexamples:\n  {shown}")

    def mean_optimality(self, label: str) -> float | None:
        """Mean optimality of a role over the ranked instances (the shipped set, or those
        given) that played it (None: none did)."""
        values = [statistics.fmean(o.optimality for o in s.by(label)) for s in self.instances
                  if s.ranked and s.by(label)]
        return statistics.fmean(values) if values else None

    def counts(self) -> dict[str, int]:
        """How many plans of each role were scored."""
        out: dict[str, int] = {}
        for s in self.instances:
            for o in s.outcomes:
                out[o.label] = out.get(o.label, 0) + 1
        return out

    def mean_cells(self) -> list[str]:
        """The mean optimality of each role in :data:`DISCRIMINATION_ORDER`, as table cells."""
        means = [self.mean_optimality(label) for label in DISCRIMINATION_ORDER]
        return ["n/a" if m is None else f"{m:.3f}" for m in means]

    def verdict(self) -> str:
        """``kept``, or how many promises broke."""
        return "kept" if self.ok else f"{sum(self._kinds.values())} broken"


#: The roles whose mean optimality must rise in this order.
DISCRIMINATION_ORDER = ("do-nothing", "random", "greedy", "oracle")


# ====================================================================== playing plans
def _base(env: gym.Env) -> Any:
    return env.unwrapped


def _outcome(env: gym.Env, label: str, terminated: bool, total: float, info: Mapping[str, Any], plan: Any) -> Outcome:
    base = _base(env)
    metrics = finished_metrics(env, info)
    completeness = float(info.get("completeness", 0.0))
    cost = base._agent_cost() if terminated else None
    verdict = base.check_plan() if terminated and getattr(base, "checker", None) is not None else None
    return Outcome(
        label=label,
        terminated=terminated,
        feasible=bool(terminated and base._plan_feasible()),
        cost=None if cost is None else float(cost),
        episode_return=float(total) + (deferred_return(env) if terminated else 0.0),  # as the runner's
        success=episode_success(terminated, completeness, metrics),
        completeness=completeness,
        metrics=metrics,
        plan=plan,
        checked=None if verdict is None else (bool(verdict.feasible), float(verdict.cost)),
    )


def submit(env: gym.Env, plan: Mapping[str, Any], label: str, seed: int = 0) -> Outcome | None:
    """Reset and submit ``plan`` (again at each pause); None if the env refuses it."""
    env.reset(seed=seed)
    call = {"name": "submit_plan", "arguments": copy.deepcopy(dict(plan))}
    total = 0.0
    info: dict[str, Any] = {}
    for _ in range(MAX_RESUBMITS):
        _, reward, terminated, truncated, info = env.step(copy.deepcopy(call))
        if not info.get("valid", True):
            return None
        total += float(reward)
        if terminated or truncated:
            return _outcome(env, label, bool(terminated), total, info, plan)
    return _outcome(env, label, False, total, info, plan)


def play(env: gym.Env, policy: Callable[[Any, dict], Any], label: str, seed: int = 0) -> Outcome:
    """One episode of ``policy`` (cut after :func:`step_cap` steps)."""
    obs, info = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset(env)
    if hasattr(policy, "seed"):
        policy.seed(seed)
    total = 0.0
    for _ in range(step_cap(env)):
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        total += float(reward)
        if terminated or truncated:
            return _outcome(env, label, bool(terminated), total, info, None)
    return _outcome(env, label, False, total, info, None)


def _submit_schema(env: gym.Env) -> Mapping[str, Any] | None:
    for tool in _base(env).tools():
        if tool["function"]["name"] == "submit_plan":
            return tool["function"]["parameters"]
    return None


def do_nothing(env: gym.Env, seed: int = 0) -> Outcome | None:
    """Doing nothing: the emptiest plan, else the problem's pass move until the episode ends
    (None when the problem has neither: it cannot be done)."""
    schema = _submit_schema(env)
    if schema is not None:
        outcome = submit(env, emptiest_arguments(schema), "do-nothing", seed)
        if outcome is not None:
            return outcome
    if not getattr(_base(env), "agent_arguments", ()):
        return None  # a single actor's every move does something
    env.reset(seed=seed)
    total, info = 0.0, {}
    for _ in range(MAX_STEPS):
        call = _base(env).joint_pass_call()
        if call is None:
            return None
        _, reward, terminated, truncated, info = env.step(call)
        total += float(reward)
        if terminated or truncated:
            return _outcome(env, "do-nothing", bool(terminated), total, info, None)
    return None


# ====================================================================== plans from the reference
def _containers(value: Any, path: tuple = ()) -> Iterable[tuple[tuple, Any]]:
    """Every list and dict inside ``value`` with its path."""
    if isinstance(value, (list, dict)):
        yield path, value
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, sub in items:
            yield from _containers(sub, (*path, key))


def _numbers(value: Any, path: tuple = ()) -> Iterable[tuple]:
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield path
    elif isinstance(value, (list, dict)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, sub in items:
            yield from _numbers(sub, (*path, key))


def _get(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


def reorderings(plan: Any, rng: np.random.Generator, count: int) -> list[Any]:
    """Copies of ``plan`` with its lists of records (dicts) shuffled: the same plan written in
    another order, which must cost and score the same wherever the order is not part of it."""
    out = []
    lists = [path for path, c in _containers(plan) if isinstance(c, list) and len(c) > 1
             and all(isinstance(x, dict) for x in c)]
    if not lists:
        return out
    for _ in range(count):
        new = copy.deepcopy(plan)
        for path in lists:
            items = _get(new, path)
            order = rng.permutation(len(items))
            items[:] = [items[i] for i in order]
        if new != plan:
            out.append(new)
    return out


def mutate(plan: Any, rng: np.random.Generator, attempts: int = 10) -> Any:
    """A neighbour of ``plan``: a number shifted, two list items swapped, an item dropped, or
    an item moved to a sibling list (another vehicle's, guide's or machine's); ``plan``
    itself only if ``attempts`` draws all left it unchanged."""
    for _ in range(attempts):
        new = _mutate_once(plan, rng)
        if new != plan:
            return new
    return plan


def _mutate_once(plan: Any, rng: np.random.Generator) -> Any:
    new = copy.deepcopy(plan)
    lists = [(p, c) for p, c in _containers(new) if isinstance(c, list) and c]
    numbers = list(_numbers(new))
    move = int(rng.integers(4))
    if move == 0 and numbers:
        path = numbers[int(rng.integers(len(numbers)))]
        parent = _get(new, path[:-1])
        old = parent[path[-1]]
        step = max(1, int(abs(old) * 0.1)) if isinstance(old, int) else max(1e-3, abs(old) * 0.1)
        delta = step * int(rng.choice([-3, -2, -1, 1, 2, 3]))
        parent[path[-1]] = max(0, old + delta) if isinstance(old, int) else max(0.0, old + delta)
    elif move == 1 and lists:
        _, items = lists[int(rng.integers(len(lists)))]
        if len(items) > 1:
            i, j = rng.choice(len(items), size=2, replace=False)
            items[i], items[j] = items[j], items[i]
    elif move == 2 and lists:
        _, items = lists[int(rng.integers(len(lists)))]
        items.pop(int(rng.integers(len(items))))
    elif lists:
        _move_between_siblings(new, rng)
    return new


def _move_between_siblings(plan: Any, rng: np.random.Generator) -> None:
    """Move one item of a list to a sibling list under the same dict (another actor's)."""
    parents = [c for _, c in _containers(plan) if isinstance(c, dict)
               and sum(isinstance(v, list) for v in c.values()) > 1]
    if not parents:
        return
    parent = parents[int(rng.integers(len(parents)))]
    keys = [k for k, v in parent.items() if isinstance(v, list)]
    source = [k for k in keys if parent[k]]
    if not source:
        return
    a = source[int(rng.integers(len(source)))]
    b = keys[int(rng.integers(len(keys)))]
    item = parent[a].pop(int(rng.integers(len(parent[a]))))
    parent[b].insert(int(rng.integers(len(parent[b]) + 1)), item)


def local_search(env: gym.Env, plan: Any, cost: float | None, tries: int, rng: np.random.Generator,
                 seed: int) -> list[Outcome]:
    """A short hill climb from ``plan`` (of ``cost``) by :func:`mutate`, moving to neighbours
    no dearer: the outcome of every neighbour the env accepted, feasible or not."""
    outcomes: list[Outcome] = []
    current = plan
    best = cost
    for _ in range(tries):
        candidate = mutate(current, rng)
        if candidate == current:
            continue
        outcome = submit(env, candidate, "search", seed)
        if outcome is None:
            continue
        outcomes.append(outcome)
        if outcome.feasible and outcome.cost is not None and (best is None or outcome.cost <= best + EPS):
            best, current = outcome.cost, candidate
    return outcomes


# ====================================================================== the promises
def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def check_do_nothing(report: ScoringReport, name: str, o: Outcome) -> None:
    """Promise 2: doing nothing scores 0."""
    where = f"{name}: doing nothing"
    if o.optimality > DO_NOTHING_MAX:
        report.fail(f"{where} scores optimality {o.optimality:.3f} (> {DO_NOTHING_MAX})", "doing nothing scores optimality")
    if o.success:
        report.fail(f"{where} counts as a success", "doing nothing is a success")
    if o.episode_return > DO_NOTHING_MAX:
        report.fail(f"{where} returns {o.episode_return:.3f} (> {DO_NOTHING_MAX})", "doing nothing earns a return")
    for metric in QUALITY_METRICS[1:]:
        value = _number(o.metrics.get(metric))
        if value is not None and value > 0:
            report.fail(f"{where} scores {metric} {value:.3f} (> 0)", f"doing nothing scores {metric}")


def check_infeasible(report: ScoringReport, name: str, o: Outcome) -> None:
    """Promise 4: an infeasible plan scores 0 on optimality, coordination and adaptation."""
    if not o.terminated or o.feasible:
        return
    for metric in ZERO_IF_INFEASIBLE:
        value = _number(o.metrics.get(metric))
        if value is not None and value > 0:
            report.fail(f"{name}: an infeasible {o.label} plan scores {metric} {value:.3f}: {_plan_text(o)}",
                        f"an infeasible plan scores {metric}")


def check_best_known(report: ScoringReport, name: str, outcomes: Sequence[Outcome], measure: float | None) -> None:
    """Promise 1: no plan found is cheaper than the reference measure."""
    if measure is None:
        return
    for o in outcomes:
        if o.feasible and o.cost is not None and o.cost < measure - EPS:
            report.fail(f"{name}: a feasible {o.label} plan costs {o.cost:g} < the reference {measure:g}: {_plan_text(o)}",
                        f"a plan beats the reference ({name})")
            return


def check_checker_agrees(report: ScoringReport, name: str, o: Outcome) -> None:
    """Promise 6: the env's verdict on a finished plan is the independent checker's."""
    if o.checked is None:
        return
    feasible, cost = o.checked
    if feasible != o.feasible:
        report.fail(f"{name}: the env finds the {o.label} plan {'feasible' if o.feasible else 'infeasible'}, "
                    f"its checker {'feasible' if feasible else 'infeasible'}: {_plan_text(o)}",
                    "the env and its checker disagree on feasibility")
    elif o.feasible and o.cost is not None and not math.isclose(o.cost, cost, rel_tol=1e-9, abs_tol=EPS):
        report.fail(f"{name}: the env costs the {o.label} plan {o.cost:g}, its checker {cost:g}: {_plan_text(o)}",
                    "the env and its checker disagree on cost")


def check_monotone(report: ScoringReport, name: str, outcomes: Sequence[Outcome]) -> None:
    """Promise 3: among feasible finished plans, cheaper never scores lower; equal cost scores
    the same (every metric, for the reference plan written in another order; the scores
    defined on the problem -- optimality, return, success, planning quality -- for any two
    plans, which may still differ in how they split the work)."""
    done = sorted((o for o in outcomes if o.feasible and o.cost is not None), key=lambda o: o.cost)
    for a, b in zip(done, done[1:]):
        if abs(a.cost - b.cost) <= EPS:
            same_plan = {a.label, b.label} <= {"oracle", "variant"}
            diff = _metric_difference(a, b, None if same_plan else _PROBLEM_SCORES)
            if diff:
                report.fail(f"{name}: equal cost {a.cost:g}, different {diff}: {a.short()} | {b.short()}",
                            f"equal cost, different {diff.split(' ')[0]}")
            continue
        for what, va, vb in (("optimality", a.optimality, b.optimality), ("return", a.episode_return, b.episode_return),
                             ("success", float(a.success), float(b.success))):
            if va < vb - EPS:
                report.fail(f"{name}: a cheaper plan scores lower {what}: {a.short()} < {b.short()}",
                            f"a cheaper plan scores lower {what}")


#: Scores defined on the problem alone: equal for any two feasible plans of equal cost.
_PROBLEM_SCORES = ("optimality", "planning_quality")


def _metric_difference(a: Outcome, b: Outcome, keys: Sequence[str] | None) -> str:
    """The first score two plans of equal cost differ on, among the return, success and the
    metrics ``keys`` (None: every metric); "" when none."""
    if abs(a.episode_return - b.episode_return) > EPS:
        return "return"
    if a.success != b.success:
        return "success"
    for key in keys if keys is not None else sorted(set(a.metrics) | set(b.metrics)):
        va, vb = _number(a.metrics.get(key)), _number(b.metrics.get(key))
        if key in _TRAJECTORY_METRICS or va is None and vb is None:
            continue
        if va is None or vb is None or abs(va - vb) > EPS:
            return f"{key} ({a.metrics.get(key)} vs {b.metrics.get(key)})"
    return ""


#: Metrics that describe how an episode was played, not the plan (steps, requests).
_TRAJECTORY_METRICS = frozenset({"steps", "invalid_actions", "requests", "submissions", "resubmissions"})


def _plan_text(o: Outcome, limit: int = 300) -> str:
    text = repr(o.plan) if o.plan is not None else "(policy episode)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_discrimination(report: ScoringReport, margin: float) -> None:
    """Promise 5: mean optimality rises do-nothing < random < greedy < oracle."""
    means = [(label, report.mean_optimality(label)) for label in DISCRIMINATION_ORDER]
    known = [(label, m) for label, m in means if m is not None]
    for (la, ma), (lb, mb) in zip(known, known[1:]):
        if not ma + margin <= mb:
            report.fail(f"mean optimality of {la} ({ma:.3f}) is not below {lb} ({mb:.3f}) by {margin}")


# ====================================================================== the check
def problem_of(env_id: str) -> str:
    """``"P7"`` from ``"Realm-P7-v0"``."""
    return env_id.split(":")[-1].split("-")[1]


def shipped_instances(env_id: str) -> list[str]:
    """The names of the id's shipped instances."""
    return list(list_instances(problem_of(env_id)))


def generated_instances(env_id: str, count: int, seed: int = 1000) -> list[Any]:
    """``count`` small instances from the problem's seeded generator (their references are
    solved once and cached, as for any generated instance)."""
    problem = problem_of(env_id)
    return [generate_instance(problem, size="small", seed=seed + k) for k in range(count)]


def greedy_factory(env_id: str) -> Callable[[gym.Env], Any] | None:
    """The id's greedy heuristic (the policy the registry marks ``greedy``), or None."""
    for spec in policy_specs().values():
        if spec.greedy and spec.fits(env_id):
            return spec.factory
    return None


def score_instance(env: gym.Env, name: str, *, random_episodes: int, search_tries: int, seed: int,
                   greedy: Callable[[gym.Env], Any] | None) -> tuple[InstanceScores, float | None]:
    """Every role's outcomes on one instance, and the reference measure."""
    scores = InstanceScores(name)
    env.reset(seed=seed)
    reference = _base(env).reference
    nothing = do_nothing(env, seed)
    if nothing is not None:
        scores.outcomes.append(nothing)
    for k in range(random_episodes):
        scores.outcomes.append(play(env, RandomPolicy(env, seed=seed + k), "random", seed + k))
    if greedy is not None:
        scores.outcomes.append(play(env, greedy(env), "greedy", seed))
    rng = np.random.default_rng(seed)
    if reference.plan:
        oracle = submit(env, reference.plan, "oracle", seed)
        if oracle is not None:
            scores.outcomes.append(oracle)
            for variant in reorderings(reference.plan, rng, 2):
                outcome = submit(env, variant, "variant", seed)
                if outcome is not None:
                    scores.outcomes.append(outcome)
            scores.outcomes += local_search(env, reference.plan, oracle.cost, search_tries, rng, seed)
    return scores, reference.measure


def check_scoring(
    env_id: str,
    *,
    instances: Sequence[Any] | None = None,
    generated: int = 0,
    random_episodes: int = 2,
    search_tries: int = 20,
    seed: int = 0,
    margin: float = 0.01,
    discriminate: bool = True,
    make_kwargs: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ScoringReport:
    """Check the scoring contract of ``env_id`` on its shipped instances (or ``instances``:
    names, files or instance objects), plus ``generated`` small instances of its generator.

    Per instance it scores doing nothing, ``random_episodes`` masked random episodes, the
    greedy heuristic, the oracle, reorderings of the reference plan and ``search_tries``
    steps of local search from it; then checks promises 1-4 on every outcome and promise 5
    (with ``margin`` between the role means) over the shipped set or ``instances`` (the
    generated extras are too few and too small to rank the roles; ``discriminate=False``
    skips promise 5 for a handful of chosen instances). Returns a :class:`ScoringReport`
    (``raise_if_failed()`` raises listing every broken promise)."""
    names = list(instances) if instances is not None else shipped_instances(env_id)
    ranked = len(names)
    names += generated_instances(env_id, generated, seed=1000 + seed)
    report = ScoringReport(env_id)
    greedy = greedy_factory(env_id)
    if greedy is None:
        report.notes.append("no greedy heuristic is registered for this id")
    for index, instance in enumerate(names):
        name = str(getattr(instance, "name", instance))
        if progress is not None:
            progress(name)
        env = gym.make(env_id, instance=instance, **dict(make_kwargs or {}))  # spaces follow the instance
        try:
            scores, measure = score_instance(env, name, random_episodes=random_episodes,
                                             search_tries=search_tries, seed=seed, greedy=greedy)
        finally:
            env.close()
        scores.ranked = index < ranked
        report.instances.append(scores)
        _check_instance(report, scores, measure)
    if discriminate:
        check_discrimination(report, margin)
    return report


def _check_instance(report: ScoringReport, scores: InstanceScores, measure: float | None) -> None:
    name = scores.instance
    nothing = scores.by("do-nothing")
    if nothing:
        check_do_nothing(report, name, nothing[0])
    else:
        report.notes.append(f"{name}: doing nothing cannot be submitted (the empty plan is refused; no pass move)")
    for o in scores.outcomes:
        check_infeasible(report, name, o)
        check_checker_agrees(report, name, o)
    check_best_known(report, name, scores.outcomes, measure)
    check_monotone(report, name, [o for o in scores.outcomes if o.terminated])
    if not math.isfinite(measure if measure is not None else 0.0):
        report.fail(f"{name}: the reference measure is not finite")
