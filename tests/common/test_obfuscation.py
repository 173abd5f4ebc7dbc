"""Obfuscated REALM envs (issue 26): on every REALM id the oracle's and the greedy heuristic's
plans, played under the new names, score exactly what they score under the old ones; the text
an LLM sees (task, state, tools, the adapter's prompt, errors) holds none of the old names; and
the instance's identifying words are all either renamed or declared kept (so a name the table
forgets fails here)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence

import crab_gym  # noqa: F401
from crab_gym.baselines import OraclePolicy
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.checks.scoring import greedy_factory
from crab_gym.envs.realm.common.obfuscation import (
    NameMap,
    ObfuscatedEnv,
    ObfuscatedNames,
    instance_names,
    make_obfuscated,
    reserved_words,
)
from crab_gym.envs.realm.index import problem_spec
from crab_gym.envs.registration import realm_ids
from crab_gym.wrappers import LLMAdapter, TrajectoryLogger, replay

IDS = realm_ids()
IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
#: Words of every instance that name no entity (sizes).
GENERIC = {"small", "medium", "large"}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


def play(env: gym.Env, actions: list[Any] | None = None, policy: Any = None, seed: int = 0,
         limit: int = 2000) -> tuple[list[Any], float, dict[str, Any]]:
    """Play ``actions`` (or ``policy``) to the end: (the actions played, the return, the last info)."""
    obs, info = env.reset(seed=seed)
    played, total = [], 0.0
    for k in range(limit):
        action = actions[k] if actions is not None else policy(obs, info)
        played.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        assert info["valid"], info.get("error")
        total += float(reward)
        if terminated or truncated:
            return played, total, info
    raise AssertionError("the episode did not end")


def renamed(env: ObfuscatedEnv, action: Any) -> Any:
    """An action of the original env as the obfuscated env takes it: the same call, shown."""
    call = action if isinstance(action, dict) else env.unwrapped.inner.codec.decode(action)
    return env.shown_call(call)


def tokens(text: str) -> set[str]:
    return set(IDENT.findall(text))


def llm_texts(env: ObfuscatedEnv) -> str:
    """Everything an LLM is shown: task, state, tools, and the adapter's whole prompt."""
    adapter = LLMAdapter(env)
    prompt, _ = adapter.reset(seed=0)
    return "\n".join([env.task_description, env.describe(), json.dumps(env.tools("openai")),
                      json.dumps(env.tools("anthropic")), prompt])


@pytest.mark.parametrize("env_id", IDS)
def test_the_oracle_plan_scores_the_same_under_other_names(env_id):
    _, total, info = play(gym.make(env_id), policy=OraclePolicy(gym.make(env_id)))
    env = make_obfuscated(env_id, seed=3)
    _, obf_total, obf_info = play(env, policy=OraclePolicy(env))
    assert obf_total == pytest.approx(total)
    assert obf_info["metrics"] == env.names.out(info["metrics"]) and obf_info["metrics"]["optimality"] == 1.0
    assert obf_info["solution"] == env.shown_plan(info["solution"])


@pytest.mark.parametrize("env_id", IDS)
def test_the_greedy_plan_scores_the_same_under_other_names(env_id):
    original = gym.make(env_id)
    actions, total, info = play(original, policy=greedy_factory(env_id)(original))
    env = make_obfuscated(env_id, seed=5)
    env.reset(seed=0)
    _, obf_total, obf_info = play(env, [renamed(env, a) for a in actions])
    assert obf_total == pytest.approx(total) and 0 < info["metrics"]["optimality"] <= 1
    assert obf_info["metrics"] == env.names.out(info["metrics"])


@pytest.mark.parametrize("env_id", IDS)
def test_the_llm_sees_none_of_the_original_names(env_id):
    env = make_obfuscated(env_id, seed=1)
    env.reset(seed=0)
    base = gym.make(env_id).unwrapped
    base.reset(seed=0)
    names = instance_names(base.instance, problem_spec(env_id).name_fields)
    kept = set(names) & reserved_words(base.codec, names)  # also a tool's or an argument's name (P4's place `park`)
    hidden = [base.instance.name, *(n for n in names if n not in kept)]
    assert set(env.names.forward) == set(hidden) and len(set(env.names.forward.values())) == len(hidden)
    assert len(kept) <= 1
    seen = tokens(llm_texts(env))
    assert not seen & set(hidden), sorted(seen & set(hidden))
    for alias in env.names.forward.values():  # every alias is a word the model can use
        assert alias not in tokens(base.describe() + base.task_description)
    # a rejected call's error is renamed too
    _, _, _, _, info = env.step({"name": "submit_plan", "arguments": {"no_such_argument": hidden[-1]}})
    assert not info["valid"] and not tokens(str(info["error"])) & set(hidden)


@pytest.mark.parametrize("env_id", IDS)
def test_no_step_of_an_episode_shows_an_original_name(env_id):
    """The greedy plan played through the LLM adapter: every prompt and every info (the call
    done, the sub-goals passed, events, the solution, the metrics) holds only the new names."""
    original = gym.make(env_id)
    actions, _, _ = play(original, policy=greedy_factory(env_id)(original))
    env = make_obfuscated(env_id, seed=2)
    adapter = LLMAdapter(env)
    prompt, info = adapter.reset(seed=0)
    hidden = set(env.names.forward)
    # a name may also stand inside a sub-goal id (visited_<place>): underscores bound it here
    inside = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, sorted(hidden, key=len, reverse=True)))
                        + r")(?![A-Za-z0-9])")
    for action in actions:
        prompt, _, terminated, truncated, info = adapter.step(json.dumps(renamed(env, action)))
        assert info["valid"], info["error"]
        shown = prompt + json.dumps(info, default=str)
        assert not inside.search(shown), inside.search(shown).group(0)
    assert terminated or truncated


@pytest.mark.parametrize("env_id", IDS)
def test_every_identifying_word_of_the_instance_is_renamed_or_declared_kept(env_id):
    """Independent of the name table: every identifier-like string of the instance's data that
    the original text shows must be renamed, or be a kind word the table keeps on purpose."""
    base = gym.make(env_id).unwrapped
    base.reset(seed=0)
    shown = tokens(f"{base.task_description}\n{base.describe()}\n{json.dumps(base.tools('openai'))}")
    strings = {s for s in _strings(base.instance) if IDENT.fullmatch(s)} & shown
    env = make_obfuscated(env_id)
    env.reset(seed=0)
    problem = problem_spec(env_id)
    reserved = reserved_words(base.codec, instance_names(base.instance, problem.name_fields))
    forgotten = strings - set(env.names.forward) - set(problem.kept_names) - GENERIC - reserved
    assert not forgotten, f"{env_id}: add these to its ProblemSpec's name_fields or kept_names: {sorted(forgotten)}"


def _strings(obj: Any, depth: int = 0) -> set[str]:
    if depth > 6 or obj is None:
        return set()
    if isinstance(obj, str):
        return {obj}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return set().union(*(_strings(getattr(obj, f.name), depth + 1) for f in dataclasses.fields(obj) if
                             not f.name.startswith("_")))
    if hasattr(type(obj), "model_fields") and not isinstance(obj, type):
        return set().union(*(_strings(getattr(obj, f), depth + 1) for f in type(obj).model_fields))
    if isinstance(obj, dict):
        return set().union(*(({k} if isinstance(k, str) else set()) | _strings(v, depth + 1) for k, v in obj.items()))
    if isinstance(obj, (list, tuple)):
        return set().union(*(_strings(v, depth + 1) for v in obj))
    return set()


@pytest.mark.parametrize("env_id", ["Realm-P1-v0", "Realm-P3-v0", "Realm-P6-v0", "Realm-P11-v0"])
def test_an_obfuscated_env_passes_the_env_checker_and_repeats_under_a_seed(env_id):
    check_env(make_obfuscated(env_id), skip_render_check=True)
    first, second = make_obfuscated(env_id, seed=7), make_obfuscated(env_id, seed=7)
    first.reset(seed=0)
    second.reset(seed=0)
    assert first.names.forward == second.names.forward and first.describe() == second.describe()
    other = make_obfuscated(env_id, seed=8)
    other.reset(seed=0)
    assert other.names.forward != first.names.forward


def test_a_job_shop_is_renumbered_consistently():
    """P11: jobs and machines renumbered in the text, the observation, the mask, the calls and
    the plans; the same schedule under both numberings."""
    plain = gym.make("Realm-P11-v0", instance="ft06")
    obs, _ = plain.reset(seed=0)
    env = make_obfuscated("Realm-P11-v0", seed=4, instance="ft06")
    shown, _ = env.reset(seed=0)
    jobs, machines = env.renumbering.new["job"], env.renumbering.new["machine"]
    assert sorted(jobs) == list(range(6)) and list(jobs) != list(range(6)) and list(machines) != list(range(6))
    for j in range(6):
        assert (shown["processing_time"][jobs[j]] == obs["processing_time"][j]).all()
        assert (shown["machine"][jobs[j]] == machines[obs["machine"][j]]).all()
    assert (shown["machine_available"][machines] == obs["machine_available"]).all()
    line = next(x for x in plain.unwrapped.describe().splitlines() if x.startswith("job 1:"))
    moved = next(x for x in env.describe().splitlines() if x.startswith(f"job {jobs[1]}:"))
    assert moved.split(":", 1)[1].split("(")[0] == line.split(":", 1)[1].split("(")[0]
    first_machine = int(re.search(r"\(M(\d+),", line).group(1))
    assert f"(M{machines[first_machine]}," in moved
    _, _, _, _, info = env.step({"name": "dispatch", "arguments": {"job": int(jobs[1])}})  # job 1, shown
    _, _, _, _, plain_info = plain.step({"name": "dispatch", "arguments": {"job": 1}})
    assert info["action"] == {"name": "dispatch", "arguments": {"job": int(jobs[1])}}
    assert (env.action_masks() == env.renumbering.observation({"action_mask": plain.unwrapped.action_masks()})[
        "action_mask"]).all()
    assert f"job {jobs[1]}" in env.describe() and info["makespan"] == plain_info["makespan"]
    plan = env.reference.plan["sequence"]
    inner_plan = env.inner.reference.plan["sequence"]
    assert plan[machines[0]] == [int(jobs[j]) for j in inner_plan[0]]


def test_the_flat_actions_keep_their_order():
    """``action_masks()`` is the inner env's: flat action k is the same call under both names."""
    for env_id in ("Realm-P3-v0", "Realm-P5-v0", "Realm-P10-v0"):
        env = make_obfuscated(env_id)
        env.reset(seed=0)
        inner = env.inner
        for flat in range(inner.codec.n_flat):
            assert env.names.back(env.codec.flat_to_call(flat)) == inner.codec.flat_to_call(flat)


def test_names_are_replaced_only_as_whole_identifiers():
    names = NameMap(["p1", "v1"], seed=0)
    p1, v1 = names.forward["p1"], names.forward["v1"]
    assert names.text("pickup:p1 p10 v1, xp1 v1_x") == f"pickup:{p1} p10 {v1}, xp1 v1_x"
    assert names.back({v1: [f"dropoff:{p1}", "p10"]}) == {"v1": ["dropoff:p1", "p10"]}


def test_every_realm_id_declares_its_name_fields():
    undeclared = [i for i in IDS if problem_spec(i).name_fields is None]
    assert not undeclared, f"declare ProblemSpec(name_fields=...) (and kept_names) of {undeclared}"


def test_an_env_built_without_gym_make_finds_its_table():
    from crab_gym.envs.realm.campus_tour.env import CampusTourEnv

    env = ObfuscatedEnv(CampusTourEnv())
    env.reset(seed=0)
    assert "entrance" in env.names.forward and "entrance" not in env.describe()


def test_an_env_without_a_name_table_is_a_clear_error():
    from tests.core.toy_env import LampsEnv

    with pytest.raises(ValueError, match=r"LampsEnv is no problem of the REALM index, so no ProblemSpec declares its "
                                         r"name_fields: pass name_fields=\[\.\.\.\]"):
        ObfuscatedEnv(LampsEnv())


@pytest.mark.parametrize("env_id", ["Realm-P5-v0", "Realm-P11-v0"])
def test_renaming_is_a_wrapper_the_same_by_hand_and_by_gym_make(env_id):
    """Issue 37: ``ObfuscatedNames`` is a Gymnasium wrapper around the registered env class;
    applied by hand it plays exactly what ``gym.make(id, obfuscate=seed)`` plays; the spec
    records it, so ``gym.make(env.spec)`` makes the same renamed env again."""
    made, by_hand = gym.make(env_id, obfuscate=6), ObfuscatedNames(gym.make(env_id), seed=6)
    for env in (made, by_hand):
        renamed = env.unwrapped  # what the LLM adapter, the MCP server and the policies read
        assert isinstance(renamed, gym.Wrapper) and isinstance(renamed, ObfuscatedNames)
        assert type(renamed.inner) is problem_spec(env_id).part("env") and renamed.inner.spec.id == env_id
        assert env.spec.id == env_id and [w.name for w in env.spec.additional_wrappers] == ["ObfuscatedNames"]
    assert data_equivalence(made.reset(seed=0), by_hand.reset(seed=0))
    rng = np.random.default_rng(0)
    for _ in range(40):
        call = made.unwrapped.codec.flat_to_call(int(rng.choice(np.flatnonzero(made.unwrapped.action_masks()))))
        step = made.step(call)
        assert data_equivalence(step, by_hand.step(call)) and step[4]["valid"], step[4]["error"]
        if step[2] or step[3]:
            break
    for env in (made, by_hand):
        again = gym.make(env.spec)
        again.reset(seed=0)
        assert again.unwrapped.names.forward == made.unwrapped.names.forward
        assert again.unwrapped.describe() == gym.make(env_id, obfuscate=6).unwrapped.describe()


@pytest.mark.parametrize("by_hand", [False, True])
def test_a_renamed_episode_replays_from_its_log(tmp_path, by_hand):
    """The logged spec records the wrapper (a hand-applied one too, whose log named no env
    before), so the replay rebuilds the renamed env and meets the same rewards and observations."""
    inner = ObfuscatedNames(gym.make("Realm-P11-v0"), seed=3) if by_hand else gym.make("Realm-P11-v0", obfuscate=3)
    env = TrajectoryLogger(inner, tmp_path / "log.jsonl")
    policy = RandomPolicy(env, seed=1)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        done = terminated or truncated
    env.close()
    report = replay(tmp_path / "log.jsonl")
    assert report.episodes == 1 and report.steps > 30 and not report.differences, report.differences[:3]


def test_obfuscate_is_a_keyword_of_the_env_and_a_misspelling_names_it():
    assert inspect.signature(problem_spec("P3").part("env")).parameters["obfuscate"].default is False
    with pytest.raises(TypeError, match=r"unknown keyword 'obfuscat' \(did you mean 'obfuscate'\?\)"):
        gym.make("Realm-P3-v0", obfuscat=True)


def test_gym_make_takes_obfuscate_as_a_keyword():
    plain = gym.make("Realm-P3-v0", obfuscate=False).unwrapped
    renamed = gym.make("Realm-P3-v0", obfuscate=4).unwrapped
    assert type(plain).__name__ == "RideSharingEnv"
    assert renamed.task_description == make_obfuscated("Realm-P3-v0", seed=4).task_description
    assert renamed.describe() != plain.describe()
    assert gym.make("Realm-P3-v0", obfuscate=True).unwrapped.describe() == make_obfuscated("Realm-P3-v0").describe()


@pytest.mark.parametrize("env_id", realm_ids())
def test_odd_arguments_are_answered_as_the_plain_env_answers_them(env_id):
    """Issue 38, item 1: arguments as a JSON string run; arguments that are no object, bad JSON
    or odd values are refused with a reason and change nothing (they raised here before)."""
    import numpy as np

    env = gym.make(env_id, obfuscate=True)
    env.reset(seed=0)
    base = env.unwrapped
    call = base.codec.flat_to_call(int(np.flatnonzero(base.action_masks())[0]))
    for odd in ([1, 2], "{bad json", {"x": [[]]}):
        _, reward, terminated, _, info = env.step({"name": call["name"], "arguments": odd})
        assert info["valid"] is False and info["error"] and not terminated, (odd, info.get("error"))
    _, _, _, _, info = env.step({"name": 3, "arguments": {}})
    assert info["valid"] is False and info["error"]
    _, _, _, _, info = env.step({"name": call["name"], "arguments": json.dumps(call["arguments"])})
    assert info["valid"] is True, info.get("error")


@pytest.mark.parametrize("value", ["yes", 1.5, -1, [1]])
def test_an_obfuscate_value_that_is_no_seed_is_named_in_the_error(value):
    """Issue 38 item 6: obfuscate='yes' said "invalid literal for int() with base 10: 'yes'"."""
    with pytest.raises(ValueError, match=r"obfuscate must be True, False or a seed \(a whole number >= 0\), got "):
        gym.make("Realm-P1-v0", obfuscate=value)


def test_a_numpy_integer_is_a_seed_of_the_renaming():
    import numpy as np

    a, b = gym.make("Realm-P1-v0", obfuscate=np.int64(3)), gym.make("Realm-P1-v0", obfuscate=3)
    a.reset(seed=0)
    b.reset(seed=0)
    assert a.unwrapped.describe() == b.unwrapped.describe()
