"""fabriccfg.telemetry."""
