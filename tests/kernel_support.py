"""What the kernel-backend test files share: their marks (``kernel``, and skipped with the
machine's reasons where the backend cannot run)."""

from __future__ import annotations

import sys

import pytest

from tcpfair.kernel import capabilities as cap

CAPS = cap.detect() if sys.platform.startswith("linux") else None
PROBLEMS = cap.machine_problems(CAPS) if CAPS else ["not Linux"]
KERNEL_MARKS = [
    pytest.mark.kernel,
    pytest.mark.skipif(bool(PROBLEMS), reason="kernel backend unavailable: " + "; ".join(PROBLEMS)),
]
