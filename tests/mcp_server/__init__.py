"""Tests of ``crab-gym mcp``. Not named ``tests/mcp``: a script run from ``tests/`` (the docs
examples runner) has that folder first on ``sys.path``, where ``tests/mcp`` would hide the SDK."""
