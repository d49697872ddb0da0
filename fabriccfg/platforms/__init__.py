"""The built-in platform packages, one per platform.

See :mod:`fabriccfg.catalog` (facts) and :mod:`fabriccfg.registry` (pieces). No stage imports these: each
package registers through the ``fabriccfg.platforms`` entry point group in pyproject.toml, as a third-party
platform would."""
