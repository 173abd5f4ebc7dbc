"""REALM P1, the single-agent campus tour (a TSP with time windows).

Modules: ``model`` (instance type), ``generator`` (seeded instances), ``formats`` (our JSON,
upstream files, ``load_p1``), ``sim`` (the walk), ``checker`` (independent scoring),
``oracle`` (OR-Tools), ``references``, ``heuristics`` (greedy insertion), ``render``, ``env``
(Realm-P1-v0) and ``build`` (regenerates the shipped instances).
"""
