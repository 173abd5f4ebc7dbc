"""The reference results: every baseline on every REALM id's ``test`` split.

:mod:`~crab_gym.results.plan` says what is run, :mod:`~crab_gym.results.table` what the shipped
``reference.json.gz`` holds, :mod:`~crab_gym.results.page` the ``docs/results.md`` page,
:mod:`~crab_gym.results.compare` a run beside it (``crab-gym report DIR --compare reference``)
and :mod:`~crab_gym.results.cli` the ``crab-gym results`` command that regenerates them.
"""
