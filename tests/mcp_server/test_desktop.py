"""``crab-gym mcp`` with the desktop's two-machine tasks (CrabDesktop-v0, two private displays
``pc1`` and ``pc2``): the machine-named actions are tools with the env's schemas, every
two-machine template's scripted solution played through tool calls scores 1 and is recorded,
a malformed call on one machine is a tool error, and the displays go when the session ends.
Skipped, as tests/desktop is, when the desktop's programs are missing."""

from __future__ import annotations

import importlib.util
import json
import shutil

import anyio
import pytest

_MISSING = [m for m in ("pyautogui", "mss", "PIL", "Xlib") if importlib.util.find_spec(m) is None]
_MISSING += [p for p in ("Xvfb", "xauth", "openbox", "xdotool", "wmctrl", "xterm", "mousepad", "xclip", "gsettings")
             if shutil.which(p) is None]
if _MISSING:
    pytest.skip(f"the desktop's packages are missing ({_MISSING}): scripts/install_desktop_deps.sh",
                allow_module_level=True)

from crab_gym.envs.desktop import get_task  # noqa: E402
from crab_gym.envs.desktop.env import CrabDesktopEnv  # noqa: E402
from crab_gym.envs.desktop.templates import TEMPLATES  # noqa: E402
from crab_gym.envs.desktop.x11 import _wait_gone  # noqa: E402
from crab_gym.evaluation.episode_store import EpisodeStore  # noqa: E402
from crab_gym.mcp import tools  # noqa: E402
from crab_gym.mcp.recording import EpisodeRecorder  # noqa: E402
from crab_gym.mcp.sessions import SessionRegistry  # noqa: E402
from crab_gym.wrappers import LLMAdapter  # noqa: E402
from tests.mcp_server.client import call, start, stdio_session  # noqa: E402

CROSS = [t.id for t in TEMPLATES.values() if len(t.envs) > 1]
#: Small screenshots: the words, not the pixels, are what is tested here.
KEYWORDS = {"obs_size": [32, 20]}


def _start(session, template: str, seed: int, **more) -> tools.ToolReply:
    reply = tools.call(session, "start_episode", {"env_id": "CrabDesktop-v0", "agent": "desk",
                                                  "keywords": {"task": template, "seed": seed, **KEYWORDS}, **more})
    assert not reply.error, reply.text
    return reply


def _play(session, calls: list[dict]) -> tools.ToolReply:
    """The calls through the action tools until the env ends the episode; the final reply."""
    for chosen in calls:
        reply = tools.call(session, chosen["name"], chosen["arguments"])
        assert not reply.error, reply.text
        if reply.data["done"]:
            return reply.then()
    raise AssertionError(f"the episode did not end after {calls}")


def _display_pids(session) -> list[int]:
    machines = session.episode.env.unwrapped.machines
    return [p.pid for m in machines.values() for p in (*m.desktop._server_procs, *m.desktop._apps)]


def test_every_two_machine_template_s_solution_scores_one_through_tool_calls(tmp_path):
    with EpisodeRecorder(tmp_path) as recorder:
        registry = SessionRegistry(recorder)
        session = registry.open()
        finals = {}
        for template in CROSS:
            _start(session, template, seed=2)
            finals[template] = _play(session, get_task(template, seed=2).solution)
        registry.close_all()
    for template, final in finals.items():
        result = final.data["result"]
        metrics = result["metrics"]
        assert (result["terminated"], result["success"], result["completeness"]) == (True, True, 1.0), template
        assert result["episode_return"] == pytest.approx(1.0) and metrics["success"] is True, template
        assert metrics["declared_infeasible"] is TEMPLATES[template].infeasible, template
        assert "The episode is over." in final.text and "Progress: 100%" in final.text
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [(r["env_kwargs"]["task"], r["policy"], r["success"]) for r in records] == [(t, "desk", True) for t in CROSS]
    assert [r["metrics"] for r in records] == [finals[t].data["result"]["metrics"] for t in CROSS]


def test_the_machines_actions_are_tools_and_a_bad_call_on_one_machine_is_a_tool_error():
    registry = SessionRegistry(EpisodeRecorder())
    session = registry.open()
    started = _start(session, "x_copy_file", seed=1)
    pids = _display_pids(session)
    try:
        listed = {d.name: d.input_schema for d in tools.definitions(session)}
        local = CrabDesktopEnv("x_copy_file", seed=1, obs_size=(32, 20))  # not reset: no display started
        expected = {t["function"]["name"]: t["function"]["parameters"] for t in LLMAdapter(local).tools("openai")}
        local.close()
        assert {"pc1__write_text", "pc2__click", "pc2__key_press", "complete", "declare_infeasible"} <= set(expected)
        assert {name: listed[name] for name in expected} == expected  # every action, with the env's schema
        assert "write_text" not in listed and "pc1__write_text" in started.text
        assert started.data["instance"] == "x_copy_file#1"
        assert "pc1:" in started.data["state"] and "pc2:" in started.data["state"]
        assert "machine pc1" in started.data["task"].lower() and "machine pc2" in started.data["task"]

        missing = tools.call(session, "pc2__write_text", {})
        wrong = tools.call(session, "pc1__click", {"x": "left", "y": 3})
        key = tools.call(session, "pc2__key_press", {"key": "no-such-key"})
        other = tools.call(session, "pc3__click", {"x": 1, "y": 1})
        assert all(r.error for r in (missing, wrong, key, other))
        assert "'text' is required" in missing.text and "'x'" in wrong.text
        assert key.data["valid"] is False and "no-such-key" in key.text
        assert "not an action of CrabDesktop-v0" in other.text and "pc2__write_text" in other.text
        seen = tools.call(session, "observe", {})
        assert (seen.data["done"], seen.data["completeness"]) == (False, 0.0)
        assert not tools.call(session, "pc1__wait", {"seconds": 0.1}).error  # the session goes on
        # a desktop step waits for the screen: the server runs the episode's calls off its event loop
        assert session.episode.slow and tools.blocking(session, "pc1__wait") and tools.blocking(session, "act")
        assert len(pids) == 6  # per machine: Xvfb, openbox, the terminal
    finally:
        registry.close_all()  # the session ends mid-episode: recorded, displays stopped
    assert _wait_gone(pids, timeout=5) == []
    (record,) = session.results
    # as in crab-gym run, a rejected call counts as a step and an invalid action (the state unchanged)
    assert (record.truncated, record.success, record.steps, record.invalid_actions) == (True, False, 4, 3)


def test_an_sdk_client_over_stdio_plays_a_two_machine_task_to_one(tmp_path):
    """The SDK's own client and a real ``crab-gym mcp`` process; afterwards no display's folder
    is left in the server's temp directory."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    solution = get_task("x_sync_setting", seed=3).solution

    async def main():
        async with stdio_session(tmp_path / "out", env={"TMPDIR": str(temp)}) as session:
            await start(session, "CrabDesktop-v0", seed=0, keywords={"task": "x_sync_setting", "seed": 3, **KEYWORDS})
            listed = {t.name: t for t in (await session.list_tools()).tools}
            folders = sorted(p.name.rsplit("-", 1)[0] for p in temp.glob("crab-desktop-*"))
            bad = await call(session, "pc1__write_text", {"text": 5})
            for sent, chosen in enumerate(solution, start=2):
                reply = await call(session, chosen["name"], chosen["arguments"])
                assert not reply.isError, reply.content[0].text
                if reply.structuredContent["done"]:
                    return listed, folders, bad, reply, sent
            raise AssertionError("the episode did not end")

    listed, folders, bad, last, sent = anyio.run(main)
    assert listed["pc2__write_text"].inputSchema["required"] == ["text"]
    assert {"pc1__hotkey", "pc2__hotkey", "complete"} <= set(listed)
    assert len(folders) == 6  # per machine: work dir, settings, X cookie, while the episode ran
    assert bad.isError and "text" in bad.content[0].text
    result = last.structuredContent["result"]
    assert (result["success"], result["completeness"], result["metrics"]["success"]) == (True, 1.0, True)
    assert (result["invalid_actions"], result["steps"]) == (1, sent)  # the rejected call counts
    (record,) = EpisodeStore(tmp_path / "out").load()
    assert (record.env_id, record.env_kwargs["task"], record.success) == ("CrabDesktop-v0", "x_sync_setting", True)
    assert list(temp.glob("crab-desktop-*")) == []  # the displays went with the session
