"""One state per MCP session, and the registry of the live ones.

The server keeps the episode in the MCP session itself, not behind a handle the client passes:
each session (a stdio connection, or one ``Mcp-Session-Id`` over streamable HTTP) owns at most
one running episode, and its tool list is that episode's env's actions with their own schemas.
Why per-session state rather than an explicit episode handle:

* the action tools keep exactly the schemas the LLM adapter sends (no extra ``episode``
  argument for the model to fill in or get wrong), so an MCP agent and ``LLMAgent`` see the
  same tools;
* one session can never reach another's episode: there is no handle to guess or mix up;
* one agent is one session, as MCP clients connect; an agent that wants several episodes at
  once opens several sessions.

A session that ends (the client goes away, HTTP ``DELETE``, the idle timeout, the server
stopping) with an episode still running records it as truncated: no episode is lost.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.mcp.episode import McpEpisode
from crab_gym.mcp.recording import EpisodeRecorder


@dataclass
class Session:
    """One MCP session's state: its episode (if any) and what it has done."""

    number: int
    recorder: EpisodeRecorder
    episode: McpEpisode | None = None
    #: Tool calls answered in this session.
    calls: int = 0
    #: Episodes this session finished (their records).
    results: list[EpisodeResult] = field(default_factory=list)
    #: Anything the server layer keeps per session (its lock).
    extra: dict[str, Any] = field(default_factory=dict)

    def begin(self, episode: McpEpisode) -> EpisodeResult | None:
        """Make ``episode`` the session's; a previous one still running ends as truncated.
        Returns that previous episode's record, if one was recorded now."""
        previous = self.end()
        self.episode = episode
        return previous

    def conclude(self) -> EpisodeResult | None:
        """Finish and record the current episode once it is done (None if it was already)."""
        episode = self.episode
        if episode is None or not episode.done or episode.finished:
            return None
        result = episode.finish()
        self.recorder.record(result)
        self.results.append(result)
        return result

    def end(self) -> EpisodeResult | None:
        """End the current episode (truncated if it was running), record it, close its env."""
        episode = self.episode
        if episode is None:
            return None
        episode.abandon()
        try:
            return self.conclude()
        finally:
            episode.close()
            self.episode = None


class SessionRegistry:
    """The live sessions of one server; every session's episodes go to one recorder."""

    def __init__(self, recorder: EpisodeRecorder) -> None:
        self.recorder = recorder
        self._numbers = itertools.count(1)
        self._live: dict[int, Session] = {}
        self._lock = threading.Lock()

    def open(self) -> Session:
        with self._lock:
            session = Session(next(self._numbers), self.recorder)
            self._live[session.number] = session
        return session

    def close(self, session: Session) -> EpisodeResult | None:
        """Forget ``session``, recording its running episode as truncated."""
        with self._lock:
            self._live.pop(session.number, None)
        return session.end()

    def close_all(self) -> None:
        """At server shutdown: every session still open ends (and its episode is recorded)."""
        with self._lock:
            sessions = list(self._live.values())
        for session in sessions:
            self.close(session)

    @property
    def live(self) -> int:
        with self._lock:
            return len(self._live)
