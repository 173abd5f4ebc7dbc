"""REALM P2, multi-group campus tours (guides and groups): model, checker, oracle, heuristics, env."""
