"""`python -m replaylab` is the same as the `replaylab` command."""

from replaylab.cli import main

raise SystemExit(main())
