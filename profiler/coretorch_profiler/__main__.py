"""`python -m coretorch_profiler`: the same as the `coretorch-profile` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
