"""``crab-gym mcp``: the suite as a Model Context Protocol server, for any MCP client.

An MCP client (an agent framework, a chat app, a script with the ``mcp`` SDK) lists the envs
and their shipped instances, starts an episode, reads the state in words with the legal moves,
and calls the env's own actions as tools, with the JSON schemas the LLM adapter sends. Each
episode ends with the env's metrics (the solves the env deferred done, as ``crab-gym run`` does)
and, with ``--out``, is appended to ``episodes.jsonl`` for ``crab-gym report``.

The parts, each one job:

* :mod:`crab_gym.mcp.episode`: one episode played through tool calls (env, words, record);
* :mod:`crab_gym.mcp.recording`: the ``episodes.jsonl`` writer shared by every session;
* :mod:`crab_gym.mcp.sessions`: one state per MCP session, and the registry of live ones;
* :mod:`crab_gym.mcp.tools`: the tools a session sees, and what each call does;
* :mod:`crab_gym.mcp.server`: the SDK's server over stdio or streamable HTTP (bearer token);
* :mod:`crab_gym.mcp.stdio`: stdin and stdout for the SDK's stdio transport, without threads;
* :mod:`crab_gym.mcp.cli`: the ``crab-gym mcp`` subcommand.

Only :mod:`crab_gym.mcp.server` imports the SDK (the optional ``mcp`` extra), on first use.
"""
