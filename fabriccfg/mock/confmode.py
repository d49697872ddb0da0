"""Configuration trees and mode grammars for the Cisco-like mock CLIs (MLNX-OS, EOS, NX-OS).

A platform declares its config modes as data: each :class:`Mode` lists :class:`Rule` regexes (full
match on the stripped line). A rule may enter a sub-mode (``interface ...``). A line not valid in the
current mode is tried in the parent modes, as the real CLIs do, so indented or flat input both work.

Storage semantics (so pushes converge): a rule's named group ``v`` marks the value; a line with the
same key (the line without its value) replaces the old one. ``no LINE`` removes matching lines; when
it removes nothing it is stored as an explicit ``no LINE`` (e.g. ``no ib sm``), which the positive
line replaces again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from fabriccfg.mock.baseline import BaselineError
from fabriccfg.mock.ssh import CliProfile, CliSession, DeviceState
from fabriccfg.text import split_lines


@dataclass
class Rule:
    pattern: str
    mode: str | None = None
    """Sub-mode entered by this line."""
    label: str = ""
    """Prompt label of the sub-mode, ``str.format``-ed with the match groups (``{0}`` = whole line)."""
    inner: str | None = None
    """The named group ``rest`` must be valid in this mode (MLNX-OS flat interface lines)."""
    rx: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rx = re.compile(self.pattern)


@dataclass
class Mode:
    name: str
    rules: list[Rule]
    flatten: bool = False
    """Lines of this mode are stored at the parent as '<entering line> <line>' (MLNX-OS)."""


class Grammar:
    def __init__(self, modes: list[Mode], negation: tuple[str, ...] = ("no ",)) -> None:
        self.modes = {m.name: m for m in modes}
        self.negation = negation

    def strip_negation(self, line: str) -> tuple[bool, str]:
        for neg in self.negation:
            if line.startswith(neg):
                return True, line[len(neg):].strip()
        return False, line

    def match(self, mode: str, line: str) -> tuple[Rule, re.Match[str]] | None:
        for rule in self.modes[mode].rules:
            m = rule.rx.fullmatch(line)
            if m is None:
                continue
            if rule.inner is not None:
                rest = self.strip_negation(m.groupdict().get("rest") or "")[1]
                if self.match(rule.inner, rest) is None:
                    continue
            return rule, m
        return None

    def key(self, mode: str, line: str) -> str:
        """The replacement key of ``line`` in ``mode`` (the line without its ``v`` group)."""
        line = self.strip_negation(line)[1]
        found = self.match(mode, line)
        if found is None:
            return line
        rule, m = found
        if rule.inner is not None:
            rest = m.group("rest")
            return line[: m.start("rest")] + self.key(rule.inner, rest)
        if "v" in m.groupdict():
            if m.group("v") is None:  # optional value left out: same key as with it
                return line + "\0"
            return line[: m.start("v")] + "\0" + line[m.end("v"):]
        return line


class ConfNode:
    """One config line and its children (ordered)."""

    __slots__ = ("children", "key", "line", "neg")

    def __init__(self, line: str = "", key: str = "", neg: bool = False) -> None:
        self.line = line
        self.key = key or line
        self.neg = neg
        self.children: dict[str, ConfNode] = {}

    def copy(self) -> ConfNode:
        n = ConfNode(self.line, self.key, self.neg)
        n.children = {k: c.copy() for k, c in self.children.items()}
        return n

    def render(self, step: int, depth: int = 0, bang: str | None = None) -> list[str]:
        out: list[str] = []
        for child in self.children.values():
            out.append(" " * (step * depth) + child.line)
            out.extend(child.render(step, depth + 1))
            if bang is not None and depth == 0 and child.children:
                out.append(bang)
        return out

    def flat(self, prefix: str = "") -> list[str]:
        out: list[str] = []
        for child in self.children.values():
            out.append(prefix + child.line)
            out.extend(child.flat(prefix + child.line + " "))
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConfNode) and self.flat() == other.flat()

    __hash__ = None  # type: ignore[assignment]


@dataclass
class Frame:
    mode: str
    node: ConfNode
    label: str
    prefix: str = ""


class ConfigEditor:
    """Apply config lines to a tree with mode tracking; returns the error text or None."""

    def __init__(self, grammar: Grammar, root: ConfNode, root_mode: str = "config") -> None:
        self.grammar = grammar
        self.root = root
        self.stack: list[Frame] = [Frame(root_mode, root, "")]

    @property
    def frame(self) -> Frame:
        return self.stack[-1]

    def exit(self) -> bool:
        """Leave one sub-mode; False when already at the config root."""
        if len(self.stack) > 1:
            self.stack.pop()
            return True
        return False

    def resolve(self, body: str) -> tuple[int, Rule, re.Match[str]] | None:
        for depth in range(len(self.stack) - 1, -1, -1):
            found = self.grammar.match(self.stack[depth].mode, body)
            if found is not None:
                return depth, found[0], found[1]
        return None

    def valid(self, line: str) -> bool:
        body = self.grammar.strip_negation(line)[1]
        return self.resolve(body) is not None

    def apply(self, line: str) -> str:
        """Apply one stripped line.

        Returns "invalid" (no mode accepts it), "mode" (entered a sub-mode) or "change".
        """
        negated, body = self.grammar.strip_negation(line)
        found = self.resolve(body)
        if found is None:
            return "invalid"
        depth, rule, m = found
        del self.stack[depth + 1:]
        frame = self.stack[-1]
        node = frame.node
        key = frame.prefix + self.grammar.key(frame.mode, body)
        stored = frame.prefix + body
        if rule.mode is not None and not negated:
            label = rule.label.format(m.group(0), *m.groups())
            target = self.grammar.modes[rule.mode]
            if target.flatten:
                self.stack.append(Frame(rule.mode, node, label, prefix=stored + " "))
                return "mode"
            else:
                child = node.children.get(stored)
                if child is None:
                    child = node.children[stored] = ConfNode(stored, stored)
                self.stack.append(Frame(rule.mode, child, label))
            return "mode"
        if negated:
            removed = [k for k, c in node.children.items()
                       if c.key == key or c.line == stored or c.line.startswith(stored + " ")]
            removed = [k for k in removed if not node.children[k].neg]
            for k in removed:
                del node.children[k]
            if not removed and rule.mode is None:
                text = frame.prefix + "no " + body
                for k in [k for k, c in node.children.items() if c.key == key]:
                    del node.children[k]
                node.children[text] = ConfNode(text, key, neg=True)
            return "change"
        for k in [k for k, c in node.children.items() if c.key == key and k != stored]:
            del node.children[k]
        if stored not in node.children:
            node.children[stored] = ConfNode(stored, key, neg=self.grammar.strip_negation(
                stored[len(frame.prefix):])[0] if frame.prefix else False)
        return "change"


def load_text(grammar: Grammar, root: ConfNode, files: Mapping[str, str], comments: tuple[str, ...]) -> None:
    """Feed the lines of ``files`` (indented CLI text) into the config tree ``root``.

    Indentation decides the mode: a line at or left of the line that entered the current sub-mode
    leaves it first, so ``show running-config`` output and rendered text both load the way a person
    typing them would. Raises :class:`BaselineError` naming ``file:line`` for a line the grammar refuses.
    """
    for fname, text in files.items():
        editor = ConfigEditor(grammar, root)
        indents: list[int] = []
        for lineno, raw in enumerate(split_lines(text), start=1):
            line = raw.strip()
            if not line or line.startswith(comments) or line == "end":
                continue
            ind = len(raw) - len(raw.lstrip())
            while indents and indents[-1] >= ind:
                indents.pop()
                editor.exit()
            if line == "exit":
                if editor.exit() and indents:
                    indents.pop()
                continue
            result = editor.apply(line)
            if result == "invalid":
                raise BaselineError(f"{fname}:{lineno}: the mock CLI refuses {line!r}")
            depth = len(editor.stack) - 1
            indents = [*indents[:depth - 1], ind] if result == "mode" and depth else indents[:depth]



class ModalSession(CliSession):
    """A Cisco-like session: exec levels are the platform's, config mode edits a tree via :attr:`grammar`."""

    grammar: Grammar

    def __init__(self, dev: DeviceState) -> None:
        super().__init__(dev)
        self.editor: ConfigEditor | None = None

    def enter_config(self, tree: ConfNode | None = None) -> None:
        """Start editing ``tree`` (default: the running config) at the config root."""
        self.editor = ConfigEditor(self.grammar, self.dev.running if tree is None else tree)

    def apply_config(self, cmd: str) -> str:
        """One line in config mode: the error text, or "" once applied (``reject=``/``disconnect-after=``)."""
        assert self.editor is not None
        err = self.config_gate(cmd)
        if err is not None:
            return err
        if self.editor.apply(cmd) == "invalid":
            return self.error(cmd)
        self.config_applied()
        return ""

    def show_telemetry(self, cmd: str, error_line: str | None = None) -> str:
        """The telemetry hook's output for ``cmd``, else the platform's error for ``error_line``."""
        res = self.run_telemetry(cmd)
        if res is not None:
            return str(res[0])
        return self.error(cmd if error_line is None else error_line)


class ModalProfile(CliProfile):
    """A Cisco-like platform: the fresh running config is ``hostname NAME``; saved = a copy of it."""

    grammar: Grammar

    def init_state(self, dev: DeviceState) -> None:
        root = ConfNode()
        ConfigEditor(self.grammar, root).apply(f"hostname {dev.name}")
        dev.running = root
        dev.saved = root.copy()

    def load_baseline(self, dev: DeviceState, files: Mapping[str, str]) -> None:
        """Running and saved config := the CLI text of ``files`` (``show running-config`` or rendered)."""
        root = ConfNode()
        load_text(self.grammar, root, files, ("!", "#"))
        dev.running.children = root.children
        dev.saved.children = root.copy().children
