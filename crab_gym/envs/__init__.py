"""Gymnasium environments: the CrabEnv base, REALM problems and the desktop."""
