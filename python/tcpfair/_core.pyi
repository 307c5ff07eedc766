from typing import Any, final

__all__ = [
    "PROFILE_GUIDED",
    "Simulation",
    "__version__",
    "cc_registry",
    "check_cc_params",
    "congestion_controls",
    "simulate",
]
__version__: str
PROFILE_GUIDED: bool

def simulate(config_json: str) -> dict[str, Any]: ...
def congestion_controls() -> list[str]: ...
def cc_registry() -> list[dict[str, Any]]: ...
def check_cc_params(cca: str, stack: str, params: dict[str, float]) -> tuple[str, str] | None: ...

@final
class Simulation:
    """A simulation run in chunks (for progress reporting)."""

    def __new__(cls, config_json: str) -> Simulation: ...
    def advance(self, until_ns: int) -> bool: ...
    def progress(self) -> tuple[int, int]: ...
    def finish(self) -> dict[str, Any]: ...
