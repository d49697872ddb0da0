"""The check expression language: a restricted subset of Python expressions, evaluated by walking the AST.

Check files are user text (``--checks DIR``), so they are never passed to ``eval``. An expression is
parsed once with :func:`ast.parse` and every node is checked against a whitelist when the check is
loaded; evaluation walks the tree with an explicit environment. Allowed:

- numbers, strings, ``True``/``False``/``None``, tuples/lists of those (for ``in``);
- names bound by the engine (``value``, ``interval_s``, ``link_bps``, ``intended_speed_mbps``,
  ``priority`` ...);
- ``+ - * / // %``, unary ``- + not``, comparisons (``< <= > >= == != in not in``), ``and``/``or``,
  ``a if cond else b``;
- calls of whitelisted functions only: the metric functions ``rate(m)``, ``delta(m)``, ``value(m)``
  (``m`` is a bare metric name, optional keyword label overrides such as ``rate(pfc_rx_pause, prio=4)``)
  and the helpers ``min max abs ratio coalesce`` (``coalesce`` = first argument that is not
  ``None``: a fallback when a platform lacks a metric).

Missing data is ``None`` and propagates: arithmetic or a comparison with ``None`` gives ``None``, and a
condition that is ``None`` neither fires nor clears (the engine records "no data"). Division by zero
gives ``None`` too.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_LENGTH = 2000
METRIC_FUNCTIONS = frozenset({"rate", "delta", "value"})
HELPERS: dict[str, Callable[..., Any]] = {
    "min": lambda *a: None if any(x is None for x in a) else min(a),
    "max": lambda *a: None if any(x is None for x in a) else max(a),
    "abs": lambda x: None if x is None else abs(x),
    "ratio": lambda a, b: None if a is None or b is None or b == 0 else a / b,
    "coalesce": lambda *a: next((x for x in a if x is not None), None),
}

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


class ExprError(ValueError):
    """An expression is not valid in the check language (message is safe to print)."""


class MetricSource:
    """What metric functions read; the engine implements it per scope and sample point."""

    def metric(self, func: str, name: str, overrides: Mapping[str, str]) -> Any:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class Expr:
    """A parsed and validated expression."""

    text: str
    tree: ast.Expression = field(repr=False, compare=False)
    metrics: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()

    def evaluate(self, env: Mapping[str, Any], source: MetricSource) -> Any:
        return _Eval(env, source).visit(self.tree.body)


def parse(text: str | int | float | bool, allowed_names: frozenset[str] | None = None) -> Expr:
    """Parse and validate ``text``; numbers are accepted as constant expressions."""
    if isinstance(text, bool | int | float):
        text = repr(text)
    if not isinstance(text, str) or not text.strip():
        raise ExprError("an expression must be a non-empty string")
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"syntax error in {text!r}: {exc.msg}") from None
    checker = _Validator(allowed_names)
    checker.visit(tree.body)
    return Expr(text.strip(), tree, frozenset(checker.metrics), frozenset(checker.names))


class _Validator(ast.NodeVisitor):
    def __init__(self, allowed_names: frozenset[str] | None) -> None:
        self.allowed = allowed_names
        self.metrics: set[str] = set()
        self.names: set[str] = set()

    def generic_visit(self, node: ast.AST) -> None:
        raise ExprError(f"{type(node).__name__} is not allowed in a check expression")

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, int | float | str | bool | type(None)):
            raise ExprError(f"constant {node.value!r} is not allowed")

    def visit_Name(self, node: ast.Name) -> None:
        if self.allowed is not None and node.id not in self.allowed:
            raise ExprError(f"unknown name {node.id!r} (known: {', '.join(sorted(self.allowed))})")
        self.names.add(node.id)

    def visit_Tuple(self, node: ast.Tuple) -> None:
        for elt in node.elts:
            self.visit(elt)

    visit_List = visit_Tuple  # type: ignore[assignment]

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if type(node.op) not in _BINOPS:
            raise ExprError(f"operator {type(node.op).__name__} is not allowed")
        self.visit(node.left)
        self.visit(node.right)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if not isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            raise ExprError(f"operator {type(node.op).__name__} is not allowed")
        self.visit(node.operand)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        for v in node.values:
            self.visit(v)

    def visit_Compare(self, node: ast.Compare) -> None:
        for op in node.ops:
            if type(op) not in _CMPOPS:
                raise ExprError(f"comparison {type(op).__name__} is not allowed")
        self.visit(node.left)
        for c in node.comparators:
            self.visit(c)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.visit(node.test)
        self.visit(node.body)
        self.visit(node.orelse)

    def visit_Call(self, node: ast.Call) -> None:
        if not isinstance(node.func, ast.Name):
            raise ExprError("only plain function calls are allowed")
        name = node.func.id
        if name in METRIC_FUNCTIONS:
            if len(node.args) != 1 or not isinstance(node.args[0], ast.Name):
                raise ExprError(f"{name}() takes one bare metric name, e.g. {name}(if_out_octets)")
            for kw in node.keywords:
                if kw.arg is None or not isinstance(kw.value, ast.Constant) or \
                        not isinstance(kw.value.value, int | str):
                    raise ExprError(f"{name}(): label overrides must be name=constant")
            self.metrics.add(node.args[0].id)
            return
        if name not in HELPERS:
            raise ExprError(f"unknown function {name!r} (known: "
                            f"{', '.join(sorted(METRIC_FUNCTIONS | set(HELPERS)))})")
        if node.keywords:
            raise ExprError(f"{name}() takes no keyword arguments")
        for a in node.args:
            self.visit(a)


class _Eval:
    def __init__(self, env: Mapping[str, Any], source: MetricSource) -> None:
        self.env = env
        self.source = source

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self.visit(e) for e in node.elts)
        if isinstance(node, ast.BinOp):
            left, right = self.visit(node.left), self.visit(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod) and right == 0:
                return None
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp):
            v = self.visit(node.operand)
            if v is None:
                return None
            if isinstance(node.op, ast.Not):
                return not v
            return -v if isinstance(node.op, ast.USub) else +v
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.Compare):
            left = self.visit(node.left)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = self.visit(comp)
                if left is None or right is None:
                    return None
                try:
                    ok = _CMPOPS[type(op)](left, right)
                except TypeError:
                    return None
                if not ok:
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            test = self.visit(node.test)
            if test is None:
                return None
            return self.visit(node.body if test else node.orelse)
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            name = node.func.id
            if name in METRIC_FUNCTIONS:
                assert isinstance(node.args[0], ast.Name)
                overrides = {kw.arg: str(kw.value.value) for kw in node.keywords
                             if kw.arg is not None and isinstance(kw.value, ast.Constant)}
                return self.source.metric(name, node.args[0].id, overrides)
            try:
                return HELPERS[name](*(self.visit(a) for a in node.args))
            except (TypeError, ValueError):
                return None
        raise ExprError(f"{type(node).__name__} is not allowed")  # unreachable after validation

    def _boolop(self, node: ast.BoolOp) -> Any:
        """Three-valued logic: None is 'unknown'."""
        is_and = isinstance(node.op, ast.And)
        unknown = False
        for v in node.values:
            r = self.visit(v)
            if r is None:
                unknown = True
                continue
            if is_and and not r:
                return False
            if not is_and and r:
                return True
        if unknown:
            return None
        return is_and
