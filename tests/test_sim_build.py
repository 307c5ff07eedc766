"""The native module is built so that the simulator's event loop is one function.

With several codegen units LLVM stopped inlining ``Sim::dispatch`` (and the event queue)
into ``Sim::run_until`` after an unrelated change in the TCP sender, +6.6 % instructions
per packet (docs/performance.md, "Session 7: the two-flow loop"); Cargo.toml builds
``tcpfair-sim`` in one codegen unit to keep it inlined. This checks the module that is
imported, by its symbol table.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

import tcpfair._core


def _symbols() -> str:
    nm = shutil.which("nm", path="/usr/bin:/bin")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run(
        [nm, "-C", tcpfair._core.__file__], capture_output=True, text=True, check=True
    )
    return out.stdout


def test_event_loop_dispatch_is_inlined_into_run_until() -> None:
    syms = _symbols()
    # The control: the module carries its symbols, and the loop itself is one.
    assert "tcpfair_sim::sim::Sim::run_until" in syms
    assert "tcpfair_sim::sim::Sim::dispatch" not in syms
