"""The trained policies beside random play, the greedy heuristic and the oracle, per id.

Reads the reference results (default: the shipped ``crab_gym/results/reference.json.gz``, which
``crab-gym results`` regenerates with the policy named ``trained`` among its rows) and prints,
per REALM id on its ``test`` split, the mean optimality with its 95 % interval for ``trained``,
``random``, the id's greedy heuristic and ``oracle``, then the paired differences
trained - random and trained - greedy over the instances (bootstrap interval: an interval
without 0 is a real difference). The table of docs/rl.md is this script's output.

Run::

    python benchmarks/rl_table.py [--results runs/reference/results.json] [--metric optimality]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from crab_gym.baselines.registry import policy_specs  # noqa: E402
from crab_gym.results.compare import paired_difference, per_instance  # noqa: E402
from crab_gym.results.table import episode_from_compact, load_reference  # noqa: E402


def greedy_name(env_id: str) -> str | None:
    """The id's greedy heuristic (the one the scoring check ranks between random and oracle)."""
    return next((name for name, spec in policy_specs().items() if spec.greedy and spec.fits(env_id)), None)


def _cell(row: dict | None, metric: str) -> str:
    if row is None or row.get(metric) is None:
        return "n/a"
    ci = (row.get("ci") or {}).get(metric)
    return f"{row[metric]:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _diff(found: dict | None) -> str:
    if found is None:
        return "n/a"
    ci = found["ci"]
    if not ci:
        return f"{found['difference']:+.3f}"
    mark = " **" if ci[0] > 0 else (" (worse)" if ci[1] < 0 else "")
    return f"{found['difference']:+.3f} [{ci[0]:+.2f}, {ci[1]:+.2f}]{mark}"


def table(data: dict, metric: str) -> list[str]:
    rows = {(r["env"], r["policy"]): r for r in data["rows"]}
    episodes: dict[tuple[str, str], list] = {}
    for record in data["episodes"]:
        result = episode_from_compact(record)
        episodes.setdefault((result.env_id, result.policy), []).append(result)
    envs = list(dict.fromkeys(r["env"] for r in data["rows"]))
    lines = ["| env | trained | random | greedy | oracle | trained - random | trained - greedy |",
             "|---|---|---|---|---|---|---|"]
    for env in envs:
        greedy = greedy_name(env)
        mine = per_instance(episodes.get((env, "trained"), []), metric)
        random = per_instance(episodes.get((env, "random"), []), metric)
        best = per_instance(episodes.get((env, greedy), []), metric) if greedy else {}
        lines.append(
            f"| {env} | {_cell(rows.get((env, 'trained')), metric)} | {_cell(rows.get((env, 'random')), metric)} | "
            f"{greedy or 'n/a'} {_cell(rows.get((env, greedy)), metric)} | {_cell(rows.get((env, 'oracle')), metric)} | "
            f"{_diff(paired_difference(mine, random) if mine else None)} | "
            f"{_diff(paired_difference(mine, best) if mine and best else None)} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=None, help="a results.json of crab-gym results (default: the shipped)")
    parser.add_argument("--metric", default="optimality")
    args = parser.parse_args(argv)
    data = load_reference(args.results)
    print("\n".join(table(data, args.metric)))
    print(f"\n({args.metric}, test split; ** marks a difference whose 95 % interval is above 0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
