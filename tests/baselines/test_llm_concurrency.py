"""LLM episodes at scale: ``--workers N`` means N concurrent requests from one process (the
env steps take turns), ``--max-rps`` bounds the request rate, 429/5xx are retried with
backoff through the rate limit, and tokens and latency land in episodes.jsonl (never in the
env's info). Against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

pytest.importorskip("openai")

from crab_gym.baselines.llm_agent import LLMAgent  # noqa: E402
from crab_gym.baselines.request_pacing import RateLimiter, is_retryable, retry_delay  # noqa: E402
from crab_gym.cli import main  # noqa: E402
from crab_gym.evaluation.report import strip_wall_clock  # noqa: E402
from tests.baselines.scripted_chat_server import HTTPFailure, ScriptedChatServer, calls_message, tool_call  # noqa: E402
from tests.core.toy_env import LampsEnv  # noqa: E402

FAST_RETRY = {"retry-after-ms": "10"}


@pytest.fixture(autouse=True)
def _scripted_model(loopback_only: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRAB_GYM_LLM_MODEL", "scripted-model")


@pytest.fixture()
def lamps_id():
    gym.register("LLMLamps-v0", entry_point="tests.core.toy_env:LampsEnv")
    yield "LLMLamps-v0"
    gym.registry.pop("LLMLamps-v0", None)


def solve(request: dict) -> dict:
    """Whatever episode a request comes from: switch on its first unlit lamp (read from the
    last state the prompt shows), so concurrent episodes can share one server."""
    text = next(m["content"] for m in reversed(request["messages"]) if "# Current state\n" in (m.get("content") or ""))
    lamps = text.split("# Current state\n")[-1].splitlines()[0]
    return calls_message(tool_call("switch_on", {"lamp": lamps.index(".")}))


def run_llm(capsys, server, lamps_id, out, *options):
    code = main(["run", "--env", lamps_id, "--policy", "llm", "--episodes", "6", "--quiet", "--out", str(out), *options])
    err = capsys.readouterr().err
    assert code == 0, err
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]


def test_workers_are_concurrent_requests_and_the_report_equals_the_serial_one(capsys, monkeypatch, tmp_path, lamps_id):
    with ScriptedChatServer([solve] * 100, delay=0.15, usage={"prompt_tokens": 20, "completion_tokens": 3,
                                                              "total_tokens": 23}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        episodes = run_llm(capsys, server, lamps_id, tmp_path / "parallel", "--workers", "3")
        assert 2 <= server.max_in_flight <= 3  # overlapping requests, never more than the workers
        server.max_in_flight = 0
        run_llm(capsys, server, lamps_id, tmp_path / "serial")
        assert server.max_in_flight == 1
    for episode in episodes:
        usage = episode["usage"]
        assert usage["requests"] == episode["steps"] == 3  # one lamp starts lit, one request per lamp
        assert usage["total_tokens"] == 23 * usage["requests"] and usage["prompt_tokens"] == 60
        assert 0.1 < usage["latency_s"] < 30
        assert set(episode["metrics"]) == {"moves"}  # resource use never goes through the env's info
    parallel = json.loads((tmp_path / "parallel" / "report.json").read_text())
    serial = json.loads((tmp_path / "serial" / "report.json").read_text())
    assert strip_wall_clock(parallel) == strip_wall_clock(serial)
    (row,) = parallel["summary"]
    assert (row["llm_tokens"], row["llm_requests"]) == (69.0, 3.0) and row["llm_latency_s"] > 0.1
    assert "| llm_tokens | llm_requests | llm_latency_s |" in (tmp_path / "parallel" / "report.md").read_text()


def test_max_rps_bounds_the_request_rate(capsys, monkeypatch, tmp_path, lamps_id):
    with ScriptedChatServer([solve] * 100) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        run_llm(capsys, server, lamps_id, tmp_path, "--workers", "4", "--max-rps", "20")
    times = sorted(server.request_times)
    assert len(times) == 18
    # evenly spaced slots: n requests span (n - 1) / rate seconds, whatever the workers; the
    # server sees arrivals, which jitter around the client's slots, so the bounds leave room
    # (unlimited, the 18 requests of 4 workers arrive within milliseconds)
    assert times[-1] - times[0] >= 0.75 * 17 / 20
    for first, later in zip(times, times[5:]):
        assert later - first >= 0.5 * 5 / 20


def test_rate_limiter_spaces_requests_on_a_fake_clock():
    now = [100.0]
    limiter = RateLimiter(4, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    starts = []
    for _ in range(5):
        limiter.acquire()
        starts.append(now[0] - 100.0)
    assert starts == [0.0, 0.25, 0.5, 0.75, 1.0]
    now[0] += 10  # idle for a while: no burst credit is saved up
    limiter.acquire()
    limiter.acquire()
    assert now[0] - 100.0 == pytest.approx(11.25)
    with pytest.raises(ValueError, match="above 0"):
        RateLimiter(0)


def test_429_then_200_is_retried_through_the_limit():
    script = [HTTPFailure(429, "slow down", FAST_RETRY), HTTPFailure(503, "busy", FAST_RETRY), solve, solve, solve]
    with ScriptedChatServer(script) as server:
        agent = LLMAgent(model="m", base_url=server.url, max_retries=2, max_rps=1000)
        episode = agent.run(LampsEnv(), seed=3)
    assert episode.completed and episode.steps == 3
    assert len(server.requests) == 5 and episode.usage["requests"] == 5
    assert server.requests[0]["json"] == server.requests[2]["json"]  # the same request, repeated
    assert agent.rate_limiter is not None and agent.rate_limiter.rate == 1000


class _Failure(Exception):
    def __init__(self, status, headers=None):
        self.status_code = status
        self.response = type("R", (), {"headers": headers or {}})()


def test_which_failures_are_retried_and_how_long_to_wait():
    assert all(is_retryable(_Failure(s)) for s in (408, 409, 429, 500, 503))
    assert not any(is_retryable(_Failure(s)) for s in (400, 401, 404))
    assert not is_retryable(_Failure(500, {"x-should-retry": "false"}))
    assert retry_delay(_Failure(429, {"retry-after-ms": "250"}), 0) == 0.25
    assert retry_delay(_Failure(429, {"Retry-After": "2"}), 0) == 2.0
    for attempt in range(4):  # exponential backoff from 0.5 s, with +-20 % jitter
        assert 0.8 <= retry_delay(_Failure(500), attempt) / (0.5 * 2**attempt) <= 1.2
    assert retry_delay(_Failure(500), 20) <= 30 * 1.2  # capped
