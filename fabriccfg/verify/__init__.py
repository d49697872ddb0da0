"""fabriccfg.verify."""
