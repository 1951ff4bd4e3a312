"""``python -m troubleshooter`` runs the command line."""

import sys

from troubleshooter.cli import main

sys.exit(main())
