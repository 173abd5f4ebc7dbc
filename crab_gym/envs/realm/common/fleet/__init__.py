"""The fleet kit: what the vehicle-routing families (P3/P4 ride-sharing, P5/P8 wedding) share,
written once; each family keeps only what differs (its stops, loads, windows and scores).

==================  ===========================================================================
module              its job
==================  ===========================================================================
``roads``           travel minutes over a road network, and the minutes in force while
                    disruptions strike (cached)
``sim``             the event clock of a fleet: vehicles free at minutes, the clock, disruptions
                    applied when it reaches them, driving a plan; plan names to stop codes
``routing``         the OR-Tools RoutingModel core of the fleet oracles: search parameters,
                    status names, pickup-and-delivery pairs, fixed starts, reading routes, the
                    best of several deterministic attempts
``env``             :class:`FleetEnv`, the base of the vehicle-dispatch envs: one vehicle acts at
                    a time, masks, plan submission, settling, renders
``disrupted``       :class:`FleetDisruptionMixin`: road disruptions of P4/P8 injected and
                    applied, plans paused, the adaptation snapshot, disrupted-road flags
``render``          a fleet on a map: places laid out in the frame, routes so far, vehicles
                    tagged with their ids
==================  ===========================================================================

Imports only :mod:`crab_gym.core`, :mod:`crab_gym.envs.base`, :mod:`crab_gym.envs.canvas` and
:mod:`crab_gym.envs.realm.common`, like the rest of ``common``.
"""
