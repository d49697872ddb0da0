"""fabriccfg.mock.profiles."""
