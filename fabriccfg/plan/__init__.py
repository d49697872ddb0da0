"""`fabriccfg plan`: what a change would do, tried end to end on a mock of today's fabric (docs/ci.md).

``run.py`` runs the stages (validate, render, mock seeded with the running configs, verify before, push
through the real transactions, verify after); ``report.py`` writes the result as Markdown (a pull-request
comment), JSON or JUnit.
"""
