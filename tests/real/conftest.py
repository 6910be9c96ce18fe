"""Fixtures of the conformance suite (tests/support/real.py): `reference`, the real superpmi as
data (collections and transcripts; the data half, always run), and `real`, a real build (the live
half, marker `live`: run only where SPMI_DBG_REAL_SUPERPMI names one)."""

from __future__ import annotations

import pytest

from ..support.real import Real, Reference, real_superpmi
from ..support.real import reference as located_reference


@pytest.fixture(scope="session")
def real() -> Real:
    return real_superpmi()


@pytest.fixture(scope="session")
def reference() -> Reference:
    return located_reference()
