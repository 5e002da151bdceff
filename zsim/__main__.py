"""``python -m zsim`` runs the command line."""

from zsim.cli import main

raise SystemExit(main())
