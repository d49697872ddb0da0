"""fabriccfg.push."""
