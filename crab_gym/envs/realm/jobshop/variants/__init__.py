"""REALM-Bench's job-shop variants on the P11 family: J2 (one disruption per instance), J3
(200 jobs x 50 machines, jobs that revisit machines) and J4 (both, three disruptions).

The modules mirror the family's (model, generator, formats, sim, checker, oracle, references,
heuristics, render, env, build); see docs/jobshop.md, "J2, J3, J4".
"""
