"""The scoring contract attacked: agents and re-planners built to raise a score without a
better plan (DESIGN.md, "The scoring contract", promises 1 and 7).

:func:`check_scoring` plays honest roles; these probes play the adversary, driven by the
problem index, on every id with disruptions (and every id that declares a reference attack):

* **hold-back** (:func:`probe_hold_back`): random play that holds one actor or job back while
  anything else is legal, beside honest random play on the same seeds. A broken promise: its
  mean adaptation above honest play's (by ``margin``) with no better plan (its mean
  optimality no higher). Before issue 36 this maxed J2/J4's adaptation at 1.000.
* **re-planners against the yardstick** (:func:`probe_replanners`): an honest random episode
  is stopped at its first strike, copied, and continued by every re-planner of the set, from
  the episode's own state and from the yardstick's (``restore_adaptation_start()``: J2/J4's
  shop at the strike's time) --
  random continuations, the id's named heuristics, and the re-planners the problem declares
  (J2/J4: earliest start, gap-filling CP-SAT). A broken promise: a feasible continuation
  cheaper than the adaptation yardstick of that same state.
* **reference attack** (:func:`probe_references`): the problem's declared attack (J2/J4: CP-SAT
  hinted with the reference plan, 1 worker, 10 deterministic seconds) on each reference. A
  broken promise: a plan cheaper than the reference.

Like :mod:`.scoring` it sits on top of the package (it drives envs with the suite's
baselines); nothing in the library imports it.
"""

from __future__ import annotations

import copy
import itertools
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym

from crab_gym.baselines.hold_back import HoldBackPolicy
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.baselines.registry import policy_specs
from crab_gym.checks.scoring import EPS, ScoringReport, play, problem_of, shipped_instances, step_cap
from crab_gym.envs.realm.common.problem_spec import ProblemSpec, load_entry_point
from crab_gym.envs.realm.index import problem_spec
from crab_gym.evaluation.episode_runner import finished_metrics

#: How much higher a hold-back agent's mean adaptation may be than honest play's.
HOLD_BACK_MARGIN = 0.02

def _spec(env_id: str) -> ProblemSpec:
    return problem_spec(problem_of(env_id))


def _mean(values: Sequence[Any]) -> float | None:
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return statistics.fmean(numbers) if numbers else None


# ====================================================================== hold-back
def probe_hold_back(report: ScoringReport, env: gym.Env, name: str, seeds: int,
                    margin: float = HOLD_BACK_MARGIN) -> dict[str, Any]:
    """Hold-back against honest random play on ``seeds`` seeds of one instance; fails the
    report where holding back raises mean adaptation without a better plan. Returns the row."""
    held = [play(env, HoldBackPolicy(env, seed=s), "hold-back", s) for s in range(seeds)]
    honest = [play(env, RandomPolicy(env, seed=s), "random", s) for s in range(seeds)]
    row = {"instance": name,
           "honest_adaptation": _mean([o.metrics.get("adaptation") for o in honest]),
           "hold_back_adaptation": _mean([o.metrics.get("adaptation") for o in held]),
           "honest_optimality": _mean([o.optimality for o in honest]),
           "hold_back_optimality": _mean([o.optimality for o in held])}
    a, b = row["hold_back_adaptation"], row["honest_adaptation"]
    if a is not None and b is not None and a > b + margin and row["hold_back_optimality"] <= row["honest_optimality"]:
        report.fail(f"{name}: holding one actor back raises mean adaptation {b:.3f} -> {a:.3f} without a better "
                    f"plan (optimality {row['honest_optimality']:.3f} -> {row['hold_back_optimality']:.3f})",
                    "holding an actor back raises adaptation")
    return row


# ====================================================================== re-planners
def replanners(env_id: str, random_continuations: int) -> dict[str, Callable[[gym.Env, int], Any]]:
    """The probe's re-planners by label: ``random-k`` continuations, the id's named
    heuristics (not the oracle, which foresees), and those the problem declares."""
    out: dict[str, Callable[[gym.Env, int], Any]] = {
        f"random-{k}": (lambda env, seed, k=k: RandomPolicy(env, seed=seed + k)) for k in range(random_continuations)}
    for spec in policy_specs().values():
        if spec.env_ids is not None and spec.fits(env_id) and spec.name not in ("oracle",) and not spec.io_bound:
            out[spec.name] = lambda env, seed, f=spec.factory: f(env)
    problem = _spec(env_id)
    for path in problem.probe_replanners:
        factory = load_entry_point(f"{problem.package}.{path}")
        out[getattr(factory, "name", path)] = lambda env, seed, f=factory: f(env)
    return out


def _to_first_strike(env: gym.Env, seed: int) -> bool:
    """Honest random play until a disruption first strikes; True if the episode goes on."""
    policy = RandomPolicy(env, seed=seed)
    obs, info = env.reset(seed=seed)
    for _ in range(step_cap(env)):
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        if terminated or truncated:
            return False
        if info.get("disruptions"):
            return True
    return False


def _fix_yardstick(env: gym.Env) -> None:
    """Work out the yardstick of the state at the strike once, before the copies (each copy
    would re-solve the same state); left to each copy where the env cannot do it yet."""
    base = env.unwrapped
    if getattr(base, "adaptation_mode", "oracle") == "oracle" or getattr(base, "_resolved", None) is not None:
        return
    try:
        base._resolved = (base._resolve_adaptation(),)
    except Exception:  # noqa: BLE001 - a family that measures only at the end: each copy solves it
        base._resolved = None


def _continue(template: gym.Env, policy_factory: Callable[[gym.Env, int], Any], seed: int,
              from_yardstick_state: bool) -> dict[str, Any] | None:
    """A copy of ``template`` played to its end by the policy (from the yardstick's own
    state, where the env can restore it): cost, feasibility, yardstick."""
    env = copy.deepcopy(template)
    if from_yardstick_state and not env.unwrapped.restore_adaptation_start():
        return None
    policy = policy_factory(env, seed)
    obs, info = env.unwrapped._get_obs(), {}
    for _ in range(step_cap(env)):
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        if terminated or truncated:
            break
    else:
        return None
    if not terminated:
        return None
    metrics = finished_metrics(env, info)
    base = env.unwrapped
    return {"cost": base._agent_cost(), "feasible": bool(base._plan_feasible()),
            "yardstick": metrics.get("adaptation_reference_cost"), "adaptation": metrics.get("adaptation")}


def probe_replanners(report: ScoringReport, env: gym.Env, name: str, seed: int,
                     planners: Mapping[str, Callable[[gym.Env, int], Any]]) -> dict[str, Any]:
    """Every re-planner continuing from the first strike of an honest random episode; fails
    the report where one is cheaper than the yardstick. Returns the row (best re-planner)."""
    row: dict[str, Any] = {"instance": name, "yardstick": None, "best": None, "best_by": None, "beaten_by": []}
    if not _to_first_strike(env, seed):
        return row
    _fix_yardstick(env)
    for (label, factory), restored in itertools.product(planners.items(), (False, True)):
        out = _continue(env, factory, seed, restored)
        if out is None or not out["feasible"] or out["cost"] is None or out["yardstick"] is None:
            continue
        label = f"{label} (from the yardstick's state)" if restored else label
        row["yardstick"] = out["yardstick"]
        if row["best"] is None or out["cost"] < row["best"]:
            row["best"], row["best_by"] = out["cost"], label
        if out["cost"] < out["yardstick"] - EPS:
            row["beaten_by"].append(label)
            report.fail(f"{name}: the {label} re-planner continues from the first strike to {out['cost']:g}, "
                        f"below the adaptation yardstick {out['yardstick']:g}", "a re-planner beats the yardstick")
    return row


# ====================================================================== references
def probe_references(report: ScoringReport, env: gym.Env, name: str, seconds: float,
                     attack: Callable[..., tuple[float, Any]] | None) -> dict[str, Any]:
    """The problem's declared ``attack`` on the instance's reference; fails the report where
    it finds a cheaper plan. Returns the row."""
    base = env.unwrapped
    env.reset(seed=0)
    reference = base.reference
    row = {"instance": name, "reference": reference.value, "attack": None}
    if attack is None or not reference.plan:
        return row
    cost, _ = attack(base.instance, reference.plan, seconds)
    row["attack"] = cost
    if cost < float(reference.value) - EPS:
        report.fail(f"{name}: a hinted solver run ({seconds:g} s) finds a plan of {cost:g}, below the reference "
                    f"{reference.value:g}", "the reference attack beats a reference")
    return row


# ====================================================================== the probe
def check_adversarial(env_id: str, *, instances: Sequence[Any] | None = None, sizes: Sequence[str] = ("small", "medium"),
                      seeds: int = 2, random_continuations: int = 10, attack_seconds: float = 10.0,
                      make_kwargs: Mapping[str, Any] | None = None, make_env: Callable[[Any], gym.Env] | None = None,
                      progress: Callable[[str], None] | None = None) -> ScoringReport:
    """Play the adversarial probes on ``env_id`` (its shipped instances of ``sizes``, or
    ``instances``): hold-back and the re-planners where the problem has disruptions, the
    reference attack where it declares one. ``report.notes`` holds one line per probe and
    instance; ``report.probe_rows`` the figures. ``make_env(instance)`` builds the env
    instead of ``gym.make`` (a subclass under test)."""
    spec = _spec(env_id)
    names = list(instances) if instances is not None else [
        n for n in shipped_instances(env_id) if not sizes or any(z in n for z in sizes)]
    report = ScoringReport(env_id)
    rows: dict[str, list[dict[str, Any]]] = {"hold_back": [], "replanners": [], "references": []}
    planners = replanners(env_id, random_continuations) if spec.disruptions else {}
    for instance in names:
        name = str(getattr(instance, "name", instance))
        if progress is not None:
            progress(name)
        env = make_env(instance) if make_env else gym.make(env_id, instance=instance, **dict(make_kwargs or {}))
        try:
            if spec.disruptions:
                rows["hold_back"].append(probe_hold_back(report, env, name, seeds))
                rows["replanners"].append(probe_replanners(report, env, name, 0, planners))
            if spec.reference_attack is not None:
                rows["references"].append(probe_references(report, env, name, attack_seconds,
                                                            spec.part("reference_attack")))
        finally:
            env.close()
    report.probe_rows = rows
    if not spec.disruptions and spec.reference_attack is None:
        report.notes.append(f"{env_id}: no disruptions and no reference attack declared: nothing to probe")
    return report
