"""REALM P7, disaster relief with weather blocks and resource shortages.

Modules: ``model`` (instance type, disruptions, scoring), ``generator`` (seeded instances),
``formats`` (our JSON, upstream files, ``load_p7``), ``sim`` (the operation on an event
clock), ``checker`` (independent scoring), ``oracle`` (CP-SAT, brute force), ``adaptation``
(the re-solving yardstick), ``coordination`` (the one-vehicle baseline), ``local_search``
(checker-priced polish of plans), ``disruptions`` (the disruption protocol's parsing),
``references``, ``heuristics`` (greedy), ``render``, ``env`` (Realm-P7-v0) and ``build``
(regenerates the shipped instances).
"""
