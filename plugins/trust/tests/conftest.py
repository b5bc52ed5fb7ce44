"""bench-trust's tests: the labelled set of scripted conversations (attribution_cases.py) is imported by name."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
