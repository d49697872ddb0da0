"""Contract with the renderer: every rendered config line is valid on the mock, and once applied the
running config shows it back the same way (so push converges and a second diff is empty)."""

from __future__ import annotations

import json

import pytest
from mockssh_helpers import IB_8700, IB_8790, ROCE_LAB

from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock.confmode import ConfigEditor, ConfNode
from fabriccfg.mock.ssh import DeviceState
from fabriccfg.platforms.cumulus_nvue import mock as cumulus_nvue
from fabriccfg.platforms.eos import mock as eos
from fabriccfg.platforms.mlnxos_ib import mock as mlnxos_ib
from fabriccfg.platforms.nxos import mock as nxos
from fabriccfg.platforms.opensm_host import mock as opensm_host
from fabriccfg.platforms.sonic import mock as sonic
from fabriccfg.render.engine import render_fabric

GRAMMARS = {"mlnxos-ib": (mlnxos_ib.GRAMMAR, None), "eos": (eos.GRAMMAR, 3), "nxos": (nxos.GRAMMAR, 2)}


def _cases():
    for inv in (ROCE_LAB, IB_8700, IB_8790):
        fabric = load_fabric(inv)
        for rendered in render_fabric(fabric):
            for name, text in rendered.files.items():
                yield pytest.param(fabric, rendered.name, rendered.platform, name, text,
                                   id=f"{inv.stem}-{rendered.name}-{name}")


def _config_lines(text: str) -> list[str]:
    return [ln.rstrip() for ln in text.splitlines()
            if ln.strip() and not ln.strip().startswith(("#", "!"))]


@pytest.mark.parametrize(("fabric", "device", "platform", "name", "text"), list(_cases()))
def test_rendered_config_is_accepted_and_shown_back(fabric, device, platform, name, text):
    if platform in GRAMMARS:
        grammar, step = GRAMMARS[platform]
        root = ConfNode()
        editor = ConfigEditor(grammar, root)
        lines = _config_lines(text)
        bad = [ln for ln in lines if editor.apply(ln.strip()) == "invalid"]
        assert not bad
        shown = root.flat() if step is None else root.render(step)
        expected = [ln.strip() for ln in lines] if step is None else lines
        assert shown == expected
    elif platform == "cumulus-nvue":
        lines = [ln for ln in text.splitlines() if ln.startswith("nv ")]
        assert all(cumulus_nvue.nv_key(ln[7:]) is not None for ln in lines)
        keys = [cumulus_nvue.nv_key(ln[7:]) for ln in lines]
        assert len(set(keys)) == len(keys), "two rendered lines would replace each other"
    elif platform == "sonic":
        assert sonic.validate_db(json.loads(text)) is None
    elif platform == "opensm-host" and name in ("opensm.conf", "sharp_am.cfg"):
        dev = DeviceState(device, platform, fabric=fabric)
        keys = opensm_host._keys_for(dev) if name == "opensm.conf" else opensm_host.SHARP_KEYS
        assert opensm_host.parse_conf(text, keys) == ([], [])
    elif platform == "opensm-host" and name == "partitions.conf":
        assert opensm_host.check_partitions(text) is None
