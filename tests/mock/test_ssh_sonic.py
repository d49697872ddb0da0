"""SONiC mock (linux): patch upload through the shell, apply-patch, checkpoint/rollback, save."""

from __future__ import annotations

import base64
import json

from mockssh_helpers import ROCE_LAB, mock_fixture, session

mock = mock_fixture(ROCE_LAB)
DEV = "leaf-r1"

PATCH = [
    {"op": "add", "path": "/DSCP_TO_TC_MAP", "value": {"ROCE": {"26": "3", "48": "6"}}},
    {"op": "add", "path": "/PORT_QOS_MAP",
     "value": {"Ethernet0": {"dscp_to_tc_map": "ROCE", "pfc_enable": "3"}}},
    {"op": "add", "path": "/WRED_PROFILE", "value": {"ROCE_LOSSLESS": {
        "ecn": "ecn_all", "green_min_threshold": "150000", "green_max_threshold": "1500000"}}},
]


def _upload(conn, path: str, text: str) -> str:
    b64 = base64.b64encode(text.encode()).decode()
    return conn.send_command(f"printf '%s' '{b64}' | base64 -d > {path} && sha256sum {path}")


def _running(conn) -> dict:
    return json.loads(conn.send_command("show runningconfiguration all"))


def test_checkpoint_apply_patch_save_rollback(mock):
    conn = session(mock, DEV)
    try:
        assert conn.send_command("whoami").strip() == "admin"
        before = _running(conn)
        assert "Checkpoint created successfully." in conn.send_command("sudo config checkpoint fabriccfg-1")
        digest = _upload(conn, "/tmp/p.json", json.dumps(PATCH))
        assert digest.split()[1] == "/tmp/p.json"
        out = conn.send_command("sudo config apply-patch /tmp/p.json", read_timeout=20)
        assert "Patch applied successfully." in out
        running = _running(conn)
        assert running["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3"
        assert running["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"
        assert "Running command" in conn.send_command("sudo config save -y")
        saved = json.loads(conn.send_command("cat /etc/sonic/config_db.json"))
        assert saved == running
        assert "Config rolled back successfully." in conn.send_command("sudo config rollback fabriccfg-1")
        assert _running(conn) == before
    finally:
        conn.disconnect()


def test_invalid_patches_change_nothing(mock):
    conn = session(mock, DEV)
    try:
        before = _running(conn)
        for bad in ([{"op": "add", "path": "/NOT_A_TABLE", "value": {"x": {"a": "1"}}}],
                    [{"op": "add", "path": "/PFC_WD", "value": {"Ethernet0": {"detection_time": "50"}}}],
                    [{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfc_enable": 3}}}],
                    [{"op": "frob", "path": "/PORT"}]):
            _upload(conn, "/tmp/bad.json", json.dumps(bad))
            out = conn.send_command("sudo config apply-patch /tmp/bad.json")
            assert "Error:" in out and "Patch applied successfully." not in out
            assert conn.send_command("echo $?").strip() == "1"
        assert "Root privileges are required" in conn.send_command("config save -y")
        assert _running(conn) == before
    finally:
        conn.disconnect()


def test_heredoc_upload(mock):
    conn = session(mock, DEV)
    try:
        body = json.dumps([{"op": "add", "path": "/CABLE_LENGTH", "value": {"AZURE": {"Ethernet0": "5m"}}}],
                          indent=2)
        out = conn.send_command_timing("cat > /tmp/h.json <<'EOF'\n" + body + "\nEOF", last_read=0.3)
        assert ">" in out
        assert json.loads(conn.send_command("cat /tmp/h.json")) == json.loads(body)
        assert "Patch applied successfully." in conn.send_command("sudo config apply-patch /tmp/h.json")
        assert _running(conn)["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "5m"
    finally:
        conn.disconnect()
