"""Host keys are parsed once per known_hosts version, not per connection (push/watch CPU per device
stayed O(fabric size) while every connection re-read the whole file); lookups match paramiko's."""

from __future__ import annotations

import os
from pathlib import Path

import paramiko

from fabriccfg.connect import known_host_keys


def _line(name: str, key: paramiko.PKey) -> str:
    return f"{name} {key.get_name()} {key.get_base64()}\n"


def test_lookup_matches_paramiko_and_follows_file_changes(tmp_path: Path) -> None:
    k1, k2, k3 = (paramiko.RSAKey.generate(1024) for _ in range(3))
    kh = tmp_path / "known_hosts"
    hashed = paramiko.HostKeys.hash_host("[10.0.0.9]:2222")
    kh.write_text(_line("[127.0.0.1]:2201", k1) + _line("leaf1,10.0.0.1", k2) + _line(hashed, k3))
    for name in ("[127.0.0.1]:2201", "leaf1", "10.0.0.1", "[10.0.0.9]:2222", "[127.0.0.1]:2202"):
        ref = paramiko.HostKeys(str(kh)).lookup(name)
        want = {t: k.get_base64() for t, k in (ref or {}).items()}
        assert {t: k.get_base64() for t, k in known_host_keys(str(kh), name).items()} == want, name
    assert known_host_keys(str(kh), "[127.0.0.1]:2202") == {}  # unknown: strict checking refuses it
    # a rewritten file (a new mock fabric, a rotated key) is read again
    kh.write_text(_line("[127.0.0.1]:2201", k3))
    st = kh.stat()
    os.utime(kh, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert known_host_keys(str(kh), "[127.0.0.1]:2201")["ssh-rsa"].get_base64() == k3.get_base64()
    assert known_host_keys(str(tmp_path / "missing"), "leaf1") == {}



def test_waiting_works_on_descriptors_above_1024() -> None:
    """watch keeps one session per device open: past ~500 devices the channels' descriptors pass 1024,
    where select() raised 'filedescriptor out of range' on every command."""
    import resource
    import time

    from fabriccfg.connect import wait_fd

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft <= 1100:  # pragma: no cover (the CI image allows more)
        import pytest

        pytest.skip(f"RLIMIT_NOFILE {soft} leaves no descriptor above 1024 to test with")
    r, w = os.pipe()
    high = os.dup2(r, 1090)

    class Chan:
        def fileno(self) -> int:
            return high

    try:
        t0 = time.monotonic()
        wait_fd(Chan(), 0.05)  # nothing to read: waits the timeout, no ValueError
        assert time.monotonic() - t0 >= 0.04
        os.write(w, b"x")
        t0 = time.monotonic()
        wait_fd(Chan(), 5.0)  # readable: returns at once
        assert time.monotonic() - t0 < 1.0
    finally:
        for fd in (r, w, high):
            os.close(fd)
