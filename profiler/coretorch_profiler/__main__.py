"""``python -m coretorch_profiler ...`` is ``coretorch-profile ...``."""
import sys

from .cli import main

sys.exit(main())
