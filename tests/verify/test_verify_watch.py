"""`watch`: rounds, sharding, the exporter over HTTP (port 0), the textfile."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from fabriccfg.verify import runner, watch
from fabriccfg.verify.engine import Context, evaluate

from .synth import Synth


def _collector(synth: Synth, step: float = 2.0):
    clock = {"t": 0.0}

    def collect(fabric, targets):
        clock["t"] += step
        snap = synth.snapshot(clock["t"])
        for dev in list(snap.samples):
            if dev not in targets:
                del snap.samples[dev]
        return snap

    return collect


def test_shards_partition_devices_stably(roce):
    names = list(roce.devices)
    parts = [[n for n in names if runner.in_shard(n, (i, 3))] for i in range(3)]
    assert sorted(n for part in parts for n in part) == sorted(names)
    assert runner.shard_of("leaf-r0", 7) == runner.shard_of("leaf-r0", 7)
    assert runner.parse_shard("2/3") == (2, 3)


def test_rounds_export_and_textfile(roce, checks, tmp_path):
    synth = Synth(roce)
    synth.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, tc=3)
    targets = {n: None for n in roce.devices}
    w = watch.Watcher(roce, targets, checks, _collector(synth), textfile=tmp_path / "fabric.prom")  # type: ignore[arg-type]
    server = watch.serve(w, ("127.0.0.1", 0))
    try:
        w.run(0.01, rounds=3)
        assert w.rounds == 3 and w.last is not None and w.last.status == "critical"
        body = urllib.request.urlopen(f"http://{server.address}/metrics", timeout=5).read().decode()
    finally:
        w.close()
        server.close()
    fams = {f.name: f for f in text_string_to_metric_families(body)}
    assert fams["fabriccfg_verify_status"].samples[0].value == 2
    drops = [s for s in fams["fabriccfg_finding"].samples if s.labels["check"] == "lossless-queue-drops"]
    assert drops and drops[0].labels["device"] == "leaf-r2" and drops[0].labels["priority"] == "3"
    out = fams["fabriccfg_if_out_bytes"]  # a raw counter: Prometheus takes the rate()
    assert out.type == "counter"
    one = next(s for s in out.samples if s.labels["device"] == "leaf-r0" and s.labels["port"] == "swp29")
    assert one.name == "fabriccfg_if_out_bytes_total"

    def raw(snap):
        return next(s.value for s in snap if s.metric == "if_out_octets" and s.device == "leaf-r0"
                    and s.port == "swp29")
    assert one.value == raw(w.snaps[-1])
    rate = (raw(w.snaps[-1]) - raw(w.snaps[-2])) / (w.snaps[-1].ts - w.snaps[-2].ts)
    assert abs(rate - 400e9 / 8 * 0.3) < 1  # what rate() over the two rounds sees
    assert any(s.labels.get("state") == "up" for s in fams["fabriccfg_oper_status"].samples)
    assert fams["fabriccfg_watch_rounds"].samples[0].value == 3
    text = (tmp_path / "fabric.prom").read_text()
    assert "fabriccfg_verify_status 2" in text


def test_shard_watcher_only_polls_its_devices(roce, checks):
    synth = Synth(roce)
    seen: set[str] = set()
    inner = _collector(synth)

    def collect(fabric, targets):
        seen.update(targets)
        return inner(fabric, targets)

    targets = {n: None for n in roce.devices}
    w = watch.Watcher(roce, targets, checks, collect, shard=(1, 2))  # type: ignore[arg-type]
    w.run(0.01, rounds=2)
    w.close()
    assert seen and seen == {n for n in roce.devices if runner.shard_of(n, 2) == 1}
    assert w.last is not None and w.last.status == "ok"


def test_exporter_states_and_duplicates(ib, checks):
    from prometheus_client import CollectorRegistry, generate_latest

    synth = Synth(ib)
    w = watch.Watcher(ib, {n: None for n in ib.devices}, checks, _collector(synth))  # type: ignore[arg-type]
    w.run(0.01, rounds=2)
    w.close()
    snap = w.snaps[-1]
    snap.add(next(s for s in snap if s.metric == "sm_state"))  # the same series twice
    w.last_point = watch.build_points([w.snaps[-2], snap])[0]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(watch.FabricCollector(w))
    fams = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
    sm = fams["fabriccfg_sm_state"].samples
    assert {(s.labels["device"], s.labels["state"]) for s in sm} == {("sm1", "master"), ("sm2", "standby")}
    assert len(sm) == 2
    assert fams["fabriccfg_port_xmit_wait_ticks"].samples


def _get(address: str, path: str = "/metrics", gzip_ok: bool = False) -> tuple[int, bytes, dict]:
    import urllib.error

    req = urllib.request.Request(f"http://{address}{path}",
                                 headers={"Accept-Encoding": "gzip"} if gzip_ok else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, b"", dict(exc.headers)


def test_scrapes_are_served_from_the_round_bytes(roce, checks, monkeypatch):
    """The exposition is rendered once per round; scrapes (plain, gzip, HEAD) only send those bytes."""
    import gzip
    import threading
    from concurrent.futures import ThreadPoolExecutor

    renders = []
    inner = watch.FabricCollector.parts  # what a render starts from

    def counting(self):
        renders.append(threading.current_thread().name)
        return inner(self)

    monkeypatch.setattr(watch.FabricCollector, "parts", counting)
    synth = Synth(roce)
    w = watch.Watcher(roce, {n: None for n in roce.devices}, checks, _collector(synth))  # type: ignore[arg-type]
    server = watch.serve(w, ("127.0.0.1", 0), workers=3)
    try:
        w.run(0.01, rounds=2)
        assert len(renders) == 3  # at start (empty) and after each round, on the round's thread
        with ThreadPoolExecutor(40) as pool:
            got = list(pool.map(lambda i: _get(server.address, gzip_ok=bool(i % 2)), range(200)))
        scrape_threads = {t.name for t in threading.enumerate() if t.name.startswith("scrape")}
    finally:
        w.close()
        server.close()
    assert len(renders) == 3, "a scrape rendered the exposition"
    assert all(code == 200 for code, _, _ in got)
    plain = {body for code, body, h in got if "Content-Encoding" not in h}
    zipped = {gzip.decompress(body) for code, body, h in got if h.get("Content-Encoding") == "gzip"}
    assert plain == zipped == {w.exposition.body}
    fams = {f.name for f in text_string_to_metric_families(w.exposition.body.decode())}
    assert {"fabriccfg_verify_status", "fabriccfg_finding", "fabriccfg_watch_rounds"} <= fams
    assert len(scrape_threads - {"scrape-accept"}) <= 3  # the pool's workers, never one per scrape


def test_scrape_paths_and_head(roce, checks):
    w = watch.Watcher(roce, {}, checks, _collector(Synth(roce)))  # type: ignore[arg-type]
    server = watch.serve(w, ("127.0.0.1", 0))
    try:
        assert _get(server.address, "/nothing")[0] == 404
        head = urllib.request.urlopen(urllib.request.Request(f"http://{server.address}/metrics",
                                                             method="HEAD"), timeout=10)
        assert head.status == 200 and head.read() == b""
        assert int(head.headers["Content-Length"]) == len(w.exposition.body)
        assert head.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    finally:
        w.close()
        server.close()


def test_scrape_never_waits_for_a_round(roce, checks):
    """A round stuck in collection (a slow device) does not stall scrapes, and scrapes never block it."""
    import threading
    import time

    synth = Synth(roce)
    inner = _collector(synth)
    entered, release = threading.Event(), threading.Event()
    calls = {"n": 0}

    def slow(fabric, targets):
        calls["n"] += 1
        if calls["n"] == 2:
            entered.set()
            assert release.wait(30)
        return inner(fabric, targets)

    w = watch.Watcher(roce, {n: None for n in roce.devices}, checks, slow)  # type: ignore[arg-type]
    server = watch.serve(w, ("127.0.0.1", 0))
    loop = threading.Thread(target=w.run, args=(0.01,), kwargs={"rounds": 3})
    loop.start()
    try:
        assert entered.wait(30)
        t0 = time.monotonic()
        code, body, _ = _get(server.address)
        assert code == 200 and time.monotonic() - t0 < 5
        fams = {f.name: f for f in text_string_to_metric_families(body.decode())}
        assert fams["fabriccfg_watch_rounds"].samples[0].value == 1  # the last finished round
    finally:
        release.set()
        loop.join(30)
        w.close()
        server.close()
    assert w.rounds == 3


def test_kept_verdicts_give_the_findings_of_a_fresh_evaluation(roce, checks):
    """Checks with a ``for:`` window read the older point's verdicts back from the round that computed
    them. Over rounds in which a pause storm starts and a lossless queue starts dropping, every round's
    findings equal those of evaluating the same snapshots afresh (new points, nothing kept)."""
    synth = Synth(roce)
    synth.pause_storm("gpu07", "mlx5_1", since=7.0, hop_s=0.0)
    synth.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, since=5.0, tc=3)
    assert any(c.for_points > 1 for c in checks), "the shipped checks have for: windows"
    w = watch.Watcher(roce, {n: None for n in roce.devices}, checks, _collector(synth),
                      damping=(1, 1))  # type: ignore[arg-type]
    fired = 0
    for _ in range(7):
        got = w.round()
        fresh = evaluate(checks, Context(roce, list(w.snaps)))
        assert [(r.check, r.state, r.findings) for r in got.results] == \
            [(r.check, r.state, r.findings) for r in fresh.results]
        fired += sum(1 for r in got.results if r.state in ("warning", "critical"))
    w.close()
    assert fired > 0
