"""``python -m annotate_app.cli``: the same as the ``qrelforge`` command."""

from annotate_app.cli import main

raise SystemExit(main())
