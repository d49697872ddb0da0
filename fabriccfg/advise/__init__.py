"""fabriccfg.advise."""
