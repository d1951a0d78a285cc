"""LMs: SimLM (the embedded simulated default), LM specs per role, and the standard signatures."""
