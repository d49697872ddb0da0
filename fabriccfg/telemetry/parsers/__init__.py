"""fabriccfg.telemetry.parsers."""
