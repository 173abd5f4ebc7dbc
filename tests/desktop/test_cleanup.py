"""What the desktop starts is stopped and removed however it ends: SIGTERM to ``crab-gym
serve``, an env dropped without ``close()``, an interpreter exiting with an env open.

Each test gives the code under test a private temp dir, so the ``crab-desktop-*`` folders it
makes (work dir, settings store, X cookie and openbox config) can be counted exactly.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import weakref
from pathlib import Path

import pytest

from crab_gym.envs.desktop.x11 import _alive, _wait_gone

TOKEN = "cleanup-test-token-0123456789"
FOLDERS = "crab-desktop-*"


def _children(pid: int) -> dict[int, str]:
    """Live child processes of ``pid``: pid -> program name."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if int(text[text.rindex(")") + 2:].split()[1]) == pid:
            out[int(stat.parent.name)] = text[text.index("(") + 1: text.rindex(")")]
    return out


def _kill_leftovers(pids) -> None:
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _private_tmp_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ, TMPDIR=str(tmp), CRAB_GYM_TOKEN=TOKEN)
    env.pop("SB3_LOGDIR", None)
    return env


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_serve_stops_its_desktop_and_removes_its_folders_on_sigterm(tmp_path, sig):
    import httpx

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "crab_gym.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--screen", "320x200", "--log-level", "warning"],
        env=_private_tmp_env(tmp), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    children: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 60
        while True:  # up = answers an authenticated request
            assert proc.poll() is None, proc.communicate()[1].decode(errors="replace")
            assert time.monotonic() < deadline, "crab-gym serve did not come up within 60 s"
            try:
                reply = httpx.get(f"http://127.0.0.1:{port}/v1/info", timeout=2,
                                  headers={"Authorization": f"Bearer {TOKEN}"})
                if reply.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        children = _children(proc.pid)
        assert sorted(children.values()) == ["Xvfb", "crab-watchdog", "openbox"]  # the watchdog: kill -9 below
        folders = sorted(p.name.rsplit("-", 1)[0] for p in tmp.glob(FOLDERS))
        assert folders == ["crab-desktop-state", "crab-desktop-work", "crab-desktop-x"]

        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + sig, err.decode(errors="replace")  # exited, not killed
        assert _wait_gone(children, timeout=10) == [], f"left running: {children}"
        assert list(tmp.glob(FOLDERS)) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        _kill_leftovers(children)


def _start(monkeypatch, tmp: Path):
    """An env with its own display, reset; its folders go to ``tmp``."""
    from crab_gym.envs.desktop.env import CrabDesktopEnv

    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    env = CrabDesktopEnv("terminal_title", screen_size=(320, 200), obs_size=(32, 20))
    env.reset(seed=0)
    return env, [p.pid for p in env.machine.desktop._server_procs]


def test_env_garbage_collected_without_close_cleans_up(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env, pids = _start(monkeypatch, tmp)
    try:
        assert len(pids) == 2 and all(_alive(p) for p in pids)  # Xvfb, openbox
        assert len(list(tmp.glob(FOLDERS))) == 3
        ref = weakref.ref(env)
        del env  # dropped without close()
        gc.collect()
        assert ref() is None, "the env is still referenced: nothing to collect"
        assert list(tmp.glob(FOLDERS)) == []
        assert _wait_gone(pids, timeout=5) == []
    finally:
        _kill_leftovers(pids)


def test_env_left_open_at_interpreter_exit_cleans_up(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    script = textwrap.dedent("""
        import json
        from crab_gym.envs.desktop.env import CrabDesktopEnv
        env = CrabDesktopEnv("terminal_title", screen_size=(320, 200), obs_size=(32, 20))
        env.reset(seed=0)  # env stays referenced by this module until exit: no close(), no GC
        print(json.dumps([p.pid for p in env.machine.desktop._server_procs]), flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", script], env=_private_tmp_env(tmp), capture_output=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    pids = json.loads(out.stdout.decode().strip().splitlines()[-1])
    try:
        assert len(pids) == 2
        assert _wait_gone(pids, timeout=5) == []
        assert list(tmp.glob(FOLDERS)) == []
    finally:
        _kill_leftovers(pids)


def test_a_process_killed_with_sigkill_leaves_no_display_running(tmp_path):
    """Issue 38, item 5: kill -9 cannot be caught, so a watchdog (a child that notices its parent
    is gone) stops Xvfb and openbox and removes the display's folder."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    script = textwrap.dedent("""
        import json, time
        from crab_gym.envs.desktop.env import CrabDesktopEnv
        env = CrabDesktopEnv("terminal_title", screen_size=(320, 200), obs_size=(32, 20))
        env.reset(seed=0)
        print(json.dumps([p.pid for p in env.machine.desktop._server_procs]), flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], env=_private_tmp_env(tmp), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    pids: list[int] = []
    try:
        pids = json.loads(proc.stdout.readline().decode())
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        watchdogs = [pid for pid, name in _children(proc.pid).items() if name == "crab-watchdog"]
        assert len(watchdogs) == 1
        proc.kill()
        proc.wait(timeout=10)
        assert _wait_gone(pids + watchdogs, timeout=10) == [], "Xvfb or openbox outlived a kill -9"
        deadline = time.monotonic() + 5
        while list(tmp.glob("crab-desktop-x-*")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(tmp.glob("crab-desktop-x-*")) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        _kill_leftovers(pids)
