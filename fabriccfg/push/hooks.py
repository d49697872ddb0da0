"""Extension points of the push (kept tiny and explicit so other packages can plug in).

``post_push_checks``: per-device checks run after the transaction's own verification and before
confirm; any problem returned rolls the device back like a failed verification. ``fabriccfg push
--verify`` (the verify package) appends its checks here or passes its own list to
:func:`fabriccfg.push.api.push`.
"""

from __future__ import annotations

from fabriccfg.push.device import CheckContext, PostPushCheck

__all__ = ["CheckContext", "PostPushCheck", "post_push_checks"]

post_push_checks: list[PostPushCheck] = []
