"""fabriccfg.inventory."""
