"""The check expression language: what it accepts, what it refuses, how missing data behaves."""

from __future__ import annotations

import pytest

from fabriccfg.verify import expr as ex
from fabriccfg.verify.engine import CheckError, parse_check


class Src(ex.MetricSource):
    def __init__(self, data):
        self.data = data
        self.calls = []

    def metric(self, func, name, overrides):
        self.calls.append((func, name, dict(overrides)))
        return self.data.get((func, name))


def ev(text, env=None, data=None):
    return ex.parse(text).evaluate(env or {}, Src(data or {}))


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1 + 2 * 3", 7),
        ("7 // 2", 3),
        ("7 % 4", 3),
        ("-(2 - 5)", 3),
        ("not 0", True),
        ("1 < 2 < 3", True),
        ("3 > 2 > 5", False),
        ("'up' in ('up', 'dormant')", True),
        ("'a' if 1 > 2 else 'b'", "b"),
        ("min(3, 1, 2)", 1),
        ("max(1, 4)", 4),
        ("abs(-2)", 2),
        ("ratio(1, 4)", 0.25),
        ("ratio(1, 0)", None),
        ("1 / 0", None),
        ("coalesce(None, None, 3)", 3),
    ],
)
def test_arithmetic_and_helpers(text, expected):
    assert ev(text) == expected


def test_none_propagates_and_three_valued_logic():
    assert ev("rate(x) * 8 > 1") is None
    assert ev("rate(x) > 1 and False") is False
    assert ev("rate(x) > 1 or True") is True
    assert ev("rate(x) > 1 or False") is None
    assert ev("min(rate(x), 1)") is None
    assert ev("value(s) == 'up'", data={("value", "s"): "down"}) is False


def test_metric_calls_and_label_overrides():
    src = Src({("rate", "pfc_rx_pause"): 10.0})
    e = ex.parse("rate(pfc_rx_pause, prio=4) * 2")
    assert e.evaluate({}, src) == 20.0
    assert src.calls == [("rate", "pfc_rx_pause", {"prio": "4"})]
    assert e.metrics == frozenset({"pfc_rx_pause"})


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('id')",
        "().__class__.__bases__[0].__subclasses__()",
        "open('/etc/passwd')",
        "value.real",
        "x[0]",
        "lambda: 1",
        "[i for i in (1, 2)]",
        "rate('if_in_octets')",
        "rate(if_in_octets, prio=x)",
        "rate(a, b)",
        "min(1, key=abs)",
        "2 ** 1000000",
        "a is None",
        "f'{1}'",
        "(x := 1)",
        "",
        "1 +",
        "x" * 3000,
    ],
)
def test_rejected(text):
    with pytest.raises(ex.ExprError):
        ex.parse(text)


def test_unknown_names_rejected_in_checks():
    with pytest.raises(CheckError, match="unknown name 'speeed'"):
        parse_check({"id": "x", "value": "speeed", "warn": 1}, "x.yaml")


@pytest.mark.parametrize(
    "doc,match",
    [
        ({"id": "Bad Id", "value": "1", "warn": 1}, "'id'"),
        ({"id": "x", "value": "1"}, "needs 'value' and 'warn'"),
        ({"id": "x", "analyzer": "nope"}, "unknown analyzer"),
        ({"id": "x", "value": "1", "warn": 1, "for": 0}, "'for'"),
        ({"id": "x", "value": "1", "warn": 1, "scope": {"priority": 9}}, "priority"),
        ({"id": "x", "value": "1", "warn": 1, "scope": {"ports": "("}}, "scope.ports"),
        ({"id": "x", "value": "1", "warn": 1, "bogus": 1}, "unknown key"),
        ({"id": "x", "value": "1", "warn": 1, "op": "=~"}, "op must be"),
        ({"id": "x", "value": "1", "warn": {"exprs": "1"}}, "mapping takes"),
    ],
)
def test_bad_check_documents(doc, match):
    with pytest.raises(CheckError, match=match):
        parse_check(doc, "x.yaml")


def test_threshold_forms():
    c = parse_check({"id": "x", "value": "1", "warn": 0.5, "crit": ">= 2", "op": ">="}, "x.yaml")
    assert c.warn is not None and c.warn.threshold == ">= 0.5"
    assert c.crit is not None and c.crit.threshold == ">= 2"
    c = parse_check(
        {"id": "x", "value": "1", "crit": {"expr": "value(oper_status) != 'up'", "show": "up"}}, "x.yaml"
    )
    assert c.crit is not None and c.crit.threshold == "up"
