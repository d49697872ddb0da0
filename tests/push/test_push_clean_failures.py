"""Issue 10 §5: a failed ConnectX host push leaves no temporary file behind and names the real cause.

Against the real mock fabric (asyncssh Linux shell): the ``reject=`` fault makes the shell answer
``Permission denied`` to a write, exactly as bash does for a file it may not create.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from fabriccfg.render.engine import render_device


def _listing(lb: Any, name: str, folder: str) -> list[str]:
    """``ls FOLDER`` on the host over SSH: what an operator would see."""
    from fabriccfg.connect import connect

    conn = connect(lb.mock.endpoints[name])
    try:
        conn.enable()
        return conn.fc_command(f"ls {folder}").split()
    finally:
        conn.disconnect()


def _piece_of_second_chunk(fabric: Any, device: str, file: str) -> str:
    """A regex matching only the second base64 upload chunk of ``file`` (chunks are 3000 characters)."""
    from fabriccfg.push.transaction import UPLOAD_CHUNK

    b64 = base64.b64encode(render_device(fabric, device).files[file].encode()).decode()
    assert len(b64) > UPLOAD_CHUNK + 100, "the file must need two chunks"
    piece = next(p for i in range(UPLOAD_CHUNK, len(b64) - 32)
                 if b64.count(p := b64[i:i + 32]) == 1 and "/" not in p and "+" not in p)
    return re.escape(piece)


def test_refused_write_is_reported_and_rollback_leaves_no_temp_files(lab: Any, roce: Any) -> None:
    rx = _piece_of_second_chunk(roce, "gpu01", "roce-expected.txt")
    with lab(roce, faults=[f"gpu01:reject={rx}"]) as lb:
        before = _listing(lb, "gpu01", "/etc/fabriccfg")
        rep = lb.push(["gpu01"])
        d = next(x for x in rep.devices if x.name == "gpu01")
        assert d.state == "rolled-back", d.reason
        assert "Permission denied" in d.reason and "checksum" not in d.reason, d.reason
        after = _listing(lb, "gpu01", "/etc/fabriccfg")
        assert after == before, f"left behind: {sorted(set(after) - set(before))}"
        assert not [f for f in _listing(lb, "gpu01", "/usr/local/sbin") if ".fc-" in f]


def test_disconnect_during_a_chunked_upload_leaves_no_temp_files(lab: Any, roce: Any) -> None:
    # writes: the setup and read-back scripts (5 chunks each), then the first chunk of roce-expected.txt
    with lab(roce, faults=["gpu01:disconnect-after=1"]) as lb:
        before = _listing(lb, "gpu01", "/etc/fabriccfg")
        rep = lb.push(["gpu01"])
        d = next(x for x in rep.devices if x.name == "gpu01")
        assert d.state == "rolled-back", d.reason
        assert _listing(lb, "gpu01", "/etc/fabriccfg") == before
        assert not [f for f in _listing(lb, "gpu01", "/usr/local/sbin") if ".fc-" in f]
