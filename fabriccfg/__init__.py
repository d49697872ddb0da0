"""fabriccfg: validated intent, rendered configs, guarded pushes and health checks for AI fabrics."""

__version__ = "0.1.0"
