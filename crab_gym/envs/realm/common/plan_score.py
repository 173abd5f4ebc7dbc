"""Scoring a whole plan: the checker's verdict and the metrics the env gives it (``crab-gym score``).

A *plan* is the arguments of the env's ``submit_plan`` action (what ``Reference.plan`` stores,
``OraclePolicy`` submits and an LLM agent calls). :func:`score_plan` judges one twice, with
code that exists already:

* the family's independent checker (``env.check_plan(plan)``, the ``check`` role): feasible
  or not, the cost, each declared constraint and whatever else the checker reports;
* the env itself: the plan is submitted at the start of an episode and again at every pause
  (a disruption strikes), as the scoring check and ``OraclePolicy`` play a plan, and the
  episode's ``info["metrics"]`` (with :func:`~crab_gym.evaluation.episode_runner.finished_metrics`'
  deferred solves done) are the REALM metrics -- optimality included, by the env's own
  formula. A plan the env refuses (an invalid action: it deadlocks, misses an operation, ...)
  has no episode: it counts as no plan (:func:`~crab_gym.evaluation.unfinished.no_plan_metrics`,
  0 on optimality), as the runner counts an episode without one.

:func:`episode_plan` goes the other way: the plan an episode produced (``info["solution"]``
narrowed to ``submit_plan``'s arguments), which ``RealmEnv.plan_json()`` writes to a file, so
that scoring that file gives the episode's own optimality.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from crab_gym.core.action import Action, ActionArgumentError
from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.common.references import Reference
from crab_gym.evaluation.episode_runner import finished_metrics
from crab_gym.evaluation.unfinished import no_plan_metrics

#: Submissions of one plan before its episode counts as unfinished (one more per pause: the
#: problems with the most disruptions pause a few times).
MAX_SUBMISSIONS = 50
#: The reference's fields a score reports (its ``plan`` is left out: it is the oracle's plan).
REFERENCE_FIELDS = ("value", "status", "bound", "solver", "time_limit_s", "workers", "source")


class NotScorableError(TypeError):
    """An env that takes no whole plan (no ``submit_plan`` action, no checker): not a REALM env."""


class PlanFormatError(ValueError):
    """A plan file that is not a plan of the env: names the file and the field."""

    def __init__(self, source: str, problem: str, field: str | None = None) -> None:
        self.source, self.problem, self.field = source, problem, field
        super().__init__(f"{source}: {problem}")


@dataclass
class PlanScore:
    """What ``crab-gym score`` reports on one plan.

    Attributes:
        env_id, instance: where the plan was scored.
        feasible: the checker finds every hard constraint kept and the env accepted the plan.
        cost: the checker's cost of the plan (``inf``: it has no schedule at all).
        constraints: each declared constraint by name, and whether it holds.
        details: the rest of the checker's verdict (its metrics, and the family's own fields:
            a schedule, the violations in words, an error).
        reference: the yardstick (value, status, bound, solver, ... and the ``measure``
            optimality is taken against).
        metrics: the REALM metrics the env gives the plan's episode.
        optimality: ``metrics["optimality"]`` (0 when the env refuses the plan).
        refused: why the env refused the plan ("" when it played it).
        notes: where the checker and the env disagree (a bug of the family's, by the scoring
            contract), or what else the reader should know.
    """

    env_id: str
    instance: str
    feasible: bool
    cost: float
    constraints: dict[str, bool]
    details: dict[str, Any]
    reference: dict[str, Any]
    metrics: dict[str, Any]
    optimality: float
    refused: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        """The names of the constraints that do not hold."""
        return [name for name, ok in self.constraints.items() if not ok]

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible (an infinite cost is ``null``)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["violations"] = self.violations
        return jsonable(out)


# ====================================================================== reading a plan
def load_plan(path: str | Path) -> Any:
    """The JSON of a plan file; :class:`PlanFormatError` naming the file if it is no JSON."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanFormatError(source, f"cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise PlanFormatError(source, "is not UTF-8 text (a plan file is JSON)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanFormatError(source, f"is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None


def submit_action(env: gym.Env) -> Action:
    """The env's ``submit_plan`` action (:class:`NotScorableError` if the env takes none)."""
    action = getattr(env.unwrapped, "actions", {}).get("submit_plan")
    if action is None or not callable(getattr(env.unwrapped, "check_plan", None)):
        raise NotScorableError(
            f"{_env_id(env)} takes no whole plan (no submit_plan action and checker): scoring needs a REALM env")
    return action


def check_plan_arguments(env: gym.Env, plan: Any, source: str = "the plan") -> dict[str, Any]:
    """``plan`` as ``submit_plan`` arguments, validated by the action itself, so a plan the
    env cannot even be given is reported as such (the file and the field), not scored."""
    action = submit_action(env)
    try:
        values = action.validate(plan)
    except ActionArgumentError as exc:
        fields = ", ".join(action.param_names)
        raise PlanFormatError(source, f"not a plan of {_env_id(env)} (its fields: {fields}): {exc.problem}",
                              exc.parameter) from None
    return action.to_json_arguments(values)


# ====================================================================== scoring it
def score_plan(env: gym.Env, plan: Any, source: str = "the plan") -> PlanScore:
    """The checker's verdict on ``plan`` and the metrics ``env`` gives it, on the env's current
    instance. Resets ``env`` (the plan is played in a fresh episode)."""
    arguments = check_plan_arguments(env, plan, source)
    base = env.unwrapped
    verdict: PlanCheck = base.check_plan(copy.deepcopy(arguments))
    metrics, refused = play_plan(env, arguments)
    reference = base.solved_reference()
    played = not refused
    notes = _disagreements(base, verdict) if played else []
    return PlanScore(
        env_id=_env_id(env),
        instance=str(getattr(base.instance, "name", "") or "?"),
        feasible=bool(verdict.feasible and played and base._plan_feasible()),
        cost=float(verdict.cost),
        constraints=dict(verdict.constraints),
        details=checker_details(verdict),
        reference=reference_record(reference),
        metrics=metrics,
        optimality=float(metrics.get("optimality") or 0.0),
        refused=refused,
        notes=notes,
    )


def play_plan(env: gym.Env, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """``(metrics, "")`` of an episode that submits ``arguments`` at its start and at every
    pause; ``(metrics of no plan, why)`` when the env refuses the plan or never ends."""
    # the env's instance again (an env made with ``generator=`` would otherwise draw another)
    env.reset(seed=0, options={"instance": env.unwrapped.instance})
    call = {"name": "submit_plan", "arguments": dict(arguments)}
    for _ in range(MAX_SUBMISSIONS):
        _, _, terminated, truncated, info = env.step(copy.deepcopy(call))
        if not info.get("valid", True):
            return no_plan_metrics({}, None), f"the env refuses the plan: {info.get('error') or 'invalid'}"
        if terminated:
            return finished_metrics(env, info), ""
        if truncated:
            return no_plan_metrics({}, None), "the env cut the episode (truncated) before the plan ended it"
    return no_plan_metrics({}, None), f"the episode did not end after {MAX_SUBMISSIONS} submissions of the plan"


def _disagreements(base: Any, verdict: PlanCheck) -> list[str]:
    """Where the env's own verdict on the episode differs from the checker's on the plan."""
    notes = []
    feasible = bool(base._plan_feasible())
    if feasible != bool(verdict.feasible):
        notes.append(f"the env finds the played plan {'feasible' if feasible else 'infeasible'}, "
                     f"its checker {'feasible' if verdict.feasible else 'infeasible'}")
    cost = base._agent_cost()
    if cost is not None and math.isfinite(verdict.cost) and not math.isclose(float(cost), verdict.cost, abs_tol=1e-6):
        notes.append(f"the env costs the played plan {float(cost):g}, its checker {verdict.cost:g}")
    return notes


def reference_record(reference: Reference) -> dict[str, Any]:
    """The reference's value and provenance, and the ``measure`` optimality is taken against."""
    out = {name: getattr(reference, name) for name in REFERENCE_FIELDS}
    out["measure"] = reference.measure
    out.update({k: v for k, v in reference.extra.items() if _is_scalar(v)})
    return out


def checker_details(verdict: PlanCheck) -> dict[str, Any]:
    """The checker's metrics and the family's own fields of its verdict (JSON-compatible)."""
    base = {f.name for f in dataclasses.fields(PlanCheck)}
    own = {f.name: getattr(verdict, f.name) for f in dataclasses.fields(verdict) if f.name not in base}
    return jsonable({**verdict.metrics, **own})


# ====================================================================== an episode's plan
def episode_plan(env: gym.Env) -> dict[str, Any]:
    """The plan of ``env``'s episode (the whole plan once it ended) as ``submit_plan``
    arguments: ``info["solution"]`` with what the solution reports besides the plan (times,
    costs, the disruptions met) left out, by the action's own schema."""
    action = submit_action(env)
    solution = jsonable(env.unwrapped._solution())
    kept = project(solution, action.to_schema()["parameters"])
    return action.to_json_arguments(action.validate(kept))


def project(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` with every object key the JSON ``schema`` does not declare left out."""
    if isinstance(value, Mapping):
        declared = schema.get("properties")
        extra = schema.get("additionalProperties")
        out = {}
        for key, sub in value.items():
            if isinstance(declared, Mapping) and key in declared:
                out[key] = project(sub, declared[key])
            elif isinstance(extra, Mapping):
                out[key] = project(sub, extra)
            elif declared is None and extra is not False:
                out[key] = sub
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [project(item, schema["items"]) for item in value]
    return value


# ====================================================================== helpers
def jsonable(value: Any) -> Any:
    """``value`` as JSON data: tuples as lists, numpy numbers as Python's, non-finite floats
    as None, dataclasses as dicts, anything else unknown as its text."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if callable(getattr(value, "tolist", None)):
        return jsonable(value.tolist())  # a numpy number or array
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _env_id(env: gym.Env) -> str:
    spec = getattr(env, "spec", None) or getattr(env.unwrapped, "spec", None)
    return spec.id if spec is not None else type(env.unwrapped).__name__
