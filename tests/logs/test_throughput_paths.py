"""The analyzer's fast paths give the same answers as the plain line-by-line path."""

from __future__ import annotations

import io
import json

import pytest

from tests.logs.conftest import corpus_cases
from troubleshooter.logs import LogAnalyzer
from troubleshooter.logs.lineprefix import may_carry_timestamp, split_prefix
from troubleshooter.logs.prefilter import context_free, may_match_newline, required_literals


@pytest.mark.parametrize("pattern,free", [
    (r"Got completion (?:from peer \S+ )?with (?P<err>\d+)", True), (r"[ab]+c{2,}|x", True), (r"(?i)abc", True),
    (r"^abc", False), (r"abc$", False), (r"a\bb", False), (r"(?:x|y\B)z", False), (r"a(?=b)", False),
    (r"a(?!b)", False), (r"(?<=a)b", False), (r"(b)\1", False), (r"(?:a\b)++", False), (r"(?>a\b)", False),
    (r"(?P<x>a)(?(x)b|c)", False), (r"(unclosed", False),
])
def test_context_free_patterns_depend_only_on_what_they_consume(pattern, free):
    assert context_free(pattern) is free


@pytest.mark.parametrize("line", [
    "[rank3]:[E1121 23:15:30.123456 12345 ProcessGroupNCCL.cpp:1234] boom", "2024-11-21T23:15:30.5Z x",
    "[2024-11-21 23:15:30,123] torch.distributed.run: [WARNING] w", "worker-1: [rank9]:[W1121 01:02:03] z",
    "[rank0]:gpu-node-0:40000:40000 [0] NCCL INFO NET/IB : No device found.", "12:30:01 a clock alone",
    "RuntimeError: no prefix",
])
def test_a_line_without_a_clock_carries_no_timestamp(line):
    if split_prefix(line, 2024).timestamp is not None:
        assert may_carry_timestamp(line)
    assert may_carry_timestamp("[rank0]:gpu-node-0:40000:40000 x") is False


def _facts(analyzer: LogAnalyzer) -> str:
    return json.dumps(analyzer.facts(), sort_keys=True, default=str)


def _both_paths(rules, text: str) -> tuple[str, str]:
    chunked = LogAnalyzer(rules)
    chunked.feed_file(io.BytesIO(text.encode()), "x.log")
    streamed = LogAnalyzer(rules)
    for line in text.splitlines(keepends=True):
        streamed.feed(line, "x.log")
    return _facts(chunked), _facts(streamed)


def test_a_false_candidate_still_dates_the_hits_after_it(rules):
    """A line holding a signature's anchor but not its message is skipped early, unless it carries a
    timestamp: later hits without one of their own are ordered by it."""
    analyzer = LogAnalyzer(rules)
    sig = next(s for s in analyzer.signatures if s.context_free and s.finding and s.anchors)
    false_candidate = f"{sig.anchors[0]} \u2603"
    assert not sig.regex.search(false_candidate)
    text = (f"[2024-11-21 23:15:30,500] {false_candidate}\n" + f"{false_candidate}\n" * 3 +
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    chunked, streamed = _both_paths(rules, text)
    assert chunked == streamed
    hit = json.loads(chunked)["log.out-of-memory"][0]
    assert hit["order"] == pytest.approx(1732231530.5)


@pytest.mark.parametrize("name,log,expect", corpus_cases(), ids=[c[0] for c in corpus_cases()])
def test_chunked_and_line_by_line_paths_agree(rules, name, log, expect):
    if log.suffix == ".gz":
        pytest.skip("compressed log: the chunked path alone reads it")
    chunked, streamed = _both_paths(rules, log.read_bytes().decode("utf-8", "replace"))
    assert chunked == streamed


@pytest.mark.parametrize("pattern,newline", [
    (r"abc", False), (r"a\nb", True), (r"[^x]", True), (r"[^x\n]", False), (r"\s", True), (r"\S+", False),
    (r"\D", True), (r"\w\d", False), (r".", False), (r"(?s).", True), (r"(?s:.)", True), (r"x(?-s:.)", False),
    (r"[^\S]", True), (r"(?:a|[\x00-\x20])", True), (r"a{1,3}\W", True), (r"(?=\n)a", False),
])
def test_patterns_that_may_match_a_newline_are_told_apart(pattern, newline):
    assert may_match_newline(pattern) is newline


@pytest.mark.parametrize("collect", ["first", "last", "unique"])
def test_bulk_fact_values_are_what_findall_keeps(rules, collect):
    """``last`` is read backwards from the end of the chunk; the answer is the full scan's."""
    sig = next(s for s in LogAnalyzer(rules).signatures if s.fact and s.collect == collect and s.context_free)
    literal = sig.anchors[0]
    lines = [f"[rank{r}]: {literal} nothing" for r in range(3)]
    for example in (sig_example for sig_example in _examples(rules, sig.id)):
        lines.insert(1, example)
        lines.append(f"[rank9]: {example} {literal}")
    data = ("\n".join(lines) + "\n").encode()
    found = sig.bregex.findall(data)
    want = found[:1] if collect == "first" else found[-1:] if collect == "last" else list(dict.fromkeys(found))
    assert found and sig.bulk_values(data) == want
    assert sig.bulk_values(b"no match here\n") == []


def _examples(rules, sig_id: str) -> list[str]:
    return next(raw["examples"] for raw in rules.signatures if raw["id"] == sig_id)


def test_a_fact_pattern_that_may_match_a_newline_is_rejected():
    from troubleshooter.core.yamlspan import load_text
    from troubleshooter.logs.signatures import validate_signature_file
    doc = load_text("group: g\nsignatures:\n- id: f\n  pattern: 'Using (?P<value>[a-z]+\\n[a-z]+)'\n  note: n\n"
                    "  fact: log.f\n")
    assert [line for line, message, _, _ in validate_signature_file(doc) if "across lines" in message] == [4]


@pytest.mark.parametrize("engine", ["re2", "stdlib"])
def test_presence_anchors_first_seen_past_the_head_stop_being_reported_line_by_line(engine, monkeypatch):
    from troubleshooter.logs import prefilter as pf
    if engine == "re2" and pf.re2 is None:
        pytest.skip("google-re2 not installed")
    filt = pf.Prefilter({"Watchdog caught": [1]}, {"NCCL INFO Using network ": [7]}, engine)
    yielded = []
    scanner_class = type(filt._scanner)
    original = scanner_class.find

    def counting(self, chunk, pos, end):
        for item in original(self, chunk, pos, end):
            yielded.append(item)
            yield item

    monkeypatch.setattr(scanner_class, "find", counting)
    lines = [b"step %d loss 0.5" % i for i in range(20000)] + [b"x NCCL INFO Using network Socket"] * 20000
    lines.insert(30000, b"[rank1]: Watchdog caught collective operation timeout")
    chunk = b"\n".join(lines) + b"\n"
    found, present = filt.candidates(chunk)
    assert present == {7}
    assert list(found.values()) == [{1}] and chunk[list(found)[0]:].startswith(b"[rank1]: Watchdog")
    assert len(yielded) < 200  # not one per line: the anchor is dropped after the window it was seen in


@pytest.mark.parametrize("pattern,literals", [
    (r"(?i:watchdog) caught", [" caught"]), (r"(?i:out of memory)", None), (r"(?i:foo|barr) bazz", [" bazz"]),
    (r"EADDR(IN)USE", ["EADDRINUSE"]),
])
def test_a_case_insensitive_group_gives_no_anchor(pattern, literals):
    """``(?i:...)`` matches any case: its text cannot be a (case-sensitive) anchor."""
    assert required_literals(pattern) == literals


@pytest.mark.parametrize("extra", ["", "[2024-11-21 23:15:30,500] {false}\n", "{example}\n"])
def test_many_false_candidates_are_skipped_in_bulk_unless_one_of_them_counts(rules, extra):
    """40 lines holding a signature's anchor but not its message are dropped by one joined search;
    a clock or a real match among them sends the lines down the line-by-line path."""
    analyzer = LogAnalyzer(rules)
    sig = next(s for s in analyzer.signatures if s.context_free and s.finding and s.anchors
               and not s.regex.search(f"{s.anchors[0]} \u2603") and s.anchors[0].isascii())
    example = _examples(rules, sig.id)[0]
    false = f"{sig.anchors[0]} \u2603"
    lines = [f"[rank{r % 8}]: {false}\n" for r in range(40)]
    lines.insert(20, extra.format(false=false, example=example))
    text = "".join(lines) + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    chunked, streamed = _both_paths(rules, text)
    assert chunked == streamed
    data = text.encode()
    candidates, _ = analyzer.prefilter.scan(data)
    inert = analyzer._inert(data, candidates)
    if not extra:
        assert len(inert) == 40
    elif extra.startswith("[2024"):
        assert not inert
        assert json.loads(chunked)["log.out-of-memory"][0]["order"] == pytest.approx(1732231530.5)
    else:
        assert data.index(example.encode()) not in inert and sig.id in chunked


def test_unique_fact_values_are_read_between_the_first_and_last_anchor(rules):
    sig = next(s for s in LogAnalyzer(rules).signatures
               if s.fact and s.collect == "unique" and s.context_free and len(s.anchors) == 1)
    examples = _examples(rules, sig.id)
    data = ("step 1 loss 0.5\n" * 50 + "\n".join(examples) + "\n" + "step 2 loss 0.4\n" * 50
            + "\n".join(reversed(examples)) + "\nstep 3\n").encode()
    assert sig.bulk_values(data) == list(dict.fromkeys(sig.bregex.findall(data))) != []
    assert sig.bulk_values(b"step 1 loss 0.5\n" * 20) == []


def test_small_reads_into_the_reused_buffer_give_the_facts_of_one_read(rules, monkeypatch):
    """Blocks much smaller than a line, a line past ``MAX_LINE`` (read in pieces, counted once), colours
    in a later block and a last line without its newline: the facts of one big read."""
    import troubleshooter.logs.analyzer as analyzer_module
    text = ("step 1 loss 0.5\n" * 30 + "\x1b[31m[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
            "allocate 2.00 GiB\x1b[0m\n" + "y" * 5000 + "\n" + "z" * 700 + "\n[rank0]: RuntimeError: Expected to "
            "have finished reduction in the prior iteration before starting a new one.\n" + "w" * 300)
    whole = LogAnalyzer(rules)
    whole.feed_file(io.BytesIO(text.encode()), "x.log")
    monkeypatch.setattr(analyzer_module, "CHUNK", 256)
    monkeypatch.setattr(analyzer_module, "MAX_LINE", 1024)
    small = LogAnalyzer(rules)
    small.feed_file(io.BytesIO(text.encode()), "x.log")
    facts = json.loads(_facts(small))
    assert _facts(small) == _facts(whole)
    assert facts["log.lines"] == 35 and {"log.out-of-memory", "log.unused-parameters-error"} <= set(facts)
