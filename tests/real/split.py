"""The dev/test split of the real corpora: fixed by a hash of each item's source URL.

Items from one public report always fall in the same split, so a thread never leaks
between the two. About 35% of sources land in **test** (the issue asks for at least 30%).
Tune only against ``dev``; ``test`` figures are reported, never looked at while tuning.
"""

from __future__ import annotations

import hashlib

TEST_PERCENT = 35


def split_of(source_url: str) -> str:
    """Return ``"test"`` or ``"dev"`` for a source URL (case and surrounding space ignored)."""
    digest = hashlib.sha256(source_url.strip().lower().encode("utf-8")).hexdigest()
    return "test" if int(digest[:8], 16) % 100 < TEST_PERCENT else "dev"
