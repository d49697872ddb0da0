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

    __slots__ = ()

    def metric(self, func: str, name: str, overrides: Mapping[str, str]) -> Any:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class Expr:
    """A parsed and validated expression."""

    text: str
    tree: ast.Expression = field(repr=False, compare=False)
    metrics: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    fn: Fn | None = field(default=None, repr=False, compare=False)

    def evaluate(self, env: Mapping[str, Any], source: MetricSource) -> Any:
        fn = self.fn
        if fn is None:
            fn = _compile(self.tree.body)
            object.__setattr__(self, "fn", fn)
        return fn(env, source)


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
    return Expr(text.strip(), tree, frozenset(checker.metrics), frozenset(checker.names), _compile(tree.body))


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


Fn = Callable[[Mapping[str, Any], MetricSource], Any]
"""A compiled node: (environment, metric source) -> value."""


def _compile(node: ast.AST) -> Fn:
    """Turn a validated tree into nested closures (walked once, not per evaluation)."""
    if isinstance(node, ast.Constant):
        const = node.value
        return lambda env, src: const
    if isinstance(node, ast.Name):
        name = node.id
        return lambda env, src: env.get(name)
    if isinstance(node, ast.Tuple | ast.List):
        elts = [_compile(e) for e in node.elts]
        return lambda env, src: tuple(e(env, src) for e in elts)
    if isinstance(node, ast.BinOp):
        return _binop(node)
    if isinstance(node, ast.UnaryOp):
        operand = _compile(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda env, src: None if (v := operand(env, src)) is None else not v
        neg = isinstance(node.op, ast.USub)
        return lambda env, src: None if (v := operand(env, src)) is None else (-v if neg else +v)
    if isinstance(node, ast.BoolOp):
        return _boolop(isinstance(node.op, ast.And), [_compile(v) for v in node.values])
    if isinstance(node, ast.Compare):
        return _compare(_compile(node.left), [_CMPOPS[type(o)] for o in node.ops],
                        [_compile(c) for c in node.comparators])
    if isinstance(node, ast.IfExp):
        test, body, orelse = _compile(node.test), _compile(node.body), _compile(node.orelse)

        def ifexp(env: Mapping[str, Any], src: MetricSource) -> Any:
            t = test(env, src)
            if t is None:
                return None
            return body(env, src) if t else orelse(env, src)

        return ifexp
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        fname = node.func.id
        if fname in METRIC_FUNCTIONS:
            assert isinstance(node.args[0], ast.Name)
            metric = node.args[0].id
            overrides = {kw.arg: str(kw.value.value) for kw in node.keywords
                         if kw.arg is not None and isinstance(kw.value, ast.Constant)}
            return lambda env, src: src.metric(fname, metric, overrides)
        helper = HELPERS[fname]
        args = [_compile(a) for a in node.args]
        if len(args) == 2:  # ratio(), min()/max() of two: most calls; no argument list to build
            first, second = args

            def call2(env: Mapping[str, Any], src: MetricSource) -> Any:
                try:
                    return helper(first(env, src), second(env, src))
                except (TypeError, ValueError):
                    return None

            return call2

        def call(env: Mapping[str, Any], src: MetricSource) -> Any:
            try:
                return helper(*[a(env, src) for a in args])
            except (TypeError, ValueError):
                return None

        return call
    raise ExprError(f"{type(node).__name__} is not allowed")  # unreachable after validation


def _binop(node: ast.BinOp) -> Fn:
    left, right = _compile(node.left), _compile(node.right)
    op = _BINOPS[type(node.op)]
    divides = isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod)

    def binop(env: Mapping[str, Any], src: MetricSource) -> Any:
        a = left(env, src)
        if a is None:
            return None
        b = right(env, src)
        if b is None or (divides and b == 0):
            return None
        try:
            return op(a, b)
        except TypeError:
            return None

    return binop


def _compare(left: Fn, ops: list[Callable[[Any, Any], Any]], comparators: list[Fn]) -> Fn:
    if len(ops) == 1:  # ``a < b``: nearly every comparison
        op, right = ops[0], comparators[0]

        def compare1(env: Mapping[str, Any], src: MetricSource) -> Any:
            a = left(env, src)
            b = right(env, src)
            if a is None or b is None:
                return None
            try:
                return bool(op(a, b))
            except TypeError:
                return None

        return compare1

    def compare(env: Mapping[str, Any], src: MetricSource) -> Any:
        a = left(env, src)
        for op, comp in zip(ops, comparators, strict=True):
            b = comp(env, src)
            if a is None or b is None:
                return None
            try:
                ok = op(a, b)
            except TypeError:
                return None
            if not ok:
                return False
            a = b
        return True

    return compare


def _boolop(is_and: bool, values: list[Fn]) -> Fn:
    """Three-valued logic: None is 'unknown'."""

    def boolop(env: Mapping[str, Any], src: MetricSource) -> Any:
        unknown = False
        for v in values:
            r = v(env, src)
            if r is None:
                unknown = True
            elif is_and and not r:
                return False
            elif not is_and and r:
                return True
        return None if unknown else is_and

    return boolop
