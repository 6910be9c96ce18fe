"""The `unit` marker holds what it says: a test marked unit cannot start a process (the guard in
conftest.py), so `pytest -m unit` stays the part of the suite that runs in seconds."""

from __future__ import annotations

import os
import subprocess

import pytest

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "start",
    [
        lambda: subprocess.run(["true"], check=False),
        lambda: os.posix_spawn("/bin/true", ["true"], {}),
        lambda: os.system("true"),
        lambda: os.fork(),
    ],
    ids=["subprocess", "posix_spawn", "system", "fork"],
)
def test_a_unit_test_cannot_start_a_process(start: object) -> None:
    assert callable(start)
    with pytest.raises(AssertionError, match="a test marked unit started a process"):
        start()
