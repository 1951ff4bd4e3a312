"""The corpus: real-message logs with the finding ids and root cause each must produce."""

from __future__ import annotations

import pytest
import yaml

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Facts
from troubleshooter.logs import LogAnalyzer, analyze_paths
from troubleshooter.logs.analyzer import open_log

from .conftest import corpus_cases

CASES = corpus_cases()


def _ids(facts, rules) -> list[str]:
    return sorted(key[4:] for key in facts if key.startswith("log.") and key[4:] in rules.findings)


def test_corpus_is_big_enough():
    healthy = [c for c in CASES if c[0].startswith("healthy")]
    assert len(CASES) >= 30 and len(healthy) >= 5


@pytest.mark.parametrize("name,log,expect", CASES, ids=[c[0] for c in CASES])
def test_corpus_log(name, log, expect, rules):
    expected = yaml.safe_load(expect.read_text())
    facts = analyze_paths([log], rules).facts
    assert _ids(facts, rules) == sorted(expected["ids"])
    assert (facts.get("log.root_cause") or {}).get("id") == expected["root_cause"]


@pytest.mark.parametrize("name,log,expect", [c for c in CASES if c[0].startswith("healthy")],
                         ids=[c[0] for c in CASES if c[0].startswith("healthy")])
def test_healthy_logs_raise_nothing_serious(name, log, expect, rules):
    facts = analyze_paths([log], rules).facts
    findings = evaluate(rules, Observations(Facts.from_dict(facts, "logs")))
    assert [f.id for f in findings if f.severity in ("error", "warning")] == []


@pytest.mark.parametrize("name,log,expect", CASES, ids=[c[0] for c in CASES])
def test_line_feed_matches_file_read(name, log, expect, rules):
    """The streaming API (feed one line at a time) reaches the same facts as the chunked reader."""
    whole = analyze_paths([log], rules).facts
    analyzer = LogAnalyzer(rules)
    with open_log(str(log)) as stream:
        for raw in stream:
            analyzer.feed(raw.decode("utf-8", "replace"), path=str(log))
    assert analyzer.facts() == whole


def test_small_chunks_give_the_same_answer(rules, monkeypatch):
    """Lines cut by chunk boundaries are reassembled."""
    import troubleshooter.logs.analyzer as analyzer_module

    logs = [log for _, log, _ in CASES[:12]]
    expected = analyze_paths(logs, rules).facts
    monkeypatch.setattr(analyzer_module, "CHUNK", 97)
    assert analyze_paths(logs, rules).facts == expected


def test_launcher_root_cause_beats_the_echo_on_other_ranks(rules):
    log = next(c[1] for c in CASES if c[0] == "rank1_exception_peers_echo")
    facts = analyze_paths([log], rules).facts
    findings = evaluate(rules, Observations(Facts.from_dict(facts, "logs")))
    assert [f.id for f in findings] == ["rank-crashed", "nccl-error"]
    assert findings[0].ranks == [1] and "shard 1 is corrupt" in findings[0].title
    assert findings[1].explained_by == ["rank-crashed"]
