"""Every built-in task: its solution scores 1, doing nothing scores 0, a partial solution
scores in between -- all judged by the evaluator graph over the machine's real state."""

from __future__ import annotations

import pytest

from crab_gym.envs.desktop import all_tasks, get_task, list_tasks
from crab_gym.envs.desktop.actions import AGENT_ACTIONS, PROBE_ACTIONS, SETUP_ACTIONS
from crab_gym.envs.desktop.taskdata import DesktopTask
from crab_gym.envs.desktop.tasks import TASK_DATA

TASK_IDS = list_tasks()
PARTIAL_IDS = [t.id for t in all_tasks() if t.partial is not None]


def test_at_least_ten_tasks_defined_as_data():
    assert len(TASK_IDS) >= 10
    assert len(set(TASK_IDS)) == len(TASK_IDS)
    assert [d["id"] for d in TASK_DATA] == TASK_IDS
    agent, setup, probes = ({a.name for a in g} for g in (AGENT_ACTIONS, SETUP_ACTIONS, PROBE_ACTIONS))
    for task in all_tasks():
        assert task.description and "{workdir}" not in task.describe("/w")
        assert {s["name"] for s in task.solution} <= agent
        assert {s["name"] for s in task.setup} <= setup
        assert {s["name"] for s in task.checks.values()} <= probes
        assert task.solution[-1]["name"] == "complete"
    tags = {tag for t in all_tasks() for tag in t.tags}
    assert {"terminal", "editor", "files", "directories", "windows", "settings", "apps"} <= tags


def test_bad_task_data_is_rejected_with_the_reason():
    data = dict(TASK_DATA[0], id="broken", checks={"x": {"name": "rm_rf", "arguments": {}}}, edges=[])
    with pytest.raises(ValueError, match="rm_rf"):
        DesktopTask.from_dict(data)
    data = dict(TASK_DATA[0], id="escape", setup=[{"name": "write_file", "arguments": {"path": "a", "mode": 7}}])
    with pytest.raises(ValueError, match="mode"):
        get_task(data)
    with pytest.raises(KeyError, match="unknown desktop task"):
        get_task("no_such_task")


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_scripted_solution_reaches_completeness_one(desktop_env, task_id, run_steps):
    _, info = desktop_env.reset(options={"task": task_id})
    assert info["completeness"] == 0.0 and info["task"] == task_id
    total, info, terminated = run_steps(desktop_env, get_task(task_id).solution)
    assert terminated
    assert info["completeness"] == 1.0
    assert total == pytest.approx(1.0)
    assert info["metrics"]["success"] is True


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_doing_nothing_scores_zero(desktop_env, task_id, run_steps):
    desktop_env.reset(options={"task": task_id})
    desktop_env.unwrapped.complete_grace = 0.0  # nothing runs: the final check need not wait
    try:
        total, info, terminated = run_steps(desktop_env, [{"name": "wait", "arguments": {"seconds": 0.2}},
                                                          {"name": "complete", "arguments": {}}])
    finally:
        desktop_env.unwrapped.complete_grace = 1.0
    assert terminated
    assert total == 0.0 and info["completeness"] == 0.0
    assert info["metrics"] == {"completeness": 0.0, "success": False, "steps": 2, "steps_to_complete": None,
                               "declared_infeasible": False}


@pytest.mark.parametrize("task_id", PARTIAL_IDS)
def test_partial_solution_scores_in_between(desktop_env, task_id, run_steps):
    task = get_task(task_id)
    desktop_env.reset(options={"task": task_id})
    partial, info, terminated = run_steps(desktop_env, task.solution[: task.partial])
    assert not terminated
    assert 0.0 < info["completeness"] < 1.0
    assert partial == pytest.approx(info["completeness"])
    total, info, terminated = run_steps(desktop_env, [{"name": "complete", "arguments": {}}])
    assert terminated and 0.0 < info["completeness"] < 1.0
    assert info["metrics"]["success"] is False
