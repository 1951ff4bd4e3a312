"""Bulk fact scans that skip lines read before give the facts a full ``findall`` gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from troubleshooter.logs import factscan
from troubleshooter.logs.factscan import FactScan
from troubleshooter.logs.prefilter import leading_literal, re2
from troubleshooter.logs.signatures import compile_signatures

pytestmark = pytest.mark.skipif(re2 is None, reason="google-re2 not installed")

VIA = r"via (?P<value>(?:P2P|SHM|NET)(?:/\w+)?)"
PATTERNS = {  # pattern -> the pieces its test lines are made of
    VIA: ["via ", "P2P", "SHM", "NET", "/IPC", "/x", " ", "v", "\u2603"],
    r"aa(?P<value>a?b+)": ["a", "aa", "b", " "],  # the literal overlaps itself
    r"NCCL WARN (?P<value>.{1,12})": ["NCCL WARN ", "x", "NCCL", " ", "\r"],
    r"x(?P<value>\d+)y": ["x", "1", "2", "y", " "],
    r"NET/Socket : Using \[\d+\](?P<value>[\w.-]+):": ["NET/Socket : Using [", "0]", "eth0", ":", "1", "."],
}


def _scan(pattern: str, engine: str = "re2", collect: str = "unique") -> FactScan:
    sig = compile_signatures([{"id": "f", "pattern": pattern, "note": "n", "fact": "log.f", "collect": collect}])[0]
    return FactScan(sig, engine)


def _collected(scan: FactScan, chunks: list[bytes]) -> list[bytes]:
    """What the analyzer keeps: each distinct value once, in the order the chunks return them."""
    return list(dict.fromkeys(value for chunk in chunks for value in scan.values(chunk)))


@st.composite
def _logs(draw):
    pattern = draw(st.sampled_from(sorted(PATTERNS)))
    line = st.lists(st.sampled_from(PATTERNS[pattern]), max_size=8).map("".join)
    return pattern, draw(st.lists(line, min_size=1, max_size=40))


@settings(max_examples=300, deadline=None)
@given(log=_logs(), repeat=st.integers(1, 20), cuts=st.lists(st.integers(0, 800), max_size=3), small=st.booleans())
def test_the_values_are_a_full_findalls_whatever_the_chunks_and_repeats(log, repeat, cuts, small):
    pattern, lines = log
    text = [line.encode() for line in lines * repeat]
    bounds = sorted({min(cut, len(text)) for cut in cuts} | {0, len(text)})
    chunks = [b"".join(line + b"\n" for line in text[a:b]) for a, b in zip(bounds, bounds[1:])]
    chunks[-1] = chunks[-1][:-1]  # the last line of a log may lack its newline
    with pytest.MonkeyPatch.context() as patch:
        if small:  # every path: recompiles after one stale line, a full set of rests, the findall of a chunk's rest
            patch.setattr(factscan, "STALE", 1)
            patch.setattr(factscan, "MAX_KNOWN", 3)
            patch.setattr(factscan, "MAX_NEW_LINES", 4)
            patch.setattr(factscan, "MAX_REST", 6)
        scan = _scan(pattern)
        want = list(dict.fromkeys(scan.sig.bregex.findall(b"\n".join(text))))
        assert _collected(scan, [bytearray(chunk) for chunk in chunks]) == want


def test_a_rest_is_remembered_only_once_its_own_values_were_returned():
    """In ``aaab`` the literal ``aa`` occurs twice: the line gives ``ab``, its second occurrence alone
    (the whole of a line ``aab``) gives ``b``."""
    scan = _scan(r"aa(?P<value>a?b+)")
    chunks = [b"aaab\n" * 40, b"aaab\n" * 40 + b"aab\n"]
    assert _collected(scan, chunks) == [b"ab", b"b"]


class _Counting:
    """A compiled pattern that counts the ``findall`` calls made on it."""

    def __init__(self, regex):
        self.regex, self.calls = regex, 0

    def findall(self, *args):
        self.calls += 1
        return self.regex.findall(*args)


def test_repeated_lines_are_read_once_not_per_repeat():
    scan = _scan(VIA)
    counting = scan.sig.bregex = _Counting(scan.sig.bregex)
    block = b"".join(b"[rank%d]:h:1:2 [0] NCCL INFO Channel %02d/0 : 0[0] -> 1[1] via P2P/IPC/read\n" % (r, c)
                     for r in range(16) for c in range(16))
    chunks = [block * 40 + b"step 1 loss 0.5\n" for _ in range(3)]
    chunks[2] += b"x NCCL INFO Channel 00/0 : 9[1] -> 0[0] via NET/Socket/0\n"
    assert _collected(scan, chunks) == [b"P2P/IPC", b"NET/Socket"]
    assert counting.calls <= factscan.STALE + 4  # ~30,000 lines with the literal


@pytest.mark.parametrize("engine,collect,pattern", [("stdlib", "unique", VIA), ("re2", "last", VIA),
                                                    ("re2", "unique", r"Process index: (?P<value>\d+)\b")])
def test_other_scans_are_the_plain_bulk_scan(engine, collect, pattern):
    scan = _scan(pattern, engine, collect)
    data = b"via SHM/x\nProcess index: 3\nvia NET\nvia SHM/x\nProcess index: 4\n"
    assert scan._literal == b"" and scan.values(data) == scan.sig.bulk_values(data)


@pytest.mark.parametrize("pattern,literal", [(r"NCCL version (?P<value>\d+)", "NCCL version "), (r"ab?c", "a"),
                                             (r"(?:ab)c", "abc"), (r"(?i)abc", ""), (r"\[x\]", "[x]"), (r"a|b", "")])
def test_the_leading_literal_starts_every_match(pattern, literal):
    assert leading_literal(pattern) == literal
