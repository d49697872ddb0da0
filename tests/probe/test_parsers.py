"""perftest and nccl-tests parsers against real published outputs (SOURCE next to each fixture),
and the mock's output for the probe's own commands parsed into the same structure."""

from __future__ import annotations

import pytest

from fabriccfg.mock import cli_telemetry
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.probe import commands, plan
from fabriccfg.telemetry.parsers import nccl_tests, perftest

from .conftest import FIXTURES


def fixture(name: str) -> str:
    assert (FIXTURES / f"{name.rsplit('.', 1)[0]}.SOURCE").is_file(), "every fixture has a SOURCE note"
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_latency_row_as_published():
    res = perftest.parse(fixture("lat_roce_rdmacm.txt"))
    assert res.kind == "latency" and res.test == "RDMA_Write Latency Test"
    assert res.info["Device"] == "rocep1s0f1" and res.info["Data ex. method"] == "rdma_cm"
    assert res.latency == [perftest.LatencyRow(2, 1000, 1.42, 1.93, 1.47, 1.47, 0.00, 1.57, 1.93)]
    assert not res.server


def test_bandwidth_gbits_rows_and_class_fields():
    res = perftest.parse(fixture("bw_roce_gbits.txt"))
    assert res.kind == "bandwidth" and res.link_type == "Ethernet" and res.gid_index == 3
    assert [r.bw_avg_gbps for r in res.bandwidth] == [92.57, 92.57, 92.57, 92.56, 92.57]
    assert res.bandwidth[0] == perftest.BandwidthRow(65536, 882805, 0.0, 92.57, 0.176554)
    assert res.warnings and "BW peak" in res.warnings[0]


def test_bandwidth_tabs_and_post_list():
    res = perftest.parse(fixture("bw_postlist_gbits.txt"))
    assert res.info["Post List"] == "128" and res.gid_index == 2
    assert res.info["Device"] == "ib0" and res.info["rdma_cm QPs"] == "OFF" and res.info["Using SRQ"] == "OFF"
    assert res.bandwidth == [perftest.BandwidthRow(8, 224958464, 0.0, 0.48, 7.498617)]


def test_server_banner_is_the_listening_line():
    text = fixture("server_banner.txt")
    assert perftest.LISTENING.search(text)
    res = perftest.parse(text)
    assert res.server and res.gid_index == 3 and res.info["Mtu"] == "4096[B]" and res.bandwidth == []


def test_not_perftest_is_an_error():
    with pytest.raises(perftest.PerftestError):
        perftest.parse("bash: ib_write_lat: command not found\n")


def test_nccl_tests_table_as_published():
    res = nccl_tests.parse(fixture("nccl_allreduce_h100_16.txt"))
    assert len(res.rows) == 31 and len(res.ranks) == 16 and res.ranks[8] == "ztan-mig-gq73"
    first, last = res.rows[0], res.rows[-1]
    assert (first.size, first.count, first.dtype, first.redop, first.root, first.time_us) == (
        8,
        2,
        "float",
        "sum",
        -1,
        135.8,
    )
    assert (last.size, last.time_us, last.algbw, last.busbw, last.wrong) == (
        8589934592,
        47535.0,
        180.71,
        338.82,
        0,
    )
    assert (last.time_us_inplace, last.busbw_inplace) == (47743.0, 337.35)
    assert res.avg_busbw == 70.742 and res.peak_busbw() == 338.82


def test_nccl_tests_without_table_is_an_error():
    with pytest.raises(nccl_tests.NcclTestsError):
        nccl_tests.parse("# nThread 1 nGpus 1\nNCCL WARN failed\n")


@pytest.mark.parametrize("tool", ["ib_write_lat", "ib_send_lat", "ib_write_bw"])
def test_mock_perftest_parses_like_the_real_one(roce, tool):
    """The mock's client output has every field the real captures have (same parser, same structure)."""
    model = TrafficModel(roce, seed=1, t0=1000.0)
    pair = plan.plan(roce)[0]
    cmd = commands.perftest(tool, roce, pair.client, commands.ProbeOptions(), server=pair.server)
    out, status = cli_telemetry.run(model, pair.client.host, cmd, t=1001.0) or ("", 1)
    assert status == 0, out
    res = perftest.parse(out)
    real = perftest.parse(fixture("bw_roce_gbits.txt"))
    assert set(real.info) - {"CQ Moderation"} <= set(res.info)
    assert res.link_type == "Ethernet" and res.gid_index == 3
    if tool.endswith("_lat"):
        row = res.latency[0]
        assert row.iterations == 10_000 and None not in (row.t_avg, row.t_stdev, row.p99, row.p999)
        assert row.t_min <= row.t_typical <= row.p99 <= row.p999 <= row.t_max
    else:
        assert res.bandwidth and res.bandwidth[0].size == 65536
    server, status = cli_telemetry.run(
        model, pair.server.host, commands.perftest(tool, roce, pair.server, commands.ProbeOptions()), t=1001.0
    ) or ("", 1)
    assert status == 0 and perftest.parse(server).server


def test_mock_nccl_parses_like_the_real_one(roce):
    model = TrafficModel(roce, seed=1, t0=1000.0)
    pair = plan.plan(roce)[-1]
    out, status = cli_telemetry.run(
        model, pair.client.host, commands.nccl(roce, pair, commands.ProbeOptions()), t=1001.0
    ) or ("", 1)
    assert status == 0, out
    res = nccl_tests.parse(out)
    real = nccl_tests.parse(fixture("nccl_allreduce_h100_16.txt"))
    assert res.rows and set(vars(res.rows[0])) == set(vars(real.rows[0]))
    assert [r.size for r in res.rows] == [r.size for r in real.rows if 8 <= r.size <= 128 * 2**20]
    assert set(res.ranks.values()) == {pair.client.host, pair.server.host}
    assert res.avg_busbw is not None
