"""The hand-built dialogues are importable as `dialogues` from every test module here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
