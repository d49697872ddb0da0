"""The mock shell's word splitting: the fast path (lines without quotes or backslashes, such as a
collector's batched 4-5 kB line) splits as Python's ``shlex`` does, which the mock used for every line
before and still uses for quoted ones."""

from __future__ import annotations

import random
import re
import shlex

from fabriccfg.mock.shell import split_list, tokenize


def _shlex_words(line: str) -> list[str]:
    line = re.sub(r"\s2>&1", "", line)
    line = re.sub(r"\s2>\s*/dev/null", "", line)
    lex = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    lex.commenters = ""
    return list(lex)


def test_unquoted_lines_split_as_shlex_does() -> None:
    rng = random.Random(2)
    pieces = [*"ab-_./~*?=()#%$:,@{}[]!", " ", "  ", "\t", "\n", "\r", ";", "&&", "||", "|", "&", ">", ">>",
              "<", "2>&1", " 2>/dev/null", "\u2028", "\x0b", "\x0c", "é", "nv show interface swp1 qos buffer"]
    checked = 0
    for _ in range(20_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 15)))
        assert tokenize(line) == _shlex_words(line), repr(line)
        checked += 1
    assert checked == 20_000


def test_quoted_lines_still_split_as_shlex_does() -> None:
    for line in ("echo 'a b' \"c;d\" e\\ f", "printf '%s\\n' x | grep -c x"):
        assert tokenize(line) == _shlex_words(line)


def test_lists_split_on_operators_outside_quotes() -> None:
    assert split_list("a; b && c || d") == [(";", "a"), (";", " b "), ("&&", " c "), ("||", " d")]
    assert split_list("a|||b") == [(";", "a"), ("||", "|b")]
    assert split_list("echo 'x;y' ; z") == [(";", "echo 'x;y' "), (";", " z")]
    assert split_list("") == [(";", "")]
