"""Print the scanner's precision and recall per finding id over tests/scan/corpus (Markdown table)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.scan.quality import format_table, measure  # noqa: E402


if __name__ == "__main__":
    print(format_table(measure()))
