"""Where tcpfair writes, and the one rule for what it may replace (docs/sweeps.md, "Safety").

tcpfair only ever removes what it created itself:

- a **run folder** (``run -o DIR``, ``RunResult.save``): a missing path is created; an
  existing *empty* directory is used; an existing tcpfair run folder (``summary.json`` with
  a ``format_version`` and nothing but the files a run folder holds) is replaced only when
  the caller says ``force`` — the new run is written to a staging folder beside it first,
  and the old one is removed only after the swap. Anything else (a non-empty folder of
  other files, a file, a symbolic link) is refused before anything is written.
- a **results store** (``sweep -o DIR``): an existing store is resumed, a missing path or
  an empty directory becomes a new store, anything else is refused.
- a **single file** (``--export``, ``fairness --plot``): written to a temporary file beside
  it, then renamed into place; an existing file is replaced only with ``force``; a missing
  parent folder, a directory, a symbolic link or a special file is refused.
- a **figure folder** given explicitly (``compare -o``, ``results --figures``): a missing
  path is created and an empty directory used; a non-empty one only with ``force``, and then
  only the figures of the same name are replaced (each atomically); nothing is deleted.

Where a run's result could not be saved (no staging folder can be made beside the target)
the check says so before the run starts. An empty folder given to ``run -o`` is filled in
place (it keeps its owner and mode and may be the current folder).

Every refusal is an ``OutputError`` (a ``ValueError``) whose message is one line naming the
option, the path, what it is and what is allowed. Symbolic links are never followed into
deleting anything: a path that is a link is refused, and a folder is re-checked after it has
been renamed aside and put back untouched if it is no longer what was checked.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "OutputError",
    "NAME_RULE",
    "name_problem",
    "RUN_FILES",
    "is_run_folder",
    "is_store",
    "RunTarget",
    "run_target",
    "default_run_target",
    "stage_beside",
    "publish_run",
    "check_store_target",
    "check_file_target",
    "write_file",
    "check_figure_dir",
    "publish_figures",
]

#: What a scenario or sweep name may be: it becomes a folder name (results/<name>-…).
NAME_MAX = 100
NAME_RULE = (
    f"one path component of at most {NAME_MAX} letters, digits, '.', '_' or '-', "
    "not starting with '.'"
)
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")

#: The files a run folder holds (RunResult.save, and the figure ``tcpfair run`` draws).
RUN_FILES = frozenset(
    {"summary.json", "flows.parquet", "samples.parquet", "link.parquet", "throughput.png"}
    | {"reverse_link.parquet"}  # runs with a reverse bottleneck
    | {"short_flows.parquet"}  # runs with short flows (arrivals)
    | {"capture.pcap"}  # kernel runs with --capture
    | {f"run.{fmt}" for fmt in ("png", "svg", "pdf", "csv")}
)


#: figure formats a sweep can write (surfaces.py draws them)
FORMATS = ("png", "svg", "pdf")

#: per-run tables a CDF can read besides the samples: metric -> (file in the run folder,
#: column, scale to the unit shown, axis label). A run without the file has no values.
RUN_TABLES: dict[str, tuple[str, str, float, str]] = {
    "fct": ("short_flows.parquet", "fct_s", 1e3, "flow completion time (ms)"),
}

#: what a CDF can show: per-interval throughput of each flow, or a ``RUN_TABLES`` column
CDF_METRICS = ("throughput", *RUN_TABLES)


class OutputError(ValueError):
    """An output path tcpfair may not write or replace. The message is one line: control
    characters of a path (a newline in a folder name) are shown escaped (``\\n``)."""

    def __init__(self, message: str):
        super().__init__("".join(c if c.isprintable() else repr(c)[1:-1] for c in message))


# --------------------------------------------------------------------------- names
def name_problem(name: object) -> str | None:
    """None if ``name`` may name a scenario or sweep (it becomes a path), else what is wrong."""
    if not isinstance(name, str):
        return f"expected a string: {NAME_RULE}"
    if not name:
        return f"empty; expected {NAME_RULE}"
    if len(name) > NAME_MAX:
        return f"{len(name)} characters is too long; expected {NAME_RULE}"
    if not _NAME.fullmatch(name):
        return f"expected {NAME_RULE}"
    return None


# --------------------------------------------------------------------------- recognising
def _kind(p: Path, option: str = "") -> str:
    """What is at ``p`` (without following a final symbolic link), for messages."""
    try:
        st = p.lstat()
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        raise OutputError(f"{option} {p}: cannot inspect it ({e.strerror or e})".strip()) from None
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if stat.S_ISDIR(st.st_mode):
        return "a directory"
    if stat.S_ISREG(st.st_mode):
        return "a file"
    return "a special file"


def _entries(d: Path, option: str = "") -> list[os.DirEntry[str]]:
    try:
        with os.scandir(d) as it:
            return list(it)
    except OSError as e:
        raise OutputError(f"{option} {d}: cannot list it ({e.strerror or e})".strip()) from None


def is_run_folder(d: Path) -> bool:
    """A real directory holding a tcpfair run: ``summary.json`` with a ``format_version``,
    and only regular files a run folder holds (``RUN_FILES``)."""
    if _kind(d) != "a directory":
        return False
    names = set()
    for e in _entries(d):
        if e.name not in RUN_FILES or not e.is_file(follow_symlinks=False):
            return False
        names.add(e.name)
    if "summary.json" not in names:
        return False
    try:
        summary = json.loads((d / "summary.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and isinstance(summary.get("format_version"), int)


def is_store(d: Path) -> bool:
    """A real directory (not a link) holding a results store's ``catalog.sqlite``."""
    return _kind(d) == "a directory" and _kind(d / "catalog.sqlite") == "a file"


# --------------------------------------------------------------------------- run folders
@dataclass(frozen=True)
class RunTarget:
    """Where a run folder goes: ``path``, and whether an old run folder there is replaced."""

    path: Path
    replace: bool = False


def run_target(path: Path, *, force: bool = False, option: str = "-o") -> RunTarget:
    """Check that a run folder may be written at ``path``; raise OutputError if not."""
    kind = _kind(path, option)
    if kind == "missing":
        return _probed(RunTarget(path), option)
    if kind == "a directory":
        if not _entries(path, option):
            return _probed(RunTarget(path), option)
        if is_run_folder(path):
            if force and _is_cwd(path):
                raise OutputError(
                    f"{option} {path}: is the current folder; to replace that run, "
                    "run tcpfair from outside it"
                )
            if force:
                return _probed(RunTarget(path, replace=True), option)
            raise OutputError(
                f"{option} {path}: holds an earlier tcpfair run; "
                "add --force to replace it, or choose a new folder"
            )
        raise OutputError(
            f"{option} {path}: a directory that is not empty and is not a tcpfair run folder; "
            "allowed: a new path, an empty directory, or a run folder with --force"
        )
    raise OutputError(
        f"{option} {path}: {kind}; allowed: a new path, an empty directory, "
        "or a run folder with --force"
    )


def _probed(target: RunTarget, option: str) -> RunTarget:
    """``target``, once a staging folder could be made beside it (its parent folders are
    created): no run starts whose result could not be saved. Leaves nothing behind."""
    try:
        os.rmdir(stage_beside(target.path))
    except OutputError as e:
        raise OutputError(f"{option} {e}") from None
    return target


def _is_cwd(path: Path) -> bool:
    try:
        return os.path.samefile(path, os.curdir)
    except OSError:
        return False


def default_run_target(base: Path, *, force: bool = False, tries: int = 1000) -> RunTarget:
    """The default run folder: ``base`` if it is free (or, with ``force``, an earlier run
    folder there); otherwise the first free ``base-2``, ``base-3``, …"""
    if force:
        return run_target(base, force=True, option="run folder")
    for k in range(1, tries + 1):
        p = base if k == 1 else base.with_name(f"{base.name}-{k}")
        kind = _kind(p, "run folder")
        if kind == "missing" or (kind == "a directory" and not _entries(p)):
            return _probed(RunTarget(p), "run folder")
    raise OutputError(f"{base}: {tries} earlier run folders of this name; remove some or use -o")


def _umask_mode(mode: int) -> int:
    um = os.umask(0)
    os.umask(um)
    return mode & ~um


def stage_beside(target: Path) -> Path:
    """A new hidden staging directory beside ``target``, in its parent folder (created if
    missing), with the permissions a new folder gets (0777 less the umask)."""
    where = Path(os.path.abspath(target))  # "." and "x/.." have no name of their own
    parent = where.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        d = Path(tempfile.mkdtemp(prefix=f".{where.name}.", suffix=".tmp", dir=parent))
        os.chmod(d, _umask_mode(0o777))
    except OSError as e:
        raise OutputError(
            f"{target}: cannot create a folder in {parent} ({e.strerror or e})"
        ) from None
    return d


def publish_run(staging: Path, target: RunTarget, *, option: str = "-o") -> Path:
    """Move the complete run folder ``staging`` to ``target.path``, re-checking the target at
    the swap. An old run folder is moved aside, checked again, and removed only after the new
    one is in place. On any refusal the staging folder is kept and named in the error."""
    dest = target.path
    keep = f"; the new result is kept in {staging}"
    try:
        now = run_target(dest, force=target.replace, option=option)
    except OutputError as e:
        raise OutputError(f"{e}{keep}") from None
    if not now.replace and _kind(dest) == "a directory":
        return _fill_empty(staging, dest, option=option, keep=keep)
    if not now.replace:
        try:
            os.rename(staging, dest)  # fails if dest became a directory, a file or a link
        except OSError as e:
            raise OutputError(
                f"{option} {dest}: changed while the run was written ({e.strerror}){keep}"
            ) from None
        return dest
    try:
        trash = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old.", dir=dest.parent))
    except OSError as e:
        raise OutputError(f"{option} {dest}: cannot write beside it ({e.strerror}){keep}") from None
    old = trash / "run"
    try:
        os.rename(dest, old)
    except OSError as e:
        trash.rmdir()
        raise OutputError(
            f"{option} {dest}: cannot move the old run aside ({e.strerror}){keep}"
        ) from None
    if not is_run_folder(old):  # replaced by something else since the check: put it back
        os.rename(old, dest)
        trash.rmdir()
        raise OutputError(f"{option} {dest}: changed while the run was written{keep}")
    try:
        os.rename(staging, dest)
    except OSError as e:
        os.rename(old, dest)
        trash.rmdir()
        raise OutputError(
            f"{option} {dest}: changed while the run was written ({e.strerror}){keep}"
        ) from None
    shutil.rmtree(trash, ignore_errors=True)  # rmtree never follows links inside it
    return dest


def _fill_empty(staging: Path, dest: Path, *, option: str, keep: str) -> Path:
    """Move the files of ``staging`` into the empty folder ``dest``, which stays (its owner,
    mode, mount; it may be the current folder). ``summary.json`` goes last, so a folder cut
    off half-way is not taken for a run folder. Never replaces a file: on a clash the files
    placed so far are removed again and the staging folder is kept."""
    names = sorted(os.listdir(staging), key=lambda n: n == "summary.json")
    placed: list[Path] = []
    try:
        for n in names:
            _place(staging / n, dest / n)
            placed.append(dest / n)
    except OSError as e:
        for p in placed:  # links or copies tcpfair made; the staging folder still has all
            p.unlink(missing_ok=True)
        raise OutputError(
            f"{option} {dest}: changed while the run was written ({e.strerror}){keep}"
        ) from None
    shutil.rmtree(staging, ignore_errors=True)
    return dest


def _place(src: Path, dst: Path) -> None:
    """Put ``src`` at ``dst`` without replacing anything there (a hard link, or a copy opened
    with O_EXCL when ``dst`` is on another file system)."""
    try:
        os.link(src, dst)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        with open(dst, "xb") as g:  # raises FileExistsError if anything is there
            try:
                with open(src, "rb") as f:
                    shutil.copyfileobj(f, g)
            except BaseException:
                dst.unlink(missing_ok=True)
                raise


# --------------------------------------------------------------------------- stores
def _store_without_catalog(path: Path) -> bool:
    """A store whose catalog was lost or moved away: ``runs/`` holds only backend folders
    (``runs/sim``, ``runs/kernel``). A sweep rebuilds the catalog by adopting those runs."""
    from .backends import BACKENDS

    runs = path / "runs"
    if _kind(path) != "a directory" or _kind(runs) != "a directory":
        return False
    entries = _entries(runs)
    return bool(entries) and all(
        e.name in BACKENDS and e.is_dir(follow_symlinks=False) for e in entries
    )


def check_store_target(path: Path, *, option: str = "-o") -> None:
    """A results store may be opened or created at ``path``: an existing store, a missing
    path or an empty directory."""
    kind = _kind(path, option)
    if kind == "missing" or is_store(path) or _store_without_catalog(path):
        return
    if kind == "a directory":
        cat = path / "catalog.sqlite"
        ckind = _kind(cat, option)
        if ckind != "missing":  # is_store said: not a regular file
            raise OutputError(
                f"{option} {path}: {cat} is {ckind}, not a file (a results catalog); "
                "allowed: a results store (resumed), a new path or an empty directory"
            )
        if not _entries(path, option):
            return
        raise OutputError(
            f"{option} {path}: a directory that is not empty and is not a results store; "
            "allowed: a results store (resumed), a new path or an empty directory"
        )
    raise OutputError(
        f"{option} {path}: {kind}; allowed: a results store (resumed), a new path "
        "or an empty directory"
    )


# --------------------------------------------------------------------------- single files
def check_file_target(path: Path, *, force: bool = False, option: str) -> None:
    """A single file may be written at ``path``: its folder exists, and the path is new or
    (with ``force``) an existing regular file."""
    parent = path.parent
    pkind = _kind(parent, option)
    if pkind == "missing":
        raise OutputError(f"{option} {path}: the folder {parent} does not exist; create it first")
    if parent.is_dir() is False:
        raise OutputError(f"{option} {path}: {parent} is {pkind}, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {path}: the folder {parent} is not writable")
    kind = _kind(path, option)
    if kind == "missing":
        return
    if kind == "a file":
        if force:
            return
        raise OutputError(f"{option} {path}: the file exists; add --force to replace it")
    raise OutputError(f"{option} {path}: {kind}; allowed: a new file, or a file with --force")


def write_file(
    path: Path, write: Callable[[Path], object], *, force: bool = False, option: str
) -> Path:
    """Write one file atomically: ``write(tmp)`` fills a temporary file beside ``path``
    (same suffix, so writers that go by it work), which is then renamed into place."""
    check_file_target(path, force=force, option=option)
    try:
        fd, name = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent
        )
    except OSError as e:
        raise OutputError(f"{option} {path}: cannot write there ({e.strerror or e})") from None
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, _umask_mode(0o666))
        check_file_target(path, force=force, option=option)  # again, just before the rename
        os.replace(tmp, path)  # replaces a file or a link itself, never what a link points to
    except OSError as e:
        raise OutputError(f"{option} {path}: cannot write it ({e.strerror or e})") from None
    finally:
        tmp.unlink(missing_ok=True)
    return path


# --------------------------------------------------------------------------- figure folders
def check_figure_dir(path: Path, *, force: bool = False, option: str) -> None:
    """Figures may be written into ``path``: missing, empty, or (with ``force``) a directory."""
    kind = _kind(path, option)
    if kind == "missing":
        return
    if kind == "a directory":
        if force or not _entries(path, option):
            return
        raise OutputError(
            f"{option} {path}: a directory that is not empty; add --force to write the "
            "figures into it (figures of the same name are replaced, nothing is deleted)"
        )
    raise OutputError(f"{option} {path}: {kind}; allowed: a new path or a directory")


def publish_figures(
    draw: Callable[[Path], list[Path]], out: Path, *, force: bool = True, option: str
) -> list[Path]:
    """Run ``draw(folder)`` into a staging folder beside ``out``, then rename each figure into
    ``out`` (created if missing). Without ``force``, ``out`` must be new or empty."""
    check_figure_dir(out, force=force, option=option)
    made = _missing_ancestors(out.parent)
    staging = stage_beside(out)
    done: list[Path] = []
    try:
        drawn = draw(staging)
        if not drawn:
            return []
        check_figure_dir(out, force=force, option=option)
        try:
            out.mkdir(parents=True, exist_ok=True)
            for p in drawn:
                rel = p.relative_to(staging)
                dest = out / rel
                if _kind(dest) not in ("missing", "a file"):
                    raise OutputError(f"{option} {dest}: {_kind(dest)}; cannot put a figure there")
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.chmod(p, _umask_mode(0o666))
                os.replace(p, dest)
                done.append(dest)
        except OSError as e:
            raise OutputError(
                f"{option} {out}: cannot write the figures ({e.strerror or e})"
            ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not done:  # nothing drawn (or an error): the folders made for staging go too
            for d in made:
                try:
                    d.rmdir()  # only if still empty: ours
                except OSError:
                    break
    return done


def _missing_ancestors(d: Path) -> list[Path]:
    """``d`` and its parents that do not exist yet, deepest first."""
    out = []
    while _kind(d) == "missing" and d != d.parent:
        out.append(d)
        d = d.parent
    return out
