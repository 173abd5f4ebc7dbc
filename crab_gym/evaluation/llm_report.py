"""The LLM table of a benchmark report: one row per model x env, the columns LLM papers publish.

Published LLM planning tables give, per model (or framework), the share of valid plans, the
share of optimal plans, tokens, wall time and cost; some average optimality over every plan,
valid or not, which flatters a model that writes cheap invalid plans. Here:

* ``feasible`` is the share of the measured episodes that ended with a complete plan breaking
  no constraint (the runner's ``success``, and not ``metrics["feasible"] is False``): an
  infrastructure failure (the model API failing, :mod:`crab_gym.evaluation.outcome`) is left out, an
  episode the agent's own code raised in counts as no plan;
* ``optimal`` is the share (of the same episodes) whose plan was feasible with ``optimality >= 0.999``;
* ``optimality_feasible`` is the mean optimality over the feasible plans only (``n/a`` when none
  was), to read beside ``feasible``: an infeasible plan never enters it;
* tokens, requests and wall time are means per episode over every episode (errors included:
  their tokens were spent); cost is priced from the user's per-million-token prices
  (:class:`Prices`), ``n/a`` without a price for the model.

A policy gets a row when its episodes carry ``usage`` (what an LLM agent measured), or, given
the names of the baselines (``crab-gym report`` passes the registry's non-LLM policies), when it
is none of them: an agent an MCP client played through ``crab-gym mcp`` counts no tokens the
server could see, so its token, request and cost cells are ``n/a``. The CLI names LLM policies
``<kind>:<model>`` (``llm:qwen2.5:7b``, ``multi-llm:gpt-4o-mini``); the row's ``model`` and
``agent`` come from that name.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.evaluation.outcome import is_infra_failure
from crab_gym.evaluation.report_rows import group_key

#: The policy kinds the CLI prefixes to a model name (``llm:<model>``).
LLM_KINDS = ("llm", "multi-llm")
#: Optimality at or above this is an optimal plan (1 up to rounding in the metric).
OPTIMAL_AT = 0.999
#: Columns of the LLM table, in order.
LLM_COLUMNS = (
    "model", "agent", "env", "split", "kwargs", "episodes", "feasible", "optimal", "optimality_feasible",
    "tokens_in", "tokens_out", "requests", "wall_s", "cost", "cost_total",
)
LLM_LEGEND: dict[str, str] = {
    "split": "the instance split the row's episodes played (all its instances in one row)",
    "model": "the model the agent asked (the policy's name after `llm:` / `multi-llm:`)",
    "agent": "`llm`: one LLM agent plays the env; `multi-llm`: one LLM agent per actor of a multi-agent problem",
    "feasible": "share of episodes that ended with a complete plan breaking no constraint (an episode cut by the "
    "step limit, or that the agent's code raised in, has no plan; infrastructure failures are left out)",
    "optimal": f"share of episodes whose plan was feasible with optimality >= {OPTIMAL_AT}",
    "optimality_feasible": "mean REALM optimality over the feasible plans only (infeasible plans never count; n/a "
    "when none was feasible): read it beside `feasible`",
    "tokens_in": "mean prompt tokens per episode (as the server counted them; every episode, errors included; "
    "n/a where no token was counted: an agent played through the MCP server)",
    "tokens_out": "mean completion tokens per episode",
    "requests": "mean chat requests per episode (retries included)",
    "wall_s": "mean wall-clock seconds per episode (measured by the runner, never by the env)",
    "cost": "mean cost per episode from the prices given (--price-in / --price-out per million tokens); "
    "n/a without a price for the model",
    "cost_total": "cost of all the row's episodes",
}
_COUNTS = ("episodes",)
_MONEY = ("cost", "cost_total")


@dataclass(frozen=True)
class Prices:
    """Prices per million tokens: a default for every model and prices for named models.

    Attributes:
        price_in: model -> price of a million prompt tokens (key ``""``: every other model).
        price_out: model -> price of a million completion tokens (key ``""``: every other model).
    """

    price_in: Mapping[str, float] = field(default_factory=dict)
    price_out: Mapping[str, float] = field(default_factory=dict)

    def for_model(self, model: str) -> tuple[float, float] | None:
        """(in, out) per million tokens for ``model``; None when either price is unknown."""
        pin = self.price_in.get(model, self.price_in.get(""))
        pout = self.price_out.get(model, self.price_out.get(""))
        return None if pin is None or pout is None else (float(pin), float(pout))

    def to_json(self) -> dict[str, Any]:
        return {"price_in": dict(self.price_in), "price_out": dict(self.price_out), "per": "million tokens"}

    @classmethod
    def parse(cls, price_in: Sequence[str] | None, price_out: Sequence[str] | None) -> Prices:
        """From the CLI: each entry ``PRICE`` (every model) or ``MODEL=PRICE``.

        Raises:
            ValueError: a price that is not a number >= 0 (the message names the option).
        """
        return cls(_parse_side("--price-in", price_in or ()), _parse_side("--price-out", price_out or ()))

    def __bool__(self) -> bool:
        return bool(self.price_in or self.price_out)


def _parse_side(option: str, entries: Iterable[str]) -> dict[str, float]:
    prices: dict[str, float] = {}
    for entry in entries:
        model, _, text = entry.rpartition("=")
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{option} {entry!r}: give PRICE or MODEL=PRICE, a price per million tokens >= 0")
        if model in prices:
            raise ValueError(f"{option}: {'the default price' if not model else repr(model)} is given twice")
        prices[model] = value
    return prices


def model_and_agent(policy: str) -> tuple[str, str]:
    """``("qwen2.5:7b", "llm")`` for ``"llm:qwen2.5:7b"``; a name without a kind is its own model."""
    kind, sep, model = policy.partition(":")
    if sep and kind in LLM_KINDS and model:
        return model, kind
    return policy, ""


def is_feasible(result: EpisodeResult) -> bool:
    """A complete plan breaking no constraint: the runner's success, unless the env says infeasible."""
    return result.error is None and result.success and result.metrics.get("feasible", True) is not False


def _optimality(result: EpisodeResult) -> float | None:
    value = result.metrics.get("optimality")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def _count(usage: Mapping[str, Any], key: str) -> float:
    value = usage.get(key, 0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def llm_row(env_id: str, split: str | None, kwargs: str, policy: str, results: Sequence[EpisodeResult],
            prices: Prices | None) -> dict[str, Any]:
    """One row of the LLM table for the episodes of (env, split, kwargs, policy)."""
    model, agent = model_and_agent(policy)
    n = len(results)
    measured = max(sum(not is_infra_failure(r) for r in results), 1)  # shares of what measured the agent
    feasible = [r for r in results if is_feasible(r)]
    scores = [s for s in map(_optimality, feasible) if s is not None]
    tokens_in = [_count(r.usage, "prompt_tokens") for r in results]
    tokens_out = [_count(r.usage, "completion_tokens") for r in results]
    counted = any(r.usage for r in results)  # else: nobody counted them (an MCP client's agent)
    row: dict[str, Any] = {
        "model": model, "agent": agent, "env": env_id, "split": split, "kwargs": kwargs, "episodes": n,
        "feasible": len(feasible) / measured,
        "optimal": sum(s >= OPTIMAL_AT for s in scores) / measured,
        "optimality_feasible": statistics.fmean(scores) if scores else None,
        "tokens_in": statistics.fmean(tokens_in) if counted else None,
        "tokens_out": statistics.fmean(tokens_out) if counted else None,
        "requests": statistics.fmean(_count(r.usage, "requests") for r in results) if counted else None,
        "wall_s": statistics.fmean(r.wall_time_s for r in results),
        "cost": None, "cost_total": None,
    }
    price = prices.for_model(model) if prices is not None and counted else None
    if price is not None:
        costs = [(i * price[0] + o * price[1]) / 1e6 for i, o in zip(tokens_in, tokens_out)]
        row["cost"], row["cost_total"] = statistics.fmean(costs), math.fsum(costs)
    return row


def llm_summary(results: Sequence[EpisodeResult], prices: Prices | None = None,
                baselines: Collection[str] | None = None) -> list[dict[str, Any]]:
    """The LLM table: a row per (env, split, kwargs, policy) whose episodes carry ``usage``, or
    (given ``baselines``) whose policy is none of them; by model, then env. A split's instances
    form one row, as in the summary (:func:`crab_gym.evaluation.report_rows.group_key`)."""
    with_usage = {r.policy for r in results if r.usage}
    groups: dict[tuple[str, str | None, str, str], list[EpisodeResult]] = {}
    for r in results:
        if r.policy in with_usage or (baselines is not None and r.policy not in baselines):
            groups.setdefault(group_key(r), []).append(r)
    rows = [llm_row(env, split, kwargs, policy, rs, prices) for (env, split, kwargs, policy), rs in groups.items()
            if any(r.usage for r in rs) or (baselines is not None and policy not in baselines)]
    order = {key: k for k, key in enumerate(groups)}  # the results' own (env) order within a model
    return sorted(rows, key=lambda r: (r["model"], r["agent"], order[(r["env"], r["split"], r["kwargs"], _policy(r))]))


def _policy(row: Mapping[str, Any]) -> str:
    return f"{row['agent']}:{row['model']}" if row["agent"] else row["model"]


def _cell(column: str, value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value.replace("|", "\\|")
    if column in _COUNTS:
        return str(int(value))
    if column in _MONEY:  # cents of a cent matter when one episode costs little
        return f"{value:.6f}" if abs(value) < 1 else f"{value:.2f}"
    if column in ("tokens_in", "tokens_out", "requests"):
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
    if column == "wall_s":
        return f"{value:.2f}"
    return f"{value:.3f}"


def llm_markdown(rows: Sequence[Mapping[str, Any]], prices: Prices | None, *, legend: bool = True) -> list[str]:
    """The LLM table's Markdown lines (empty without LLM rows)."""
    if not rows:
        return []
    columns = [c for c in LLM_COLUMNS if c != "kwargs" or any(r["kwargs"] != "{}" for r in rows)]
    columns = [c for c in columns if c != "split" or any(r["split"] is not None for r in rows)]
    if not prices:
        columns = [c for c in columns if c not in _MONEY]
    lines = ["**LLM runs** (one row per model x env)", "",
             "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(c, r.get(c)) for c in columns) + " |" for r in rows]
    if prices:
        lines += ["", f"Prices per million tokens: in {_price_text(prices.price_in)}, out {_price_text(prices.price_out)}."]
    if legend:
        lines += ["", "**LLM columns**", ""] + [f"- `{c}`: {LLM_LEGEND[c]}" for c in columns if c in LLM_LEGEND]
    return lines


def _price_text(prices: Mapping[str, float]) -> str:
    if not prices:
        return "none"
    return ", ".join(f"{model or 'default'} {value:g}" for model, value in prices.items())
