"""The scenarios and sweeps that ship with tcpfair, usable by name.

They live in ``tcpfair/scenarios`` — package data in an installed wheel, and in a checkout a
symlink to the repository's ``scenarios/`` — so a checkout and an installed package list and
resolve the same names. A name is the file's path below that folder without ``.toml``:
``lab10-reno-vs-bbr``, ``validation/mathis``, ``sweeps/cubic-fig8``.

The rule for a command argument (``resolve``): **a path that exists wins**; otherwise a
built-in name (with or without ``.toml``) is the shipped file; otherwise the argument is
returned as given, so the caller's usual "no such file" error names it. When an existing path
is also a built-in name, the path is used and ``resolve`` says so (``Resolved.shadows``).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

#: the folder of built-in sweeps; every other ``*.toml`` below the root is a scenario,
#: except in ``INTERNAL`` folders (``repro/``: the studies of ``tcpfair repro``, reached
#: through that command)
SWEEPS = "sweeps"
INTERNAL = ("repro",)


@dataclass(frozen=True)
class Builtin:
    name: str
    path: Path
    kind: str  # "scenario" or "sweep"

    def summary(self, width: int = 100) -> str:
        """The file's first comment line (what it is), cut to ``width`` characters."""
        for line in self.path.read_text(encoding="utf-8").splitlines():
            text = line.strip()
            if text.startswith("#"):
                text = text.lstrip("#").strip()
                return text if len(text) <= width else text[: width - 1] + "…"
            if text:
                break
        return ""


@dataclass(frozen=True)
class Resolved:
    path: Path
    builtin: Builtin | None  # the shipped file used, if any
    shadows: Builtin | None  # a built-in of the same name that a local path hides


def root() -> Path:
    """The folder of shipped scenarios (inside the installed package)."""
    return Path(str(files("tcpfair") / "scenarios"))


def builtins(kind: str | None = None) -> list[Builtin]:
    """Every shipped scenario and sweep (or those of one ``kind``), sorted by name."""
    base = root()
    if not base.is_dir():
        return []
    found = []
    for path in sorted(base.rglob("*.toml")):
        name = path.relative_to(base).with_suffix("").as_posix()
        if name.split("/")[0] in INTERNAL:
            continue
        is_sweep = name.split("/")[0] == SWEEPS
        entry = Builtin(name, path, "sweep" if is_sweep else "scenario")
        if kind is None or entry.kind == kind:
            found.append(entry)
    return found


def find(name: str, kind: str | None = None) -> Builtin | None:
    """The built-in called ``name`` (``.toml`` optional), or None."""
    wanted = name.removesuffix(".toml")
    return next((b for b in builtins(kind) if b.name == wanted), None)


def resolve(arg: str | Path, kind: str | None = None) -> Resolved:
    """The file a command argument means: an existing path, else a built-in name."""
    path = Path(arg)
    named = find(str(arg), kind)
    if path.exists():
        same = named is not None and path.resolve() == named.path.resolve()
        return Resolved(path, None, None if same else named)
    if named is not None:
        return Resolved(named.path, named, None)
    return Resolved(path, None, None)


def unknown(name: str, kind: str | None = None, as_file: bool = True) -> str:
    """One line for a name that is not built in (nor a file, if ``as_file``): the closest
    built-in names and where the list is."""
    import difflib

    known = [b.name for b in builtins(kind)]
    close = difflib.get_close_matches(name.removesuffix(".toml"), known, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    what = f"built-in {kind}" if kind else "built-in scenario or sweep"
    head = f"{name!r}: no such file, and not the name of a" if as_file else f"{name!r} is not a"
    return f"{head} {what}{hint}; `tcpfair scenarios` lists them"
