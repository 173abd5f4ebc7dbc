"""REALM P2, multi-group campus tours (guides and visitor groups).

Modules: ``model`` (instance types), ``generator`` (seeded instances), ``formats`` (our JSON,
upstream files, ``load_p2``), ``sim`` (the schedule), ``checker`` (independent scoring),
``oracle`` (CP-SAT), ``references``, ``heuristics`` (earliest start), ``render``, ``env``
(Realm-P2-v0) and ``build`` (regenerates the shipped instances).
"""
