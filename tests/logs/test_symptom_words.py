"""The symptom wordings live in rules/symptoms.yaml: validated with file:line, overlaid, and read by the scan."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.logs.helpers import analyse
from troubleshooter.core.errors import RuleFileError
from troubleshooter.core.paths import rules_dir
from troubleshooter.core.ruleset import load_rules
from troubleshooter.logs.crossrank import named_ranks
from troubleshooter.logs.symptoms import HEAD, TAIL, SymptomScanner
from troubleshooter.logs.symptomwords import WORDS_FILE, shipped_words, words_of


def _overlay(tmp_path: Path, text: str) -> Path:
    (tmp_path / WORDS_FILE).write_text(text)
    return tmp_path


def _problems(tmp_path: Path, text: str) -> list[tuple[int | None, str]]:
    with pytest.raises(RuleFileError) as err:
        load_rules([_overlay(tmp_path, text)])
    return [(issue.line, issue.message) for issue in err.value.issues if issue.path.endswith(WORDS_FILE)]


def test_the_shipped_wordings_load_whole():
    words = shipped_words()
    assert words.loss_line.search(b"iter 3 loss: 0.512\n")
    assert not words.loss_line.search(b"[rank1]: iter 3 loss: 0.512\n")  # labelled: a per-rank log by design
    assert words.position.search(b" 45%|####  | 450/1000 [01:02<01:10, 7.1it/s]")["total"] == b"1000"
    assert named_ranks("1, 3", words) == [1, 3] and words.timeout_finding in load_rules().findings


@pytest.mark.parametrize("text,line,needle", [
    ("progress_words: epoch\n", 1, "non-empty list of strings"),
    ("doc: x\nmask:\n  - '\\d+'\n  - '(unclosed'\n", 4, "mask[1] does not compile"),
    ("los:\n  - 'loss'\n", 1, "unknown key 'los'"),
    ("rate:\n  - '(?P<value>\\d+) it/s'\n", 1, "must name the groups"),
    ("stuck_ranks:\n  finding: collective-timeout\n  naming_vars: [x]\n  rank_list: '\\d+'\n", 4, "exactly one group"),
    ("stuck_ranks:\n  finding: no-such-finding\n  naming_vars: [x]\n  rank_list: '(\\d+)'\n", 2, "unknown finding id"),
    ("mask:\n  - '(a+)+$'\n", 2, "backtrack"),
    ("line_labels: [\n", 2, "invalid YAML"),
    ("terminal_widths: [80, wide]\n", 1, "non-empty list of whole numbers"),
    ("banner_end:\n  - '(unclosed'\n", 2, "banner_end[0] does not compile"),
    ("line_ends: []\n", 1, "non-empty list of strings"),
    ("rank_exits:\n  - launcher: x\n    anchors: [exited]\n    pattern: 'exited (?P<status>\\d+)'\n"
     "    examples: ['exited 3']\n", 4, "rank_exits[0].pattern names unknown group(s) status"),
    ("rank_exits:\n  - launcher: x\n    anchors: [exited]\n    pattern: 'exited (?P<code>\\d+)'\n"
     "    examples: ['quit 3']\n", 5, "rank_exits[0].examples[0] is not matched"),
    ("rank_exits:\n  - launcher: x\n    anchors: [gone]\n    pattern: 'exited (?P<code>\\d+)'\n"
     "    examples: ['exited 3']\n", 5, "holds none of the anchors"),
    ("rank_exits:\n  - launcher: x\n    pattern: 'exited'\n", 2, "rank_exits[0] should give launcher"),
    ("signal_words: {Killed: nine}\n", 1, "'signal_words' should map"),
    ("swallowed_exception:\n  - '(unclosed'\n", 2, "swallowed_exception[0] does not compile"),
])
def test_a_bad_wording_is_an_error_at_its_line(tmp_path, text, line, needle):
    problems = _problems(tmp_path, text)
    assert any(at == line and needle in message for at, message in problems), problems


def test_an_overlay_replaces_the_keys_it_gives(tmp_path):
    rules = load_rules([_overlay(tmp_path, "progress_words: [epoch, step, iter, iteration, batch, round]\n")])
    words = words_of(rules)
    assert words is not shipped_words() and words.progress_line.search(b"round 3 of 9\n")
    assert words.loss_line.pattern == shipped_words().loss_line.pattern


def test_the_paste_repair_reads_its_wordings_from_the_rules(tmp_path):
    """``terminal_widths`` (logs/framing.py): one row cut at a width listed there is a terminal's hard wrap."""
    from troubleshooter.logs.framing import repair

    row = "RuntimeError: the store at the master address could not be reached within the timeout of 3"  # 90 columns
    text = ("epoch 1 started\n" + row + "\nR 30 minutes\nepoch 2 started\n").encode()
    assert repair(text, True, shipped_words()) == text  # 90: no terminal's width
    words = words_of(load_rules([_overlay(tmp_path, "terminal_widths: [90]\n")]))
    assert repair(text, True, words).decode().splitlines()[1] == row + "R 30 minutes"


def test_a_base_without_some_wordings_is_reported(tmp_path):
    base = tmp_path / "rules"
    shutil.copytree(rules_dir(), base)
    text = (base / WORDS_FILE).read_text()
    (base / WORDS_FILE).write_text(text[:text.index("\nmask:")] + "\n")
    with pytest.raises(RuleFileError, match="missing wording key"):
        load_rules(base=base)


def test_symptoms_follow_the_overlay_wordings(tmp_path):
    """Knowledge, not code: a new progress word in the YAML makes duplicated progress lines count."""
    text = "".join(f"round {i} of 50 done\n" * 4 for i in range(6))
    plain = analyse(load_rules(), text)
    assert "log.progress_line_copies" not in plain
    rules = load_rules([_overlay(tmp_path, "progress_words: [epoch, step, iter, iteration, batch, round]\n")])
    assert analyse(rules, text)["log.progress_line_copies"] == 4


def test_the_symptom_windows_do_not_grow_with_the_log():
    scanner = SymptomScanner()
    line = b"step 10/100 loss 0.5 | 12.0 it/s\n"
    for _ in range(200):
        scanner.observe("x.log", line * 4000)
    assert sum(map(len, scanner.windows())) <= HEAD + TAIL


def test_rank_exits_follow_the_overlay_wordings(tmp_path):
    """Knowledge, not code: a launcher's exit report worded in the YAML is a failed rank, its signal word decoded."""
    text = "epoch 1\nflux: task 3 (host gpu-7) died: Bus error\n"
    assert "log.failures" not in analyse(load_rules(), text)
    exits = ("rank_exits:\n  - launcher: flux\n    anchors: ['died: ']\n"
             "    pattern: 'flux: task (?P<rank>\\d+) \\(host (?P<host>[\\w.-]+)\\) died: (?P<signame>[A-Z][a-z ]+)'\n"
             "    examples: ['flux: task 0 (host n1) died: Killed']\n")
    rules = load_rules([_overlay(tmp_path, exits + "signal_words: {Killed: 9, Bus error: 7}\n")])
    failure = analyse(rules, text)["log.failures"][0]
    assert (failure["launcher"], failure["rank"], failure["host"], failure["signal"]) == ("flux", 3, "gpu-7", "SIGBUS")


def test_an_exception_python_swallowed_is_no_failure(tmp_path):
    """``swallowed_exception``: the traceback after such a report ended nothing, so the run did not fail of it."""
    text = ("Exception ignored in: <function Loader.__del__ at 0x7f>\nTraceback (most recent call last):\n"
            '  File "loader.py", line 3, in __del__\nAttributeError: "NoneType" object has no attribute "close"\n')
    assert "log.root_cause" not in analyse(load_rules(), text)
    rules = load_rules([_overlay(tmp_path, "swallowed_exception: ['Exception raised in']\n")])
    assert analyse(rules, text)["log.root_cause"]["where"] == "loader.py:3"
