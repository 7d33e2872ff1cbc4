"""``python -m stmlog_tools`` runs the ``stmlog`` command."""

import sys

from stmlog_tools.cli import main

sys.exit(main())
