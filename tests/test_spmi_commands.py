"""The in-debugger `spmi ...` commands over recorded views (tests/support/recorded_view.py); the
same commands in real gdb and lldb sessions are in tests/test_debug_diagnosis.py."""

from __future__ import annotations

import pytest

from spmi_dbg.commands.inspect import maps

from .support.recorded_view import RFrame, RProcess, RValue

pytestmark = pytest.mark.unit  # none of these tests starts a process


def test_spmi_maps_says_when_the_stacks_method_context_is_not_readable() -> None:
    """At an -O2 stop `this` of MethodContext::rep* is optimized out (the real 3.1.23 null-map
    crash): `spmi maps` says so, never that there is no MethodContext in the stack."""
    frames = [
        RFrame("LightWeightMap<unsigned int, DLDL>::Get(unsigned int)"),
        RFrame(
            "MethodContext::repGetGSCookie(GSCookie*, GSCookie**)",
            variables={"this": RValue("MethodContext *", None, optimized_out=True)},
        ),
        RFrame("main", variables={"mc": RValue("MethodContext *", 0)}),
    ]
    r = maps(RProcess(frames, None), None)
    assert r.error == (
        "spmi maps: the stack has a MethodContext but not its value (this in "
        "MethodContext::repGetGSCookie (frame 1) is optimized out; mc in main (frame 2) is null); "
        "give an expression"
    )
