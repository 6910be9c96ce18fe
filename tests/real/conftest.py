"""Fixtures of the conformance suite: the real superpmi (tests/support/real.py)."""

from __future__ import annotations

import pytest

from ..support.real import Real, real_superpmi


@pytest.fixture(scope="session")
def real() -> Real:
    return real_superpmi()
