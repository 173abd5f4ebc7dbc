"""The task templates: how many, what they cover, that every seed gives a valid, distinct,
deterministic task, and that every template's scripted solution scores 1 on the real desktop
over many seeds while doing nothing scores 0 (checks read real state, never pixels)."""

from __future__ import annotations

import json

import pytest

from crab_gym.envs.desktop import get_task, get_template, list_tasks, list_templates
from crab_gym.envs.desktop.actions import PROBE_ACTIONS
from crab_gym.envs.desktop.env import CrabDesktopEnv
from crab_gym.envs.desktop.templates import TEMPLATES

SINGLE = [t for t in TEMPLATES.values() if len(t.envs) == 1]
CROSS = [t for t in TEMPLATES.values() if len(t.envs) > 1]


def _seeds(tpl) -> range:
    """Seeds whose scripted solutions CI runs: more for the quick terminal templates than for
    those that start the editor, move windows or use two displays (>= 400 distinct in all)."""
    slow = len(tpl.envs) > 1 or "editor" in tpl.apps or "windows" in tpl.tags
    return range(3 if slow else 8)


SEEDS = {t.id: _seeds(t) for t in TEMPLATES.values()}
PARTIAL = [t.id for t in TEMPLATES.values() if t.instance(0).partial is not None]


def fingerprint(task) -> str:
    """What makes two instances the same task: what is set up, checked and asked."""
    return json.dumps([task.description, task.setup, task.checks], sort_keys=True)


def test_template_counts_and_coverage():
    assert len(SINGLE) >= 40 and len(CROSS) >= 10
    assert sum(t.infeasible for t in TEMPLATES.values()) >= 6
    apps = {a for t in TEMPLATES.values() for a in t.apps}
    assert {"terminal", "editor", "settings", "clipboard"} <= apps
    tags = {tag for t in TEMPLATES.values() for tag in t.tags}
    assert {"files", "directories", "windows", "settings", "clipboard", "infeasible", "multi-step",
            "cross-env"} <= tags
    assert list_templates() == list(TEMPLATES)
    assert not set(TEMPLATES) & set(list_tasks())  # a template never hides a fixed task


def test_at_least_400_distinct_instances_are_solved_in_ci():
    distinct = sum(len({fingerprint(t.instance(s)) for s in SEEDS[t.id]}) for t in TEMPLATES.values())
    assert distinct >= 400, distinct


@pytest.mark.parametrize("template_id", list(TEMPLATES))
def test_instances_are_deterministic_valid_and_keep_their_sub_goals(template_id):
    tpl = get_template(template_id)
    first = tpl.instance(7)
    assert fingerprint(first) == fingerprint(tpl.instance(7))
    assert first.id == f"{template_id}#7" and first.template == template_id and first.seed == 7
    assert get_task(f"{template_id}#7") == first == get_task(template_id, seed=7)
    nodes = set(first.checks)
    for seed in range(20):
        task = tpl.instance(seed)
        assert set(task.checks) == nodes  # the graph's shape does not depend on the seed
        assert "{workdir" not in task.describe({e: "/w" for e in task.envs})
        assert task.solution[-1]["name"] == ("declare_infeasible" if tpl.infeasible else "complete")
    assert len({fingerprint(tpl.instance(s)) for s in range(20)}) >= 2


def test_template_needs_a_seed_and_fixed_tasks_take_none():
    with pytest.raises(ValueError, match="give a seed"):
        get_task("rename_files")
    with pytest.raises(ValueError, match="takes no seed"):
        get_task("create_file", seed=1)
    with pytest.raises(KeyError, match="unknown desktop task template"):
        get_task("no_such_template#3")
    with pytest.raises(ValueError, match="task_seed must be >= 0"):
        get_template("rename_files").instance(-1)


def test_probes_cover_every_kind_of_state():
    names = {p.name for p in PROBE_ACTIONS}
    assert {"file_text_equals", "window_rect_near", "setting_equals", "clipboard_equals"} <= names


@pytest.fixture(scope="module")
def fast_env(attach_kwargs):
    """One env on the shared display; settle=0: the final check's grace period waits instead."""
    env = CrabDesktopEnv(SINGLE[0].id, seed=0, settle=0.0, **attach_kwargs)
    yield env
    env.close()


@pytest.fixture(scope="module")
def cross_env():
    """One two-machine env (two private displays) for every cross-environment template."""
    env = CrabDesktopEnv(CROSS[0].id, seed=0, settle=0.0, obs_size=(32, 20))
    yield env
    env.close()


def _solve(env, template_id, seed, run_steps):
    _, info = env.reset(options={"task": template_id, "task_seed": seed})
    assert info["completeness"] == 0.0, f"{template_id}#{seed}: a sub-goal holds at the start"
    total, info, terminated = run_steps(env, env.unwrapped.task.solution)
    assert terminated, f"{template_id}#{seed}"
    assert info["completeness"] == 1.0, f"{template_id}#{seed}: {info['completeness']}"
    assert total == pytest.approx(1.0)
    assert info["metrics"]["success"] is True
    assert info["metrics"]["declared_infeasible"] is get_template(template_id).infeasible


@pytest.mark.parametrize("template_id", [t.id for t in SINGLE])
def test_scripted_solution_scores_one_over_seeds(fast_env, template_id, run_steps):
    for seed in SEEDS[template_id]:
        _solve(fast_env, template_id, seed, run_steps)


@pytest.mark.parametrize("template_id", [t.id for t in CROSS])
def test_cross_environment_solution_scores_one_over_seeds(cross_env, template_id, run_steps):
    for seed in SEEDS[template_id]:
        _solve(cross_env, template_id, seed, run_steps)


def _env_for(template_id, fast_env, cross_env):
    return cross_env if len(get_template(template_id).envs) > 1 else fast_env


#: Every infeasible template (declaring without naming the cause must score 0) and every
#: fifth other one (every solved run above also starts at completeness 0).
NOTHING = [t.id for i, t in enumerate(TEMPLATES.values()) if t.infeasible or i % 5 == 0]


@pytest.mark.parametrize("template_id", NOTHING)
def test_doing_nothing_and_declaring_without_the_cause_score_zero(fast_env, cross_env, template_id, run_steps):
    env = _env_for(template_id, fast_env, cross_env)
    env.reset(options={"task": template_id, "task_seed": 1})
    ending = ({"name": "declare_infeasible", "arguments": {"reason": "it cannot be done"}}
              if get_template(template_id).infeasible else {"name": "complete", "arguments": {}})
    env.complete_grace = 0.0  # nothing is running: no need to wait for the last check
    try:
        total, info, terminated = run_steps(env, [ending])
    finally:
        env.complete_grace = 1.0
    assert terminated and total == 0.0 and info["completeness"] == 0.0
    assert info["metrics"]["success"] is False


def test_declaring_a_feasible_task_infeasible_ends_it_unscored(fast_env, run_steps):
    fast_env.reset(options={"task": "write_new_file", "task_seed": 0})
    total, info, terminated = run_steps(fast_env, [{"name": "declare_infeasible",
                                                    "arguments": {"reason": "the file cannot be made"}}])
    assert terminated and total == 0.0
    assert info["metrics"]["declared_infeasible"] is True and info["metrics"]["success"] is False


@pytest.mark.parametrize("template_id", PARTIAL)
def test_partial_solution_scores_in_between(fast_env, cross_env, template_id, run_steps):
    env = _env_for(template_id, fast_env, cross_env)
    env.reset(options={"task": template_id, "task_seed": 2})
    task = env.unwrapped.task
    partial, info, terminated = run_steps(env, task.solution[: task.partial])
    for _ in range(15):  # the commands typed may still be running
        if info["completeness"] > 0 or terminated:
            break
        wait = "wait" if len(task.envs) == 1 else f"{task.envs[0]}__wait"
        more, info, terminated = run_steps(env, [{"name": wait, "arguments": {"seconds": 0.1}}])
        partial += more
    assert not terminated
    assert 0.0 < info["completeness"] < 1.0
    assert partial == pytest.approx(info["completeness"])


def test_docs_hold_the_generated_template_table():
    from pathlib import Path

    from crab_gym.envs.desktop.templates.table import page_section

    page = (Path(__file__).parents[2] / "docs" / "desktop.md").read_text()
    assert page_section() in page, "regenerate: python -m crab_gym.envs.desktop.templates.table --write"
    assert page.count("| `") >= len(TEMPLATES)


def test_two_machine_env_names_each_action_s_machine_and_observes_both(cross_env):
    from gymnasium.utils.env_checker import check_env

    env = cross_env
    names = [t["function"]["name"] for t in env.tools()]
    assert names[:2] == ["pc1__click", "pc1__double_click"] and "pc2__write_text" in names
    assert names[-2:] == ["complete", "declare_infeasible"] and "write_text" not in names
    assert {env.actions[n].env_name for n in names} == {"pc1", "pc2", "desktop"}
    check_env(env)
    obs, info = env.reset(options={"task": "x_copy_file", "task_seed": 4})
    assert set(obs) == {"pc1", "pc2"} and obs in env.observation_space
    assert obs["pc1"]["windows"] == obs["pc2"]["windows"] == "Terminal"
    task = env.task
    src = next(s["env"] for s in task.setup if s["name"] == "write_file")
    assert f"{env.machine_infos[src]['workdir']}/" in env.instruction  # each machine's own work dir
    with pytest.raises(ValueError, match="runs on"):
        env.reset(options={"task": "write_new_file", "task_seed": 0})


def test_task_seed_defaults_come_from_the_reset_seed(fast_env):
    fast_env.reset(seed=5, options={"task": "sort_lines"})
    first = fast_env.task
    fast_env.reset(seed=5, options={"task": "sort_lines"})
    assert fast_env.task == first and first.template == "sort_lines"
    fast_env.reset(seed=6, options={"task": "sort_lines"})
    assert fast_env.task.seed != first.seed
    fast_env.reset(options={"task": "sort_lines", "task_seed": 3})
    assert fast_env.task.id == "sort_lines#3"
    assert fast_env.task_description == fast_env.instruction and str(fast_env.machine.workdir) in fast_env.instruction
    with pytest.raises(ValueError, match="not a template"):
        fast_env.reset(options={"task": "create_file", "task_seed": 3})


def test_two_machine_render_shows_both_screens_side_by_side():
    env = CrabDesktopEnv("x_same_folder", seed=0, render_mode="rgb_array", screen_size=(320, 200), obs_size=(32, 20))
    try:
        env.reset()
        frame = env.render()
        assert frame.shape == (200, 320 + 8 + 320, 3)
        assert (frame[:, 320:328] == 32).all()  # the bar between the machines
        assert frame[:, :320].std() > 0 and frame[:, 328:].std() > 0  # each screen drawn
    finally:
        env.close()


def test_the_llm_adapter_drives_a_two_machine_task(cross_env):
    import json as _json

    from crab_gym.wrappers.llm_adapter import LLMAdapter

    env = LLMAdapter(cross_env, list_legal_actions=0)
    prompt, _ = env.reset(options={"task": "x_count_report", "task_seed": 2})
    assert "{workdir" not in prompt and cross_env.machine_infos["pc2"]["workdir"] in prompt
    assert "pc2__write_text" in prompt and "pc1:" in prompt and "pc2:" in prompt
    total, terminated = 0.0, False
    for call in cross_env.task.solution:
        _, reward, terminated, _, _ = env.step(_json.dumps(call))
        total += reward
        if terminated:
            break
    assert terminated and total == pytest.approx(1.0)
