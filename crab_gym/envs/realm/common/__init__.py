"""What every REALM problem family shares, written once.

==================  ===========================================================================
module              its job
==================  ===========================================================================
``env``             :class:`~crab_gym.envs.realm.common.env.RealmEnv`, the base of every REALM
                    env; constructor checks (``checked_init``, ``InstanceKind``); goal graphs
``problem_spec``    :class:`ProblemSpec`: one problem's parts by dotted path (the index's records)
``disruption_env``  the disruption kit: ``DisruptedRealmEnv``, the base of the envs with
                    disruptions (schedule, injection, snapshot, pause, adaptation modes)
``fleet/``          the fleet kit of the vehicle-dispatch problems (P3/P4, P5/P8): roads, the
                    vehicle event clock, the env base, road disruptions, routing, drawing
``references``      the :class:`Reference` record, ``optimality_ratio``, the shipped/cached store
``oracle_result``   :class:`OracleResult`, the one result type of every family's oracle
``oracle_record``   an oracle result as a reference record, solved once and cached
``plan_check``      the verdict type of the families' independent plan checkers
``plan_score``      a whole plan scored: the checker's verdict and the env's metrics
                    (``crab-gym score``); an episode's plan as a plan file
``disruptions``     the disruption protocol that ``DisruptionWrapper`` speaks to
``loading``         reading instance files and mappings into validated models
``instance_files``  a family's shipped instance files: names, load, from_mapping
``shipping``        regenerating a family's shipped instances and references (``build.py``)
``instance_source`` an env's ``instance``/``generator`` arguments: checked, loaded, drawn
``keywords``        the keywords every REALM env shares, declared once (``realm_keywords``)
``upstream``        recognising an upstream REALM-Bench file by its keys
``distances``       reading upstream ``{"a-b": minutes}`` distance maps
``clock_hours``     upstream clock hours into minutes from midnight, and hour windows
``uniqueness``      names and ids that must not repeat inside an instance
``policy_fit``      whether a family's heuristic fits the env it is given (``PolicyFitError``)
``solver_budget``   how long an oracle may search, by size class or instance size
``errors``          ``InstanceFormatError`` (names file and field), ``RealmRepairWarning``
``jsonfile``        reading JSON safely (encoding, nesting, huge numbers)
``limits``          numeric limits of instance fields
``cache``           the one on-disk cache root for solved references, and ``JsonCache`` (JSON
                    records by key, in memory and on disk)
==================  ===========================================================================

Imports only :mod:`crab_gym.core`, :mod:`crab_gym.envs.base` and :mod:`crab_gym.envs.canvas`.
"""
