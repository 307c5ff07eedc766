"""build_backend/tcpfair_build.py imported as a module (it is not on the path: pip loads it
through ``backend-path``). Shared by tests/test_packaging.py and tests/test_pgo.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def build_backend() -> Any:
    """A fresh copy of the module (tests may monkeypatch it); skips without maturin, which
    the backend imports."""
    pytest.importorskip("maturin")
    spec = importlib.util.spec_from_file_location(
        "tcpfair_build", ROOT / "build_backend" / "tcpfair_build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
