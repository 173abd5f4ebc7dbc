"""REALM P1, the single-agent campus tour (a TSP with time windows): model, checker, oracle, env."""
