"""fabriccfg.render."""
