"""No import circle inside any distribution of the workspace (imports under TYPE_CHECKING and inside functions count)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_kernel.testing import check_no_import_cycles

REPO = Path(__file__).resolve().parents[1]
PACKAGES = sorted(
    p.parent for group in ("plugins", "contrib_domains", "contrib_metrics", "contrib_judges") for p in REPO.glob(f"{group}/*/bench_*/__init__.py")
)


def test_every_distribution_is_found() -> None:
    assert len(PACKAGES) >= 25 and all(p.name.startswith("bench_") for p in PACKAGES)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_import_circle(package: Path) -> None:
    check_no_import_cycles(package)
