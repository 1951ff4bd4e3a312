"""A tcp:// or file:// init_method without the rank or world size a launcher was meant to provide is the
same launcher-env-missing as env://'s "environment variable RANK expected, but not set", in either scheme
and for either parameter. A malformed address (no port) is another mistake."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

MISSING = [
    "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
    "ValueError: Error initializing torch.distributed using tcp:// rendezvous: world size parameter missing",
    "ValueError: Error initializing torch.distributed using file:// rendezvous: rank parameter missing",
    "[1,6]<stderr>:   ValueError: Error initializing torch.distributed using file:// rendezvous: world size parameter"
    " missing",
]


@pytest.mark.parametrize("text", MISSING)
def test_a_rendezvous_without_the_launchers_rank_is_launcher_env_missing(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "launcher-env-missing"


def test_an_address_without_a_port_is_not_a_missing_launcher(rules):
    root, _shown = root_and_shown(
        rules, "ValueError: Error initializing torch.distributed using tcp:// rendezvous: port number missing")
    assert root != "launcher-env-missing"
