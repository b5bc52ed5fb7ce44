"""bench-workers' tests: the deferred test domain (deferred_domain.py) is imported by name."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
