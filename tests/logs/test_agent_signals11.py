"""The torchrun agent's own death signal, in the spelling of every Python it runs under.

The elastic agent logs the signal it received with ``%s``: Python 3.11+ prints an IntEnum as its number
("Received 1 death signal"), earlier versions as its name ("Received Signals.SIGHUP death signal"); the
SignalException that follows formats it as a number in both. SIGHUP is the terminal or ssh session
closing under the job, SIGTERM something outside stopping it (a stated failure earlier in the log stays
the cause); SIGINT is a user's Ctrl-C, neither."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

AGENT = "W0616 00:37:22.830000 4015698 torch/distributed/elastic/agent/server/api.py:719] "
EXC = "torch.distributed.elastic.multiprocessing.api.SignalException: Process 724727 got signal: "

HANGUPS = [
    "Received Signals.SIGHUP death signal, shutting down workers\n" + EXC + "1",
    AGENT + "Received Signals.SIGHUP death signal, shutting down workers",
    AGENT + "Received 1 death signal, shutting down workers",
]


@pytest.mark.parametrize("text", HANGUPS)
def test_the_agent_hung_up_is_terminal_hangup(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("terminal-hangup", ["terminal-hangup"])


TERMINATIONS = [
    AGENT + "Received Signals.SIGTERM death signal, shutting down workers\n"
    "W0616 00:37:22.831000 4015698 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 4015700"
    " closing signal SIGTERM",
    AGENT + "Received 15 death signal, shutting down workers\n" + EXC + "15",
]


@pytest.mark.parametrize("text", TERMINATIONS)
def test_the_agent_stopped_from_outside_is_terminated_externally(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("terminated-externally", ["terminated-externally"])


def test_a_failure_before_the_agents_sigterm_stays_the_cause(rules):
    text = ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total"
            " capacity of 79.15 GiB of which 1.10 GiB is free.\n"
            + AGENT + "Received Signals.SIGTERM death signal, shutting down workers")
    root, _shown = root_and_shown(rules, text)
    assert root == "out-of-memory"


def test_a_ctrl_c_to_the_agent_is_neither(rules):
    root, _shown = root_and_shown(rules, AGENT + "Received Signals.SIGINT death signal, shutting down workers")
    assert root not in ("terminal-hangup", "terminated-externally")
