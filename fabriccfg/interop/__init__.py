"""Where the inventory comes from and goes to: NetBox in (``netbox``), Nornir and Ansible out (``export``).

The stages never import this package; it only reads and writes the inventory format, so the
inventory YAML stays the one source of truth that other tools are fed from.
"""
