"""REALM-Bench P10, the global GPU supply chain (Realm-P10-v0); time in days.

``model`` (instance, disruptions, capacities), ``generator``, ``formats`` (our JSON and the
upstream reader), ``sim`` (day-by-day dynamics), ``plans`` (whole plans), ``checker`` (the
independent verdict), ``oracle`` (CP-SAT, adaptive re-solves, exhaustive search),
``references``, ``disruptions`` (the disruption protocol's view), ``heuristics``, ``render``,
``env``, ``build`` (the shipped instances). See ``docs/supply_chain.md``.
"""
