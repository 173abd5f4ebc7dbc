"""The multi-agent views need PettingZoo (the ``multiagent`` extra): without it these tests are
not collected (``pip install -e ".[multiagent]"`` brings them back)."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("pettingzoo") else ["test_*.py"]
