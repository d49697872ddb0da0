"""fabriccfg.mock."""
