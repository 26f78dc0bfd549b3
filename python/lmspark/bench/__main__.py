"""``python -m lmspark.bench``: see ``lmspark/bench/run.py``."""

import sys

from .run import main

sys.exit(main())
