"""Cleanup of an episode over two machines (two private displays): after ``close()``, after
SIGTERM, after a crash mid-episode, no Xvfb, openbox, app or ``crab-desktop-*`` folder is
left. (SIGKILL cannot be caught: only the apps die with the display then.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from crab_gym.envs.desktop.x11 import _alive, _wait_gone

FOLDERS = "crab-desktop-*"

SCRIPT = textwrap.dedent("""
    import json, sys, time
    from crab_gym.envs.desktop.env import CrabDesktopEnv
    env = CrabDesktopEnv("x_copy_file", seed=1, screen_size=(320, 200), obs_size=(32, 20), settle=0.0)
    env.reset(seed=0)
    env.step({"name": "pc1__write_text", "arguments": {"text": "ls\\n"}})  # mid-episode
    pids = [p.pid for m in env.machines.values() for p in (*m.desktop._server_procs, *m.desktop._apps)]
    print(json.dumps(pids), flush=True)
    if sys.argv[1] == "crash":
        raise RuntimeError("the agent crashed")
    time.sleep(60)  # until the test's SIGTERM
""")


def _env(tmp: Path) -> dict[str, str]:
    return dict(os.environ, TMPDIR=str(tmp))


def _kill_leftovers(pids) -> None:
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_close_stops_both_displays_and_removes_their_folders(tmp_path, monkeypatch):
    from crab_gym.envs.desktop.env import CrabDesktopEnv

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    env = CrabDesktopEnv("x_same_folder", seed=0, screen_size=(320, 200), obs_size=(32, 20))
    env.reset(seed=0)
    pids = [p.pid for m in env.machines.values() for p in (*m.desktop._server_procs, *m.desktop._apps)]
    try:
        assert len(pids) == 6  # per machine: Xvfb, openbox, the terminal
        assert len(list(tmp_path.glob(FOLDERS))) == 6  # per machine: work dir, settings, X cookie
        env.close()
        assert _wait_gone(pids, timeout=5) == []
        assert list(tmp_path.glob(FOLDERS)) == []
        env.close()  # twice is fine
    finally:
        _kill_leftovers(pids)


@pytest.mark.parametrize("how", ["sigterm", "crash"])
def test_sigterm_or_a_crash_mid_episode_leaves_nothing_behind(tmp_path, how):
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, how], env=_env(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pids: list[int] = []
    try:
        line = proc.stdout.readline().decode()
        assert line, proc.communicate(timeout=30)[1].decode(errors="replace")
        pids = json.loads(line)
        assert len(pids) == 6
        if how == "sigterm":
            time.sleep(0.2)
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        expected = 128 + signal.SIGTERM if how == "sigterm" else 1
        assert proc.returncode == expected, err.decode(errors="replace")
        if how == "crash":
            assert b"the agent crashed" in err
        assert _wait_gone(pids, timeout=10) == [], "left running"
        assert list(tmp_path.glob(FOLDERS)) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        _kill_leftovers(pids)
