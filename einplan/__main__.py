"""``python -m einplan explain ... | demo | config`` -> einplan.cli.main()."""
import sys

from .cli import main

sys.exit(main())
