"""REALM P3 and P4, urban ride-sharing (a dial-a-ride problem), without and with disruptions."""
