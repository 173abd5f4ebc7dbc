"""``python -m crab_gym.checks [ids...]``: see :mod:`crab_gym.checks.cli`."""

from crab_gym.checks.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
