"""fabriccfg: validated intent, rendered configs, guarded pushes and health checks for AI fabrics.

The public Python API is :mod:`fabriccfg.api` (docs/api.md): ``from fabriccfg import api``. It is not
re-exported here, so that ``import fabriccfg`` and the CLI's start stay light and the API's function
names (``render``, ``push``, ``verify``, ...) never shadow the stage packages of the same name.
"""

__version__ = "0.1.0"
