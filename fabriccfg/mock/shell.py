"""A small bash-like shell for the Linux-based mock devices (SM hosts, GPU hosts, SONiC, Cumulus).

Enough shell for push and verify: pipelines (``|``), ``;``/``&&``/``||``, ``>``/``>>``/``<``
redirection, heredocs (``cat > F <<'EOF'``), quotes, ``$?``/``$VAR``, ``sudo`` and ``sudo -s``, files
in a per-device virtual filesystem (``DeviceState.files``), ``systemctl`` and ``bash FILE``.
Platform commands (``nv``, ``config``, ``opensm``, ``mlnx_qos`` ...) are registered by the profiles.
Unknown commands go to the telemetry hook (``perfquery``, ``ethtool -S`` ...) before failing with
``bash: CMD: command not found``.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import posixpath
import re
import shlex
import time
from collections.abc import Callable, Mapping
from typing import ClassVar

from fabriccfg.mock import baseline
from fabriccfg.mock.ssh import CliProfile, CliSession, DeviceState

Result = tuple[str, int]
Command = Callable[["ShellSession", list[str], str], Result]

OPERATORS = {";", "&&", "||", "|"}
REDIRECTS = {">", ">>", "<", "<<"}
MANAGED_PREFIXES = ("/etc/", "/sys/")


_BLOCK = re.compile(r"(if|then|else|elif|fi|for|while|do|done|case|esac|function)\b|\w+\s*\(\)\s*\{|[{}]$")


class _Drop(Exception):
    """The disconnect-after fault fired: stop executing this line."""


def _expand(line: str, env: dict[str, str]) -> str:
    """Expand ``$?``, ``$VAR`` and ``${VAR}`` outside single quotes."""
    if "$" not in line:
        return line
    out: list[str] = []
    i, n = 0, len(line)
    in_single = False
    while i < n:
        ch = line[i]
        if ch == "'" and not in_single:
            in_single = True
        elif ch == "'" and in_single:
            in_single = False
        if ch == "$" and not in_single and i + 1 < n:
            nxt = line[i + 1]
            if nxt == "?":
                out.append(env.get("?", "0"))
                i += 2
                continue
            if nxt == "{":
                end = line.find("}", i + 2)
                if end > 0:
                    out.append(env.get(line[i + 2:end], ""))
                    i = end + 1
                    continue
            m = re.match(r"[A-Za-z_]\w*", line[i + 1:])
            if m:
                out.append(env.get(m.group(0), ""))
                i += 1 + m.end()
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def split_list(line: str) -> list[tuple[str, str]]:
    """Split on ``;``, ``&&`` and ``||`` outside quotes: [(operator before, segment), ...]."""
    if not _QUOTING.intersection(line):  # a collector's batched line (4-5 kB a leaf): no walk per character
        pieces = _LIST_OPS.split(line)
        return [(";", pieces[0]), *zip(pieces[1::2], pieces[2::2], strict=True)]
    parts: list[tuple[str, str]] = []
    cur: list[str] = []
    op = ";"
    quote: str | None = None
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if quote is not None:
            cur.append(ch)
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"' and i + 1 < n:
                cur.append(line[i + 1])
                i += 1
        elif ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch == "\\" and i + 1 < n:
            cur.append(line[i:i + 2])
            i += 1
        elif line.startswith("&&", i) or line.startswith("||", i):
            parts.append((op, "".join(cur)))
            op = line[i:i + 2]
            cur = []
            i += 1
        elif ch == ";":
            parts.append((op, "".join(cur)))
            op = ";"
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append((op, "".join(cur)))
    return parts


_QUOTING = frozenset("'\"\\")
_LIST_OPS = re.compile(r"(&&|\|\||;)")
_WORDS = re.compile(r"[;&|<>]+|[^ \t\r\n;&|<>]+")
"""Without quotes or backslashes, shlex (posix, whitespace split, these punctuation characters) gives
runs of punctuation and runs of other non-blank characters (tests/mock: held to shlex on random lines)."""


def tokenize(line: str) -> list[str]:
    line = re.sub(r"\s2>&1", "", line)
    line = re.sub(r"\s2>\s*/dev/null", "", line)
    if not _QUOTING.intersection(line):
        return _WORDS.findall(line)
    lex = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    lex.commenters = ""
    return list(lex)


def _printf(fmt: str, args: list[str]) -> str:
    def unescape(s: str) -> str:
        return s.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")

    fmt = unescape(fmt)
    specs = re.findall(r"%[-0-9.]*[sdb%]", fmt)
    nconv = len([s for s in specs if s != "%%"])
    if nconv == 0:
        return fmt.replace("%%", "%")
    out = []
    rest = list(args) or [""]
    while True:
        chunk, rest = rest[:nconv], rest[nconv:]
        chunk += [""] * (nconv - len(chunk))
        it = iter(chunk)

        def sub(m: re.Match[str], it: object = it) -> str:
            spec = m.group(0)
            if spec == "%%":
                return "%"
            val = next(it)  # type: ignore[call-overload]
            if spec.endswith("b"):
                return unescape(str(val))
            if spec.endswith("d"):
                try:
                    return str(int(val or 0))
                except ValueError:
                    return "0"
            return str(val)

        out.append(re.sub(r"%[-0-9.]*[sdb%]", sub, fmt))
        if not rest:
            break
    return "".join(out)


class ShellSession(CliSession):
    """One interactive bash-like session."""

    error_format = "bash: {word}: command not found"
    user = "admin"
    home = "/home/admin"
    prompt_host_suffix = ""
    commands: ClassVar[dict[str, Command]] = {}

    def __init__(self, dev: DeviceState) -> None:
        super().__init__(dev)
        self.root_levels = 0
        self.cwd = self.home
        self.env: dict[str, str] = {"?": "0", "HOME": self.home, "USER": self.user}
        self.heredoc: tuple[str, str, list[str]] | None = None
        self.errexit = False

    # ----- prompt and loop
    def exit_status(self) -> int:
        try:
            return int(self.env.get("?", "0"))
        except ValueError:
            return 1

    @property
    def is_root(self) -> bool:
        return self.root_levels > 0

    def banner(self) -> str:
        return (f"Linux {self.dev.name} 6.1.0-28-amd64 #1 SMP x86_64\n"
                f"Last login: {time.ctime()} from 127.0.0.1\n")

    def prompt(self) -> str:
        if self.heredoc is not None:
            return "> "
        user = "root" if self.is_root else self.user
        in_home = self.cwd.startswith(self.home) and not self.is_root
        cwd = "~" + self.cwd[len(self.home):] if in_home else self.cwd
        if self.is_root and self.cwd == self.home:
            cwd = self.home
        return f"{user}@{self.dev.name}{self.prompt_host_suffix}:{cwd}{'#' if self.is_root else '$'} "

    def execute(self, line: str) -> str:
        if self.heredoc is not None:
            cmdline, delim, lines = self.heredoc
            if line.strip() == delim:
                self.heredoc = None
                return self.run_line(cmdline, heredoc="".join(x + "\n" for x in lines))
            lines.append(line)
            return ""
        if not line.strip() or line.lstrip().startswith("#"):
            return ""
        try:
            tokens = tokenize(line)
        except ValueError:
            self.env["?"] = "2"
            return "bash: syntax error: unterminated quoted string"
        if "<<" in tokens:
            idx = tokens.index("<<")
            if idx + 1 >= len(tokens):
                return "bash: syntax error near unexpected token `newline'"
            self.heredoc = (line, tokens[idx + 1], [])
            return ""
        return self.run_line(line)

    def run_line(self, line: str, heredoc: str = "") -> str:
        try:
            out, status = self.run_list(line, heredoc)
        except _Drop:
            return ""
        self.env["?"] = str(status)
        return out

    # ----- interpreter
    def run_list(self, line: str, heredoc: str = "") -> Result:
        """Run ``a; b && c || d``; each part is expanded when it runs (so ``$?`` is current)."""
        output: list[str] = []
        status = 0
        for op, segment in split_list(line):
            if not (op == ";" or (op == "&&" and status == 0) or (op == "||" and status != 0)):
                continue
            if not segment.strip():
                continue
            try:
                tokens = tokenize(_expand(segment, self.env))
            except ValueError:
                output.append("bash: syntax error: unterminated quoted string\n")
                status = 2
                continue
            out, status = self.run_pipeline(tokens, heredoc)
            self.env["?"] = str(status)
            output.append(out)
            if self.closing:
                break
        return "".join(output), status

    def run_pipeline(self, tokens: list[str], heredoc: str) -> Result:
        stages: list[list[str]] = [[]]
        for t in tokens:
            if t == "|":
                stages.append([])
            else:
                stages[-1].append(t)
        data = ""
        status = 0
        for n, stage in enumerate(stages):
            argv: list[str] = []
            out_path: str | None = None
            append = False
            k = 0
            stdin = data if n else ""
            while k < len(stage):
                t = stage[k]
                if t in (">", ">>") and k + 1 < len(stage):
                    out_path, append = stage[k + 1], t == ">>"
                    k += 2
                    continue
                if t == "<" and k + 1 < len(stage):
                    text = self.read(stage[k + 1])
                    if text is None:
                        return f"bash: {stage[k + 1]}: No such file or directory\n", 1
                    stdin = text
                    k += 2
                    continue
                if t == "<<" and k + 1 < len(stage):
                    stdin = heredoc
                    k += 2
                    continue
                if t == ">&" and k + 1 < len(stage):
                    k += 2
                    continue
                argv.append(t)
                k += 1
            data, status = self.run_command(argv, stdin) if argv else ("", 0)
            if out_path is not None:
                err = self.write(out_path, data, append=append)
                if err:
                    return err, 1
                data = ""
        return data, status

    def run_command(self, argv: list[str], stdin: str) -> Result:
        while argv and re.fullmatch(r"[A-Za-z_]\w*=.*", argv[0]):
            name, _, value = argv[0].partition("=")
            self.env[name] = value
            argv = argv[1:]
        if not argv:
            return "", 0
        name = argv[0]
        if name == "sudo":
            rest = [a for a in argv[1:] if a not in ("-n", "-E", "-H")]
            if not rest or (rest[0] in ("-s", "-i", "su", "bash") and len(rest) == 1):
                self.root_levels += 1
                self.cwd = self.cwd if rest and rest[0] == "-s" else ("/root" if rest else self.cwd)
                return "", 0
            if rest[:2] == ["su", "-"]:
                self.root_levels += 1
                return "", 0
            was = self.root_levels
            self.root_levels = max(1, was)
            try:
                return self.run_command(rest, stdin)
            finally:
                self.root_levels = was
        fn = self.commands.get(name)
        if fn is not None:
            return fn(self, argv, stdin)
        real = self.dev.extra.get("real_tools")
        if real is not None:  # the ibsim backend: infiniband-diags run for real (fabriccfg.mock.ibsim)
            got = real(argv)
            if got is not None:
                return got  # type: ignore[no-any-return]
        res = self.telemetry_result(" ".join(shlex.quote(a) for a in argv))
        if res is not None:
            return res
        return f"bash: {name}: command not found\n", 127

    def telemetry_result(self, line: str) -> Result | None:
        """:meth:`run_telemetry` as a command result (output ends with a newline), or None."""
        res = self.run_telemetry(line)
        if res is None:
            return None
        out, status = res
        return (out if not out or out.endswith("\n") else out + "\n"), status

    # ----- filesystem
    def path(self, p: str) -> str:
        if p.startswith("~"):
            p = self.home + p[1:]
        return posixpath.normpath(posixpath.join(self.cwd, p))

    def read(self, p: str) -> str | None:
        path = self.path(p)
        dyn = self.dev.extra.get("dynamic_files", {}).get(path)
        if dyn is not None:
            return str(dyn(self.dev))
        return self.dev.files.get(path)

    def isdir(self, p: str) -> bool:
        path = self.path(p).rstrip("/") + "/"
        return path == "//" or any(f.startswith(path) for f in self.dev.files) or path in self.dirs()

    def dirs(self) -> set[str]:
        d: set[str] = self.dev.extra.setdefault("dirs", set())
        return d

    def write(self, p: str, text: str, append: bool = False) -> str:
        """Write a file; returns an error text or ''. Writes under /etc and /sys are config lines."""
        path = self.path(p)
        if path == "/dev/null":
            return ""
        managed = path.startswith(MANAGED_PREFIXES)
        if managed:
            rx = self.dev.faults.reject
            if rx is not None and (rx.search(path) or rx.search(text)):
                return f"bash: {p}: Permission denied\n"
        if self.isdir(path) and path in self.dirs():
            return f"bash: {p}: Is a directory\n"
        if path.startswith("/sys/") and path not in self.dev.files:
            return f"bash: {p}: No such file or directory\n"
        new = (self.dev.files.get(path, "") + text) if append else text
        for rx_path, check in self.dev.extra.get("write_validators", []):
            if re.fullmatch(rx_path, path):
                err = check(self.dev, path, new)
                if err:
                    return f"bash: echo: write error: {err}\n"
        self.dev.files[path] = new
        if managed:
            self.config_applied()
            if self.drop:
                raise _Drop
        return ""

    def remove(self, p: str) -> bool:
        return self.dev.files.pop(self.path(p), None) is not None


# ---------------------------------------------------------------------- built-in commands
def _flags(argv: list[str]) -> tuple[set[str], list[str]]:
    flags: set[str] = set()
    args: list[str] = []
    for a in argv[1:]:
        if a.startswith("--") and len(a) > 2:
            flags.add(a)
        elif a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            flags.update("-" + c for c in a[1:])
        else:
            args.append(a)
    return flags, args


def _cat(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    _, files = _flags(argv)
    if not files or files == ["-"]:
        return stdin, 0
    out: list[str] = []
    for f in files:
        text = sh.read(f)
        if text is None:
            if sh.isdir(f):
                return "".join(out) + f"cat: {f}: Is a directory\n", 1
            return "".join(out) + f"cat: {f}: No such file or directory\n", 1
        out.append(text)
    return "".join(out), 0


def _echo(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    args = argv[1:]
    newline = True
    while args and args[0] in ("-n", "-e", "-ne", "-en"):
        if "n" in args[0]:
            newline = False
        args = args[1:]
    return " ".join(args) + ("\n" if newline else ""), 0


def _printf_cmd(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    if len(argv) < 2:
        return "printf: usage: printf format [arguments]\n", 2
    return _printf(argv[1], argv[2:]), 0


def _base64(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    flags, files = _flags(argv)
    data = stdin
    if files:
        text = sh.read(files[0])
        if text is None:
            return f"base64: {files[0]}: No such file or directory\n", 1
        data = text
    if "-d" in flags or "--decode" in flags:
        try:
            return base64.b64decode("".join(data.split()), validate=True).decode("utf-8", "replace"), 0
        except (binascii.Error, ValueError):
            return "base64: invalid input\n", 1
    enc = base64.b64encode(data.encode()).decode()
    return "\n".join(enc[i:i + 76] for i in range(0, len(enc), 76)) + "\n", 0


def _tee(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    flags, files = _flags(argv)
    for f in files:
        err = sh.write(f, stdin, append="-a" in flags)
        if err:
            return stdin + err.replace("bash:", "tee:"), 1
    return stdin, 0


def _cp(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    _, args = _flags(argv)
    if len(args) != 2:
        return "cp: missing file operand\n", 1
    text = sh.read(args[0])
    if text is None:
        return f"cp: cannot stat '{args[0]}': No such file or directory\n", 1
    dst = args[1]
    if sh.isdir(dst):
        dst = posixpath.join(sh.path(dst), posixpath.basename(args[0]))
    err = sh.write(dst, text)
    return (err.replace("bash:", "cp:"), 1) if err else ("", 0)


def _mv(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    out, status = _cp(sh, ["cp", *argv[1:]], stdin)
    if status == 0:
        _, args = _flags(argv)
        sh.remove(args[0])
    return out.replace("cp:", "mv:"), status


def _rm(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    flags, args = _flags(argv)
    status = 0
    out = []
    for a in args:
        if not sh.remove(a):
            prefix = sh.path(a).rstrip("/") + "/"
            victims = [f for f in sh.dev.files if f.startswith(prefix)] if "-r" in flags else []
            for f in victims:
                del sh.dev.files[f]
            if not victims and "-f" not in flags:
                out.append(f"rm: cannot remove '{a}': No such file or directory\n")
                status = 1
    return "".join(out), status


def _mkdir(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    _, args = _flags(argv)
    for a in args:
        sh.dirs().add(sh.path(a).rstrip("/") + "/")
    return "", 0


def _touch(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    _, args = _flags(argv)
    for a in args:
        if sh.read(a) is None:
            err = sh.write(a, "")
            if err:
                return err.replace("bash:", "touch:"), 1
    return "", 0


def _ls(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    flags, args = _flags(argv)
    out = []
    status = 0
    for a in args or ["."]:
        path = sh.path(a)
        if path in sh.dev.files:
            size = len(sh.dev.files[path].encode())
            out.append(f"-rw-r--r-- 1 root root {size:>6} Jan  1 00:00 {a}" if "-l" in flags else a)
            continue
        prefix = path.rstrip("/") + "/"
        names = sorted({f[len(prefix):].split("/")[0] for f in sh.dev.files if f.startswith(prefix)}
                       | {d[len(prefix):].split("/")[0] for d in sh.dirs()
                          if d.startswith(prefix) and d != prefix})
        if not names and prefix not in sh.dirs() and not sh.isdir(path):
            out.append(f"ls: cannot access '{a}': No such file or directory")
            status = 2
            continue
        if "-l" in flags:
            for nm in names:
                full = prefix + nm
                if full in sh.dev.files:
                    size = len(sh.dev.files[full].encode())
                    out.append(f"-rw-r--r-- 1 root root {size:>6} Jan  1 00:00 {nm}")
                else:
                    out.append(f"drwxr-xr-x 2 root root   4096 Jan  1 00:00 {nm}")
        else:
            out.extend(names)
    return "".join(x + "\n" for x in out), status


def _test(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            return "bash: [: missing `]'\n", 2
        args = args[:-1]
    neg = False
    if args and args[0] == "!":
        neg, args = True, args[1:]
    ok = False
    if len(args) == 2 and args[0] in ("-f", "-e", "-s", "-r", "-d"):
        if args[0] == "-d":
            ok = sh.isdir(args[1])
        else:
            text = sh.read(args[1])
            ok = (text is not None and (args[0] != "-s" or bool(text))) \
                or (args[0] == "-e" and sh.isdir(args[1]))
    elif len(args) == 3 and args[1] in ("=", "==", "!="):
        ok = (args[0] == args[2]) == (args[1] != "!=")
    elif len(args) == 2 and args[0] in ("-n", "-z"):
        ok = bool(args[1]) == (args[0] == "-n")
    elif len(args) == 1:
        ok = bool(args[0])
    return "", 0 if ok != neg else 1


def _hashsum(algo: str) -> Command:
    def run(sh: ShellSession, argv: list[str], stdin: str) -> Result:
        _, files = _flags(argv)
        out = []
        status = 0
        for f in files or ["-"]:
            text = stdin if f == "-" else sh.read(f)
            if text is None:
                out.append(f"{argv[0]}: {f}: No such file or directory\n")
                status = 1
                continue
            out.append(f"{hashlib.new(algo, text.encode()).hexdigest()}  {f}\n")
        return "".join(out), status
    return run


def _compare(prog: str, differ: Callable[[set[str], list[str], str, str], Result]) -> Command:
    """``cmp``/``diff`` of two files: 0 if equal, 2 if one is missing, else ``differ(flags, names, a, b)``."""

    def run(sh: ShellSession, argv: list[str], stdin: str) -> Result:
        flags, args = _flags(argv)
        if len(args) != 2:
            return f"{prog}: missing operand\n", 2
        a, b = sh.read(args[0]), sh.read(args[1])
        if a is None or b is None:
            return f"{prog}: {args[0] if a is None else args[1]}: No such file or directory\n", 2
        if a == b:
            return "", 0
        return differ(flags, args, a, b)

    return run


def _cmp_differ(flags: set[str], args: list[str], a: str, b: str) -> Result:
    return ("" if "-s" in flags else f"{args[0]} {args[1]} differ\n"), 1


def _diff_differ(flags: set[str], args: list[str], a: str, b: str) -> Result:
    lines = difflib.unified_diff(a.splitlines(True), b.splitlines(True), args[0], args[1])
    return "".join(x if x.endswith("\n") else x + "\n" for x in lines), 1


_cmp = _compare("cmp", _cmp_differ)
_diff = _compare("diff", _diff_differ)


def _grep(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    flags, args = _flags(argv)
    if not args:
        return "Usage: grep [OPTION]... PATTERNS [FILE]...\n", 2
    pattern, files = args[0], args[1:]
    text = stdin
    if files:
        got = sh.read(files[0])
        if got is None:
            return ("" if "-s" in flags else f"grep: {files[0]}: No such file or directory\n"), 2
        text = got
    try:
        rx = re.compile(pattern if ("-E" in flags or "-P" in flags) else pattern.replace(r"\|", "|"),
                        re.IGNORECASE if "-i" in flags else 0)
    except re.error:
        rx = re.compile(re.escape(pattern))
    hits = [ln for ln in text.splitlines() if bool(rx.search(ln)) != ("-v" in flags)]
    status = 0 if hits else 1
    if "-q" in flags:
        return "", status
    if "-c" in flags:
        return f"{len(hits)}\n", status
    return "".join(h + "\n" for h in hits), status


def _headtail(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    n = 10
    args = argv[1:]
    files = []
    k = 0
    while k < len(args):
        if args[k] == "-n" and k + 1 < len(args):
            n = int(args[k + 1])
            k += 2
            continue
        if re.fullmatch(r"-\d+", args[k]):
            n = int(args[k][1:])
        else:
            files.append(args[k])
        k += 1
    text = sh.read(files[0]) if files else stdin
    if text is None:
        return f"{argv[0]}: cannot open '{files[0]}'\n", 1
    lines = text.splitlines(True)
    return "".join(lines[:n] if argv[0] == "head" else lines[-n:] if n else []), 0


def _wc(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    flags, files = _flags(argv)
    text = sh.read(files[0]) if files else stdin
    if text is None:
        return f"wc: {files[0]}: No such file or directory\n", 1
    n = text.count("\n") if "-l" in flags else len(text.split())
    return f"{n}{' ' + files[0] if files else ''}\n", 0


def _cd(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    target = argv[1] if len(argv) > 1 else sh.home
    sh.cwd = sh.path(target)
    return "", 0


def _exit(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    if sh.root_levels > 0:
        sh.root_levels -= 1
        if sh.root_levels == 0:
            sh.cwd = sh.home
        return "", 0
    sh.closing = True
    return "", 0


def _simple(text: str | Callable[[ShellSession], str], status: int = 0) -> Command:
    def run(sh: ShellSession, argv: list[str], stdin: str) -> Result:
        out = text(sh) if callable(text) else text
        return out, status
    return run


def _uname(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    if "-a" in argv:
        return (f"Linux {sh.dev.name} 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 x86_64 "
                "GNU/Linux\n"), 0
    return "Linux\n", 0


def _systemctl(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    _, args = _flags(argv)
    if len(args) < 2:
        return "systemctl: too few arguments\n", 1
    action, unit = args[0], args[1].removesuffix(".service")
    services: dict[str, str] = sh.dev.extra.setdefault("services", {})
    if unit not in services:
        if action == "is-active":
            return "inactive\n", 3
        return f"Failed to {action} {unit}.service: Unit {unit}.service not found.\n", 5
    probe = sh.dev.extra.get("service_probes", {}).get(unit)
    if probe is not None:  # a real process behind the unit (ibsim backend): its state wins
        services[unit] = probe(sh.dev, services[unit])
    if action == "is-active":
        return services[unit] + "\n", 0 if services[unit] == "active" else 3
    if action == "is-failed":
        return services[unit] + "\n", 0 if services[unit] == "failed" else 1
    if action == "status":
        state = services[unit]
        sub = {"active": "active (running)",
               "failed": "failed (Result: exit-code)"}.get(state, "inactive (dead)")
        return (f"● {unit}.service\n     Loaded: loaded (/lib/systemd/system/{unit}.service; enabled)\n"
                f"     Active: {sub}\n"), 0 if state == "active" else 3
    hook = sh.dev.extra.get("service_actions", {}).get(unit)
    if action == "stop":
        if hook is not None:
            hook(sh.dev, "stop")
        services[unit] = "inactive"
        return "", 0
    if action in ("start", "restart", "reload", "try-restart", "reload-or-restart"):
        check = sh.dev.extra.get("service_checks", {}).get(unit)
        err = check(sh.dev) if check is not None else None
        if err:
            services[unit] = "failed"
            sh.dev.log.append(f"# {unit} failed to start: {err}")
            verb = "reload" if action == "reload" else "start"
            return (f"Job for {unit}.service failed because the control process exited with error code.\n"
                    f"See \"systemctl status {unit}.service\" and \"journalctl -xeu {unit}.service\" "
                    "for details.\n"
                    if verb == "start" else f"Job for {unit}.service failed.\n"), 1
        err = hook(sh.dev, "restart") if hook is not None else None
        if err:
            services[unit] = "failed"
            sh.dev.log.append(f"# {unit} failed to start: {err}")
            return (f"Job for {unit}.service failed because the control process exited with error code.\n"
                    f"See \"systemctl status {unit}.service\" for details.\n"), 1
        services[unit] = "active"
        sh.dev.extra.setdefault("service_restarts", {}).setdefault(unit, 0)
        sh.dev.extra["service_restarts"][unit] += 1
        return "", 0
    if action in ("enable", "disable", "daemon-reload"):
        return "", 0
    return f"Unknown command verb {action}.\n", 1


def _script(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    """``bash FILE [ARGS]`` / ``bash -c CMD``: run each simple line with this shell (no if/for blocks)."""
    args = [a for a in argv[1:] if a not in ("-e", "-x", "-eu", "-eux", "-u", "-o", "pipefail")]
    if args[:1] == ["-c"] and len(args) > 1:
        return sh.run_list(args[1])
    if not args:
        return "", 0
    text = sh.read(args[0])
    if text is None:
        return f"bash: {args[0]}: No such file or directory\n", 127
    saved_env = dict(sh.env)
    for i, a in enumerate(args[1:], 1):
        sh.env[str(i)] = a
    errexit = "-e" in argv or "-eu" in argv or "-eux" in argv
    out: list[str] = []
    status = 0
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        raw = lines[k].rstrip()
        k += 1
        while raw.endswith("\\") and k < len(lines):
            raw = raw[:-1] + " " + lines[k].strip()
            k += 1
        ln = raw.strip()
        if not ln or ln.startswith("#"):
            continue
        if re.match(r"set\s+-", ln):
            if "e" in ln.split()[1]:
                errexit = True
            continue
        if _BLOCK.match(ln):
            continue
        if "<<" in ln:
            m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", ln)
            body: list[str] = []
            if m:
                while k < len(lines) and lines[k].strip() != m.group(1):
                    body.append(lines[k])
                    k += 1
                k += 1
            o, status = sh.run_list(ln, "".join(b + "\n" for b in body))
        else:
            o, status = sh.run_list(ln)
        sh.env["?"] = str(status)
        out.append(o)
        if errexit and status != 0:
            break
    keep = {k2: v for k2, v in sh.env.items() if not k2.isdigit()}
    sh.env = {**saved_env, **{k2: v for k2, v in keep.items() if k2 not in saved_env or k2 == "?"}}
    return "".join(out), status


BUILTINS: dict[str, Command] = {
    "cat": _cat, "echo": _echo, "printf": _printf_cmd, "base64": _base64, "tee": _tee, "cp": _cp,
    "mv": _mv, "rm": _rm, "mkdir": _mkdir, "touch": _touch, "ls": _ls, "test": _test, "[": _test,
    "sha256sum": _hashsum("sha256"), "md5sum": _hashsum("md5"), "cmp": _cmp, "diff": _diff,
    "grep": _grep, "head": _headtail, "tail": _headtail, "wc": _wc, "cd": _cd, "exit": _exit,
    "logout": _exit, "true": _simple(""), "false": _simple("", 1), ":": _simple(""),
    "hostname": _simple(lambda sh: sh.dev.name + "\n"), "uname": _uname,
    "whoami": _simple(lambda sh: ("root" if sh.is_root else sh.user) + "\n"),
    "id": _simple(lambda sh: "0\n" if sh.is_root else "1000\n"),
    "pwd": _simple(lambda sh: sh.cwd + "\n"), "date": _simple(lambda sh: time.strftime("%c") + "\n"),
    "sleep": _simple(""), "sync": _simple(""), "chmod": _simple(""), "chown": _simple(""),
    "systemctl": _systemctl, "bash": _script, "sh": _script, "source": _script, ".": _script,
    "journalctl": _simple("-- No entries --\n"),
}


ShellSession.commands = BUILTINS


class ShellProfile(CliProfile):
    """Base for the Linux-based profiles: default files and services, extra commands."""

    name = "linux"
    session_class = ShellSession

    def load_baseline(self, dev: DeviceState, files: Mapping[str, str]) -> None:
        baseline.install_files(dev, files)

    def init_state(self, dev: DeviceState) -> None:
        dev.files.setdefault("/etc/hostname", dev.name + "\n")
        dev.files.setdefault("/etc/os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
        dev.extra.setdefault("services", {"ssh": "active"})
        dev.extra.setdefault("dirs", {"/tmp/", "/home/admin/", "/root/"})
