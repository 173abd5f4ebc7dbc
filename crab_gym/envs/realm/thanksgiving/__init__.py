"""REALM P6 and P9, Thanksgiving dinner (cooking schedule + airport pickups; P9 with flight delays).

Modules: ``model`` (instance types), ``generator`` (seeded instances), ``formats`` (our JSON,
upstream files, ``load_p6``/``load_p9``), ``sim`` (the kitchen in event time), ``checker``
(independent scoring), ``oracle`` (CP-SAT), ``exhaustive`` (brute force), ``replan`` (P9's
adaptive oracle), ``references``, ``heuristics`` (greedy), ``render``, ``env`` (Realm-P6-v0),
``env_delays`` (Realm-P9-v0) and ``build`` (regenerates the shipped instances).
"""
