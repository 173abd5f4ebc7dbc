"""crab-gym serve: authentication, declared actions only, validation, size limit, and a task
run end to end through the server on loopback."""

from __future__ import annotations

import argparse

import gymnasium as gym
import httpx
import numpy as np
import pytest

from crab_gym.envs.desktop.cli import add_serve_parser
from crab_gym.envs.desktop.machine import DesktopMachine
from crab_gym.envs.desktop.server import (
    DEFAULT_HOST,
    ServerThread,
    create_app,
    is_loopback,
    resolve_token,
)

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture(scope="module")
def machine(shared_display):
    m = DesktopMachine(display=shared_display.display, xauthority=shared_display.xauthority)
    yield m
    m.close()


@pytest.fixture(scope="module")
def server(machine):
    with ServerThread(create_app(machine, TOKEN, max_body=4096)) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as c:
        yield c


def post(client, name, headers=None, **arguments):
    return client.post(f"/v1/actions/{name}", json={"arguments": arguments}, headers=headers)


def test_binds_loopback_by_default(server):
    assert DEFAULT_HOST == "127.0.0.1" and server.host == "127.0.0.1"
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    add_serve_parser(sub)
    args = parser.parse_args(["serve"])
    assert (args.host, args.port, args.token, args.display, args.screen) == ("127.0.0.1", 8765, None, None, (1024, 640))
    assert args.func.__name__ == "run_serve"
    assert parser.parse_args(["serve", "--screen", "800x600"]).screen == (800, 600)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")


def test_token_is_generated_and_printed_when_missing(monkeypatch):
    monkeypatch.delenv("CRAB_GYM_TOKEN", raising=False)
    said = []
    token = resolve_token(None, announce=said.append)
    assert len(token) >= 32 and token in said[0]
    assert resolve_token(None, announce=said.append) != token  # random each time
    monkeypatch.setenv("CRAB_GYM_TOKEN", "from-the-environment-123")
    assert resolve_token(None) == "from-the-environment-123"
    with pytest.raises(ValueError):
        create_app(object(), "")


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-token"},
                                     {"Authorization": TOKEN}, {"Authorization": f"Basic {TOKEN}"}])
def test_no_or_wrong_token_gets_401_and_does_nothing(server, machine, headers):
    with httpx.Client(base_url=server.url, timeout=10) as anon:
        r = anon.post("/v1/actions/write_file", json={"arguments": {"path": "pwned.txt", "text": "x"}},
                      headers=headers)
        assert r.status_code == 401
        assert "bearer token" in r.json()["error"]
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert anon.get("/v1/info", headers=headers).status_code == 401
        # even a request that would be rejected for size or route is refused for auth first
        assert anon.post("/v1/actions/nope", content=b"x" * 10_000, headers=headers).status_code == 401
    assert not (machine.workdir / "pwned.txt").exists()


def test_declared_actions_run_with_validated_arguments(client, machine):
    info = client.get("/v1/info").json()
    assert info["workdir"] == str(machine.workdir) and (info["width"], info["height"]) == (1024, 640)
    assert {"click", "write_text", "file_exists", "screenshot"} <= set(info["actions"])
    schemas = {s["name"]: s for s in client.get("/v1/actions").json()}
    assert schemas["click"]["parameters"]["properties"]["x"]["maximum"] == 1.0
    r = post(client, "write_file", path="notes/a.txt", text="hello")
    assert r.status_code == 200 and r.json() == {"result": None}
    assert (machine.workdir / "notes/a.txt").read_text() == "hello"
    assert post(client, "file_text_equals", path="notes/a.txt", text="hello").json() == {"result": True}
    shot = post(client, "screenshot", width=32, height=20).json()["result"]
    assert shot["__ndarray__"]["shape"] == [20, 32, 3]


def test_unknown_action_and_bad_arguments_get_4xx_with_a_message(client, machine):
    r = post(client, "exec_python", code="import os")
    assert r.status_code == 404 and "unknown action 'exec_python'" in r.json()["error"]
    assert "click" in r.json()["available"]
    r = post(client, "click", x=2.0, y=0.5)
    assert r.status_code == 422 and r.json()["parameter"] == "x" and "less than or equal to 1" in r.json()["error"]
    r = post(client, "click", x=0.5)
    assert r.status_code == 422 and "'y' is required" in r.json()["error"]
    r = post(client, "write_text", text="hi", extra="no")
    assert r.status_code == 422 and "'extra' is not a parameter" in r.json()["error"]
    r = post(client, "key_press", key="not-a-key")
    assert r.status_code == 422 and "key" in r.json()["error"]
    r = post(client, "write_file", path="../outside.txt", text="x")
    assert r.status_code == 400 and "work directory" in r.json()["error"]
    assert not (machine.workdir.parent / "outside.txt").exists()
    r = post(client, "write_file", path="/etc/crab.txt", text="x")
    assert r.status_code == 400
    r = client.post("/v1/actions/click", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = client.post("/v1/actions/click", json={"x": 0.5, "y": 0.5})
    assert r.status_code == 400 and "arguments" in r.json()["error"]


def test_request_size_is_limited(client, machine):
    r = post(client, "write_file", path="big.txt", text="x" * 5000)  # server limit: 4096 bytes
    assert r.status_code == 413 and "larger than 4096" in r.json()["error"]
    assert not (machine.workdir / "big.txt").exists()

    def chunks():  # no Content-Length: the limit still holds
        yield b'{"arguments": {"path": "big.txt", "text": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}}'

    r = client.post("/v1/actions/write_file", content=chunks())
    assert r.status_code == 413
    assert not (machine.workdir / "big.txt").exists()


def test_task_runs_to_completion_through_the_server(server, machine):
    env = gym.make("CrabDesktop-v0", task="archive_text_files", remote_url=server.url, token=TOKEN,
                   render_mode="rgb_array")
    try:
        obs, info = env.reset()
        assert obs in env.observation_space and obs["windows"] == "Terminal"
        assert str(machine.workdir) in env.unwrapped.instruction  # the *server's* work dir
        assert env.unwrapped.machine is None  # nothing local
        total, terminated = 0.0, False
        for call in env.unwrapped.task.solution:
            _, reward, terminated, _, info = env.step(call)
            total += reward
            if terminated:
                break
        assert terminated and info["completeness"] == 1.0 and total == pytest.approx(1.0)
        assert (machine.workdir / "archive" / "a.txt").read_text() == "alpha\n"  # real state, remote side
        frame = env.render()
        assert frame.shape == (640, 1024, 3) and frame.dtype == np.uint8
        env.reset()
        _, _, _, _, info = env.step({"name": "click", "arguments": {"x": -1, "y": 0}})
        assert not info["valid"] and "'x'" in info["error"]
    finally:
        env.close()


def test_remote_env_with_wrong_token_fails_clearly(server):
    from crab_gym.envs.desktop.remote import RemoteDesktopError

    env = gym.make("CrabDesktop-v0", remote_url=server.url, token="wrong-token-wrong-token")
    with pytest.raises(RemoteDesktopError, match="401"):
        env.reset()
    env.close()
