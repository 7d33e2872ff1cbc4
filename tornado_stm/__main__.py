"""``python -m tornado_stm`` is the ``tornado-stm`` command."""

from tornado_stm.cli import main

raise SystemExit(main())
