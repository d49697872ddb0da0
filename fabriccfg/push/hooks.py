"""Extension points of the push (kept tiny and explicit so other packages can plug in).

``post_push_checks``: per-device checks run after the transaction's own verification and before
confirm; any problem returned rolls the device back like a failed verification. They are passed per
run (``fabriccfg.push.api.push(..., post_push_checks=[...])``), never registered globally: ``fabriccfg
push --verify`` builds the verify package's check and hands it to that one push.
"""

from __future__ import annotations

from fabriccfg.push.device import CheckContext, PostPushCheck

__all__ = ["CheckContext", "PostPushCheck"]
