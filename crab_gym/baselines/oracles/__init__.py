"""OR-Tools oracles: reference values and plans for the REALM problems (one module each)."""
