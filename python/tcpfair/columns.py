"""Result tables as named numpy columns, for the paths that should not load pandas.

A simulator run (``tcpfair run``) builds its tables as ``Columns``; ``RunResult`` turns one
into a pandas DataFrame only when a caller asks for the DataFrame (issue 14, start-up:
pandas costs ~0.5 s of CPU to import). What the run computes and writes without pandas is
what pandas would give, bit for bit:

- ``group_sums`` sums like pandas' ``groupby(...).sum()``/``.mean()`` (its cython
  ``group_sum``/``group_mean``): NaN skipped, floats summed in row order with Kahan
  compensation, integers exactly;
- ``write_parquet`` writes the file ``DataFrame.to_parquet(path, index=False)`` writes
  (pyarrow, Snappy, the same ``pandas`` schema metadata), so every reader sees the same
  table. ``tests/test_columns.py`` checks both against pandas.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

#: ``group_sums``' Kahan loop: vectorized over the groups (one numpy step per value of the
#: longest group) up to groups this long; beyond, a plain Python loop over the values up to
#: this many values; beyond both, pandas' compiled loop (importing pandas costs ~0.5 s of
#: CPU, about what the Python loop takes for a million values).
KAHAN_LOOP_MAX = 4096
PYTHON_LOOP_MAX = 1_000_000
#: ... and the plain Python loop also for few groups: values at most this many times the
#: longest group. A vectorized step costs ~15-50 µs, a value in the Python loop ~0.2-0.4 µs,
#: so with two flows of 300 samples (seed 001's runs) the Python loop takes 0.1 ms where
#: the vectorized one took 4-8 ms; at 100 groups of 300 they are about even.
FEW_GROUPS = 32


class Columns(Mapping[str, np.ndarray]):
    """A table as an ordered mapping of column name → numpy array, all of one length.

    Text columns are object arrays of ``str`` (as in a DataFrame); ``to_frame()`` gives the
    DataFrame with the same columns, order and dtypes."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        cols: dict[str, np.ndarray] = {}
        for name, values in data.items():
            arr = np.asarray(values)
            cols[name] = arr.astype(object) if arr.dtype.kind == "U" else arr
        lengths = {len(a) for a in cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self._data = cols
        self._rows = lengths.pop() if lengths else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        """The number of rows (as ``len(DataFrame)``), not of columns."""
        return self._rows

    @property
    def columns(self) -> list[str]:
        return list(self._data)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self._data, columns=self.columns)


def group_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, each row's index into them): pandas' sorted group order."""
    uniq, codes = np.unique(keys, return_inverse=True)
    return uniq, codes.reshape(-1)


def group_sums(values: np.ndarray, codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group ``0 … n-1``: (sum of the non-NaN values, how many there were).

    pandas' ``groupby().sum()`` bit for bit: integer values are summed exactly (int64),
    floats in row order with Kahan compensation (reset where it becomes NaN, so an
    infinite value sums to ±inf). A group without values sums to 0; ``sum / count`` is
    pandas' ``groupby().mean()`` (NaN for an empty group)."""
    values = np.asarray(values)
    codes = np.asarray(codes, dtype=np.int64)
    if values.dtype.kind == "O":  # numbers as Python objects: pandas sums them its own way
        return _pandas_group_sums(values, codes, n)
    if values.dtype.kind in "iub":
        sums = np.zeros(n, dtype=np.int64)
        np.add.at(sums, codes, values.astype(np.int64))
        return sums, np.bincount(codes, minlength=n)
    v = values.astype(np.float64)
    sizes = np.bincount(codes, minlength=n)
    known = ~np.isnan(v)
    finite = v[known]
    if np.array_equal(finite, np.round(finite)) and np.abs(finite).sum() < 2.0**53:
        # whole numbers (counts, bytes) whose sums are exact: the same in any order
        total = np.bincount(codes[known], weights=finite, minlength=n).astype(np.float64)
        return total, np.bincount(codes[known], minlength=n)
    order = np.argsort(codes, kind="stable")
    v = v[order]
    if len(v) and sizes.max() > KAHAN_LOOP_MAX:
        if len(v) > PYTHON_LOOP_MAX:
            return _pandas_group_sums(values.astype(np.float64), codes, n)
        return _kahan_by_group(v, sizes)
    if len(v) and len(v) <= FEW_GROUPS * int(sizes.max()):
        return _kahan_by_group(v, sizes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    total = np.zeros(n)
    comp = np.zeros(n)
    count = np.zeros(n, dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        for k in range(int(sizes.max()) if len(v) else 0):
            g = np.flatnonzero(sizes > k)
            val = v[starts[g] + k]
            keep = ~np.isnan(val)
            g, val = g[keep], val[keep]
            y = val - comp[g]
            t = total[g] + y
            c = (t - total[g]) - y
            c[np.isnan(c)] = 0.0
            comp[g] = c
            total[g] = t
            count[g] += 1
    return total, count


def _kahan_by_group(v: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``group_sums``' Kahan sum one value at a time (``v`` sorted by group, stably)."""
    values = v.tolist()
    total, count = np.zeros(len(sizes)), np.zeros(len(sizes), dtype=np.int64)
    i = 0
    for g, size in enumerate(sizes.tolist()):
        s = c = 0.0
        k = 0
        for x in values[i : i + size]:
            if x != x:  # NaN
                continue
            y = x - c
            t = s + y
            c = (t - s) - y
            if c != c:
                c = 0.0
            s = t
            k += 1
        total[g], count[g] = s, k
        i += size
    return total, count


def _pandas_group_sums(v: np.ndarray, codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``group_sums`` by pandas itself: very long groups (its compiled loop), or numbers
    held as Python objects (a column pandas could not type, e.g. built from empty parts)."""
    import pandas as pd

    g = pd.Series(v).groupby(codes)  # v: float64, or object (numbers as objects)
    ids = np.arange(n)
    total = g.sum().reindex(ids, fill_value=0.0).to_numpy(dtype=np.float64)
    count = g.count().reindex(ids, fill_value=0).to_numpy(dtype=np.int64)
    return total, count


# ---------------------------------------------------------------------------- Parquet

_PANDAS_TYPES = {"i": "int64", "f": "float64", "b": "bool", "O": "unicode"}


def write_parquet(table: Columns, path: str | Path) -> None:
    """Write ``table`` as ``table.to_frame().to_parquet(path, index=False)`` would.

    Columns of int64, float64, bool or text only (what the simulator's tables hold);
    float NaN is stored as null, as pandas stores it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = [_arrow_array(name, col) for name, col in table.items()]
    described = [
        {
            "name": name,
            "field_name": name,
            "pandas_type": "empty" if a.type == pa.null() else _PANDAS_TYPES[col.dtype.kind],
            "numpy_type": "object" if col.dtype.kind == "O" else str(col.dtype),
            "metadata": None,
        }
        for (name, col), a in zip(table.items(), arrays, strict=True)
    ]
    meta = {
        "index_columns": [],
        "column_indexes": [],
        "columns": described,
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": _pandas_version(),
    }
    schema = pa.schema(
        [pa.field(n, a.type) for n, a in zip(table, arrays, strict=True)],
        metadata={b"pandas": json.dumps(meta).encode("utf8")},
    )
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), str(path), compression="snappy")


def _arrow_array(name: str, col: np.ndarray) -> Any:
    """The Arrow array pyarrow makes of a pandas column, built from buffers: ``pa.array``
    of a numpy array imports pandas (to check for a categorical)."""
    import pyarrow as pa

    kind, n = col.dtype.kind, len(col)
    if kind == "O":
        if not all(isinstance(x, str) for x in col):
            raise TypeError(f"column {name!r}: an object column must hold text only")
        if not n:  # pandas writes an empty text column as Arrow's null type
            return pa.nulls(0)
        text = [x.encode("utf8") for x in col]
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum([len(t) for t in text], out=offsets[1:])
        return pa.Array.from_buffers(
            pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(text))]
        )
    if kind == "b":
        bits = np.packbits(col.astype(bool), bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(bits)])
    if col.dtype == np.int64:
        return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(np.ascontiguousarray(col))])
    if col.dtype == np.float64:
        valid = ~np.isnan(col)  # pandas stores NaN as null
        nulls = int(n - valid.sum())
        mask = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
        data = pa.py_buffer(np.ascontiguousarray(col))
        return pa.Array.from_buffers(pa.float64(), n, [mask, data], null_count=nulls)
    raise TypeError(f"column {name!r}: dtype {col.dtype} is not written without pandas")


@cache
def _pandas_version() -> str:
    """The installed pandas' version, as pandas writes it into the metadata (read from the
    distribution: importing pandas is what this module avoids)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pandas")
    except PackageNotFoundError:  # pandas without its distribution's metadata
        import pandas

        return str(pandas.__version__)
