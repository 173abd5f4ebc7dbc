"""docs/adding-a-problem.md is enough to add a problem: its worked example (P12, a toy
knapsack) is built from the page's file blocks, added with one index line (``add_family``, the
run-time twin of a line in ``FAMILIES``), and then gets everything a shipped problem gets: a
``gym.make`` id, Gymnasium's ``check_env``, the suite's contract and scoring checks, the
datasets facade, its greedy in the policy registry and the CLI, seeded determinism, renamed
play (``obfuscate=True``) from the name fields its record declares.

The family is removed again afterwards (index, Gymnasium registry, policy cache, modules), so
no other test sees a P12.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence

import crab_gym  # noqa: F401 - registers the shipped ids
import crab_gym.envs.realm.index as index
from crab_gym.baselines import registry
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.checks import check_contract, check_scoring
from crab_gym.checks.scoring import greedy_factory, submit
from crab_gym.cli import main as cli_main
from crab_gym.datasets import generate_instance, list_instances, load_instance, problems
from crab_gym.envs.realm.common.known_problems import use_problem_specs
from crab_gym.envs.realm.common.problem_spec import ProblemSpec
from crab_gym.envs.registration import add_family, realm_ids, remove_family
from crab_gym.wrappers import ObfuscatedNames

PAGE = Path(__file__).resolve().parents[1] / "docs" / "adding-a-problem.md"
#: A file block: a ```py fence whose first line names the file (``# toy_knapsack/env.py``).
FILE_BLOCK = re.compile(r"^```py\n# (toy_knapsack/[\w/]+\.py)\n(.*?)^```", flags=re.S | re.M)
PACKAGE = "toy_knapsack"
SPEC_MODULE = f"{PACKAGE}.spec"
ENV_ID = "Realm-P12-v0"
GREEDY = "knapsack_density"


def page_files() -> dict[str, str]:
    """The page's file blocks, path -> text."""
    return dict(FILE_BLOCK.findall(PAGE.read_text(encoding="utf-8")))


def _forget_family(folder: str) -> None:
    """Undo ``add_family``: the index's run-time list, the ids, the policy cache, the modules."""
    remove_family(SPEC_MODULE)
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    if folder in sys.path:
        sys.path.remove(folder)


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProblemSpec]:
    """The page's example written to a temporary folder and added with one index line."""
    root = tmp_path_factory.mktemp("family")
    for path, text in page_files().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    assert ENV_ID not in gym.registry and PACKAGE not in sys.modules
    sys.path.insert(0, str(root))
    try:
        (spec,) = add_family(SPEC_MODULE)
        yield spec
    finally:
        _forget_family(str(root))


def test_the_page_holds_the_whole_family_and_it_is_small() -> None:
    files = page_files()
    modules = {"spec", "model", "generator", "formats", "checker", "references", "heuristics", "render", "env", "__init__"}
    assert set(files) == {f"{PACKAGE}/{m}.py" for m in modules}
    assert sum(text.count("\n") for text in files.values()) < 320  # ten modules, about 30 lines each


def test_one_index_line_registers_the_id(family: ProblemSpec) -> None:
    assert (family.problem, family.env_id) == ("P12", ENV_ID)
    assert realm_ids()[-1] == ENV_ID and problems()[-1] == "P12"
    assert gym.spec(ENV_ID).entry_point == "toy_knapsack.env:KnapsackEnv"
    assert add_family(SPEC_MODULE) == (family,)  # idempotent
    assert index._EXTRA.count(SPEC_MODULE) == 1


def test_gymnasium_check_env_passes(family: ProblemSpec) -> None:
    env = gym.make(ENV_ID)
    assert set(env.metadata["render_modes"]) == {"ansi", "rgb_array"}
    check_env(env.unwrapped)
    env.close()


def test_the_contract_check_passes(family: ProblemSpec) -> None:
    report = check_contract(ENV_ID, steps=2000, seed=1)
    report.raise_if_failed()
    assert report.exceptions == 0 and report.legal_steps > 500 and report.invalid_tried > 500
    assert report.out_of_space_tried > 200 and report.episodes > 5
    check_contract(ENV_ID, steps=300, seed=2, make_kwargs={"generator": 6}).raise_if_failed()


def test_the_scoring_check_passes(family: ProblemSpec) -> None:
    report = check_scoring(ENV_ID, generated=2)
    report.raise_if_failed()
    nothing, random, greedy, oracle = (report.mean_optimality(r) for r in ("do-nothing", "random", "greedy", "oracle"))
    assert nothing == 0.0 and oracle == 1.0
    assert random + 0.1 < greedy < oracle - 0.02  # the margins the page quotes, with room
    assert report.counts()["search"] > 0  # the local search ran, infeasible plans included


def test_the_datasets_facade_reads_the_index(family: ProblemSpec) -> None:
    names = list_instances("P12")
    assert names == ["p12_small_00", "p12_small_01", "p12_small_02", "p12_small_03",
                     "p12_medium_00", "p12_medium_01"]
    small = load_instance("P12", "p12_small_00")
    assert (small.name, small.n, small.capacity) == ("p12_small_00", 8, 53)
    assert generate_instance("P12", size="small", seed=7) == generate_instance("P12", size="small", seed=7)
    assert generate_instance("P12", size="medium", seed=7).n == 12
    with pytest.raises(ValueError, match="unknown P12 instance 'nope'"):
        load_instance("P12", "nope")


def test_the_policy_registry_offers_the_greedy(family: ProblemSpec) -> None:
    specs = registry.policy_specs()
    assert specs[GREEDY].greedy and specs[GREEDY].env_ids == (ENV_ID,)
    assert specs["oracle"].fits(ENV_ID) and not specs["spt"].fits(ENV_ID)
    assert greedy_factory(ENV_ID) is not None
    assert {"random", "oracle", GREEDY} <= set(registry.policies_for(ENV_ID))


def test_crab_gym_run_plays_the_greedy(family: ProblemSpec, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["run", "--env", ENV_ID, "--policy", GREEDY, "oracle", "--episodes", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    # a problem that declares no splits plays all its 6 shipped instances, 2 seeds each:
    # split, episodes, instances, infra_errors, truncated (then the oracle's return)
    assert f"| {ENV_ID} | {GREEDY} | all | 12 | 6 | 0 | 0 |" in out, out
    assert f"| {ENV_ID} | oracle | all | 12 | 6 | 0 | 0 | 1.000 [1.00, 1.00] |" in out, out


def test_check_role_agrees_with_the_reference_and_the_env(family: ProblemSpec) -> None:
    check, load, reference = family.part("check"), family.part("load"), family.part("reference")
    inst = load("p12_medium_01")
    ref = reference(inst)
    verdict = check(inst, ref.plan)
    assert verdict.feasible and verdict.cost == ref.value and ref.status == "OPTIMAL"
    env = gym.make(ENV_ID, instance="p12_medium_01")
    for plan in (ref.plan, {"items": []}, {"items": list(range(inst.n))}):
        outcome = submit(env, copy.deepcopy(plan), "check")
        verdict = check(inst, plan)
        assert (outcome.feasible, outcome.cost) == (verdict.feasible, verdict.cost)
    assert not check(inst, {"items": list(range(inst.n))}).feasible  # everything overflows
    assert check(inst, {"items": [0, 0]}).violations == ["distinct_items", "capacity"]
    assert env.step({"name": "submit_plan", "arguments": {"items": [0, 0]}})[4]["error"]


def _episode(seed: int) -> list:
    env = gym.make(ENV_ID, generator=8, render_mode="ansi")
    policy = RandomPolicy(env, seed=seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs, info, env.render())]
    for _ in range(50):
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        trace.append((obs, reward, terminated, truncated, info, env.render()))
        if terminated or truncated:
            break
    env.close()
    return trace


def test_a_seeded_episode_is_deterministic(family: ProblemSpec) -> None:
    first, again, other = _episode(5), _episode(5), _episode(6)
    assert first[-1][2] and data_equivalence(first, again)
    assert not np.array_equal(first[0][0]["values"], other[0][0]["values"])  # the seed draws the knapsack


def _greedy_episode(env: gym.Env) -> tuple[float, dict]:
    """The greedy's episode on ``env`` (seed 0): its return and last info."""
    policy = registry.policy_specs()[GREEDY].build(env)
    obs, info = env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        assert info["valid"], info["error"]
        total, done = total + float(reward), terminated or truncated
    return total, info


@pytest.mark.parametrize("instance", ["p12_small_02", "p12_medium_01"])
def test_renamed_play_needs_only_the_declared_name_fields(family: ProblemSpec, instance: str) -> None:
    """``name_fields`` in spec.py is all renaming needs: the instance's name is hidden from
    the agent, and the greedy's plan scores exactly what it scores under the old names."""
    assert family.name_fields == ()
    plain_return, plain_info = _greedy_episode(gym.make(ENV_ID, instance=instance))
    env = gym.make(ENV_ID, instance=instance, obfuscate=4, render_mode="ansi")
    renamed = env.unwrapped
    assert isinstance(renamed, ObfuscatedNames) and type(renamed.inner) is family.part("env")
    obf_return, obf_info = _greedy_episode(env)
    assert obf_return == plain_return and 0 < plain_info["metrics"]["optimality"] <= 1
    assert obf_info["metrics"] == plain_info["metrics"] and obf_info["solution"] == plain_info["solution"]
    alias = renamed.names.forward[instance]
    shown = renamed.describe() + env.render() + renamed.task_description
    assert instance not in shown and alias in renamed.describe() and alias.startswith("instance_")
    by_hand = ObfuscatedNames(gym.make(ENV_ID, instance=instance), seed=4)  # the same wrapper, applied by hand
    by_hand.reset(seed=0)
    assert by_hand.names.forward == renamed.names.forward


def test_renaming_a_problem_without_name_fields_says_which_field_to_fill(family: ProblemSpec) -> None:
    undeclared = dataclasses.replace(family, name_fields=None)
    use_problem_specs([*(s for s in index.problem_specs() if s.problem != "P12"), undeclared])
    try:
        with pytest.raises(ValueError, match=r"Realm-P12-v0's ProblemSpec declares no name_fields, .*set "
                                             r"ProblemSpec\(name_fields=\(\.\.\.\)\) in its spec\.py"):
            gym.make(ENV_ID, obfuscate=True)
        gym.make(ENV_ID)  # the plain env is not concerned
    finally:
        use_problem_specs(index.problem_specs())
