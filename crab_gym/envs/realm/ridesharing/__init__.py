"""REALM P3 and P4, urban ride-sharing (a dial-a-ride problem), without and with disruptions.

model.py (instances) · disruptions.py (P4's typed disruptions) · network.py (travel times,
disruption effects) · generator.py · formats.py (our JSON, upstream files, the loaders) ·
instances/ · sim.py · checker.py · oracle.py (P3) · oracle_disruptions.py (P4 re-solve) ·
references.py · heuristics.py · render.py · env.py (Realm-P3-v0) · env_disruptions.py
(Realm-P4-v0) · build.py (regenerates instances/).

What every vehicle fleet shares (the road network's core, the event clock, the env base and
the road-disruption mixin, the RoutingModel core, the map drawing) lives once in
:mod:`crab_gym.envs.realm.common.fleet`; these modules keep only what is ride-sharing's own.
"""
