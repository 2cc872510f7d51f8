"""``python -m annotate_app.cli``: the same as the ``qrelforge`` command."""

from annotate_app.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
