"""REALM P5 and P8, wedding logistics: guest pickups and errands at shops, without and with
road disruptions.

model.py (instances) · disruptions.py (P8's typed disruptions) · network.py (travel times,
disruption effects) · generator.py · formats.py (our JSON, upstream files, the loaders) ·
instances/ · sim.py (event simulation) · checker.py (independent plan checker) · oracle.py
(RoutingModel) · oracle_cpsat.py (CP-SAT cross-check and proof) · oracle_disruptions.py (P8
re-solve) · references.py · heuristics.py · render.py · env.py (Realm-P5-v0) ·
env_disruptions.py (Realm-P8-v0) · build.py (regenerates instances/).

What every vehicle fleet shares (the road network's core, the event clock, the env base and
the road-disruption mixin, the RoutingModel core, the map drawing) lives once in
:mod:`crab_gym.envs.realm.common.fleet`; these modules keep only what is wedding's own.
"""
