"""Tables without pandas (tcpfair/columns.py, issue 14 start-up): the simulator's run path
computes and writes what the pandas path did, to the bit.

- ``group_sums`` against pandas' own ``groupby().sum()``/``.mean()`` on values chosen to
  make summation order matter (magnitudes 1e-5 … 1e16, NaN, ±inf);
- ``write_parquet`` against ``DataFrame.to_parquet(index=False)``: the same bytes;
- a simulator result saved from numpy columns against the same result saved from its
  DataFrames, and its metrics against pandas formulas written out here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpfair import columns, load_scenario
from tcpfair.backends.sim import SimBackend
from tcpfair.columns import KAHAN_LOOP_MAX, Columns, group_sums, write_parquet
from tcpfair.result import RunResult


def _pandas_sums(v: np.ndarray, codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    g = pd.Series(v).groupby(codes)
    ids = range(n)
    return (
        g.sum().reindex(ids, fill_value=0).to_numpy(),
        g.mean().reindex(ids).to_numpy(dtype=float),
    )


def _mean(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / np.where(count > 0, count, np.nan)


@pytest.mark.parametrize("few_groups", [columns.FEW_GROUPS, 0])  # Python loop, vectorized
@pytest.mark.parametrize("seed", range(40))
def test_group_sums_are_pandas_groupby_sums_to_the_bit(
    seed: int, few_groups: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columns, "FEW_GROUPS", few_groups)
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 400)), int(rng.integers(1, 9))
    v = rng.standard_normal(n) * 10.0 ** rng.integers(-5, 17, size=n)
    v[rng.random(n) < 0.1] = np.nan
    if seed % 5 == 0 and n:
        v[rng.integers(n)] = np.inf if seed % 10 else -np.inf
    codes = rng.integers(0, k, size=n)
    total, count = group_sums(v, codes, k)
    want_sum, want_mean = _pandas_sums(v, codes, k)
    assert np.array_equal(total, want_sum, equal_nan=True)
    assert np.array_equal(_mean(total, count), want_mean, equal_nan=True)


def test_group_sums_of_few_and_of_many_groups_take_their_loops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two flows of 300 samples take the Python loop, 2,000 groups of 3 the vectorized one
    (each 30-70x faster there than the other); both are pandas' sums to the bit."""
    calls: list[int] = []
    python_loop = columns._kahan_by_group
    monkeypatch.setattr(
        columns, "_kahan_by_group", lambda v, sizes: calls.append(len(v)) or python_loop(v, sizes)
    )
    rng = np.random.default_rng(3)
    for k, size in ((2, 300), (2_000, 3)):
        v = rng.standard_normal(k * size) * 10.0 ** rng.integers(-5, 17, size=k * size)
        v[rng.random(k * size) < 0.1] = np.nan
        codes = rng.permutation(np.repeat(np.arange(k), size))
        calls.clear()
        total, count = group_sums(v, codes, k)
        want_sum, want_mean = _pandas_sums(v, codes, k)
        assert np.array_equal(total, want_sum, equal_nan=True)
        assert np.array_equal(_mean(total, count), want_mean, equal_nan=True)
        assert calls == ([k * size] if k == 2 else [])


def test_group_sums_order_matters_and_is_kept() -> None:
    """1e16 + 1 + 1 - 1e16: a plain left-to-right sum gives 0 (or 4 pairwise); Kahan, as
    pandas, gives 2. The test fails for any other summation."""
    v = np.array([1e16, 1.0, 1.0, -1e16])
    total, count = group_sums(v, np.zeros(4, dtype=np.int64), 1)
    assert total[0] == pd.Series(v).groupby(np.zeros(4)).sum().iloc[0] == 2.0
    assert count[0] == 4


def test_group_sums_of_integers_are_exact_and_of_long_groups_still_pandas() -> None:
    big = np.array([2**62, 1, -(2**62)], dtype=np.int64)
    total, count = group_sums(big, np.zeros(3, dtype=np.int64), 2)
    assert total.dtype == np.int64 and list(total) == [1, 0] and list(count) == [3, 0]
    rng = np.random.default_rng(7)
    for scale in (1.0, 2.0**51):  # whole numbers as floats: exact sums, then not exact
        w = np.round(rng.standard_normal(300) * 1e3) * scale
        w[::7] = np.nan
        codes = rng.integers(0, 4, size=300)
        total, count = group_sums(w, codes, 5)
        want_sum, want_mean = _pandas_sums(w, codes, 5)
        assert np.array_equal(total, want_sum) and np.array_equal(
            _mean(total, count), want_mean, equal_nan=True
        )


@pytest.mark.parametrize("python_loop_max", [10**9, 100])  # the Python loop, then pandas
def test_group_sums_of_long_groups(python_loop_max: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns, "PYTHON_LOOP_MAX", python_loop_max)
    rng = np.random.default_rng(7)
    v = rng.standard_normal(KAHAN_LOOP_MAX + 10) * 10.0 ** rng.integers(-3, 16, KAHAN_LOOP_MAX + 10)
    v[::11] = np.nan
    v[5] = np.inf
    codes = np.zeros(len(v), dtype=np.int64)  # one group too long for the vectorized loop
    codes[::3] = 1
    total, count = group_sums(v, codes, 3)
    want_sum, want_mean = _pandas_sums(v, codes, 3)
    assert np.array_equal(total, want_sum, equal_nan=True)
    assert np.array_equal(_mean(total, count), want_mean, equal_nan=True)
    assert list(count) == [int(((codes == g) & ~np.isnan(v)).sum()) for g in range(3)]


def test_group_sums_of_numbers_as_objects_are_pandas_sums() -> None:
    v = np.array([0.1, 0.2, None, 0.3, 7], dtype=object)
    codes = np.array([0, 0, 0, 1, 1])
    total, count = group_sums(v, codes, 2)
    g = pd.Series(v).groupby(codes)
    assert total.tolist() == g.sum().astype(float).tolist() == [0.1 + 0.2, 7.3]
    assert count.tolist() == [2, 2]


TABLES = {
    "mixed": {
        "flow": np.arange(5, dtype=np.int64),
        "x": np.array([1.5, np.nan, -0.0, np.inf, 1e300]),
        "label": np.array(["h1", "é", "", "a b", "x"], dtype=object),
        "done": np.array([True, False, True, True, False]),
    },
    "empty": {
        "flow": np.zeros(0, dtype=np.int64),
        "label": np.array([], dtype=object),
        "x": np.zeros(0),
        "done": np.zeros(0, dtype=bool),
    },
    "strided": {"x": np.arange(40.0)[::3], "n": np.arange(40, dtype=np.int64)[::3]},
}


@pytest.mark.parametrize("name", list(TABLES))
def test_write_parquet_writes_pandas_bytes(name: str, tmp_path: Path) -> None:
    table = Columns(TABLES[name])
    write_parquet(table, tmp_path / "ours.parquet")
    table.to_frame().to_parquet(tmp_path / "pandas.parquet", index=False)
    assert (tmp_path / "ours.parquet").read_bytes() == (tmp_path / "pandas.parquet").read_bytes()
    back = pd.read_parquet(tmp_path / "ours.parquet")
    pd.testing.assert_frame_equal(back, pd.read_parquet(tmp_path / "pandas.parquet"))


def test_columns_refuse_what_they_cannot_write(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="different lengths"):
        Columns({"a": np.zeros(2), "b": np.zeros(3)})
    with pytest.raises(TypeError, match="'a': dtype int32"):
        write_parquet(Columns({"a": np.zeros(2, dtype=np.int32)}), tmp_path / "x.parquet")
    with pytest.raises(TypeError, match="'b': an object column must hold text only"):
        write_parquet(Columns({"b": np.array([1, "x"], dtype=object)}), tmp_path / "x.parquet")


TWO_WAY_WITH_SHORT_FLOWS = """
name = "mixed"
duration = "4s"
seed = 5
[bottleneck]
rate = "20Mbit"
buffer = "0.5bdp"
[bottleneck.reverse]
buffer = "50pkt"
[[flows]]
cca = "reno"
rtt = "30ms"
streams = 2
label = "bulk"
[[flows]]
cca = "cubic"
rtt = "20ms"
start = "0.7s"
label = "late"
[[flows]]
cca = "bbr"
rtt = "40ms"
direction = "reverse"
label = "back"
[[flows]]
cca = "cubic"
rtt = { dist = "uniform", min = "10ms", max = "60ms" }
size = { dist = "pareto", mean = "30KB", shape = 1.5, max = "2MB" }
arrivals = { process = "poisson", rate = "10/s" }
label = "web"
[measure]
from = "1s"
interval = "50ms"
flows = ["bulk", "late"]
"""


@pytest.fixture(scope="module")
def mixed_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sc") / "mixed.toml"
    path.write_text(TWO_WAY_WITH_SHORT_FLOWS)
    return path


@pytest.fixture(scope="module")
def mixed_run(mixed_path: Path) -> RunResult:
    return SimBackend().run(load_scenario(mixed_path))


def _as_frames(res: RunResult) -> RunResult:
    """The same result with every table a DataFrame (the pandas path)."""
    return RunResult(
        flows=res.flows.copy(),
        samples=res.samples.copy(),
        link=res.link.copy(),
        meta=res.meta,
        scenario=res.scenario,
        reverse_link=res.reverse_link.copy() if res.reverse_link is not None else None,
        short_flows=res.short_flows.copy(),
    )


def test_simulator_run_saves_the_files_its_dataframes_save(
    mixed_path: Path, tmp_path: Path
) -> None:
    fresh = SimBackend().run(load_scenario(mixed_path))
    assert isinstance(fresh._tables["samples"], Columns)  # the numpy path, not yet a frame
    ours = fresh.save(tmp_path / "columns")
    theirs = _as_frames(fresh).save(tmp_path / "frames")
    names = sorted(p.name for p in ours.iterdir())
    assert names == sorted(p.name for p in theirs.iterdir())
    assert {"reverse_link.parquet", "short_flows.parquet"} <= set(names)
    for name in names:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name
    assert json.loads((ours / "summary.json").read_text())["metrics"]["n_flows"] == 3


def test_metrics_match_pandas_formulas(mixed_run: RunResult) -> None:
    """The headline figures, recomputed here with pandas as the pandas path did."""
    res = mixed_run
    met = res.metrics()
    lo, hi = met["window"]
    s = res.samples
    ws = s[((s["t_s"] - s["dt_s"] / 2) >= lo) & ((s["t_s"] - s["dt_s"] / 2) <= hi)]
    g = ws.groupby("flow")
    thr = (g["bytes"].sum() * 8 / g["dt_s"].sum()).reindex(res.flows["flow"], fill_value=0.0)
    assert met["throughput_bps"] == {str(k): float(v) for k, v in thr.items()}
    measured = res.flows["label"].isin(["bulk", "late"]).to_numpy()
    x = thr.to_numpy()[measured]
    assert met["sum_bps"] == float(x.sum())
    assert met["jfi"] == pytest.approx(x.sum() ** 2 / (len(x) * (x**2).sum()), rel=1e-12)
    retr = g["retransmits"].sum().reindex(res.flows["flow"], fill_value=0.0)
    assert met["retransmits"] == int(retr[measured].sum())  # the measured connections'
    back = (res.flows["direction"] == "reverse").to_numpy()
    assert met["reverse"]["retransmits"] == int(retr[back].sum())
    srtt = s[s["srtt_s"] > 0].groupby("flow")["srtt_s"].mean()
    assert res.flows["mean_rtt_s"].tolist() == res.flows["flow"].map(srtt).tolist()
    rl = res.reverse_link
    assert rl is not None
    rw = rl[(rl["t_s"] > lo) & (rl["t_s"] <= hi)]
    assert met["reverse"]["queue_mean_bytes"] == float(rw["queue_bytes"].mean())
    assert met["reverse"]["drops"] == int(rw["drops"].sum())
    done = res.short_flows[
        (res.short_flows["start_s"] >= lo)
        & (res.short_flows["start_s"] < hi)
        & res.short_flows["completed"]
    ]
    assert met["short_flows"]["all"]["completed"] == len(done) > 0
    assert met["short_flows"]["all"]["fct_median_s"] == float(np.median(done["fct_s"]))
    assert not math.isnan(met["jfi_per_interval_mean"])


def test_a_run_of_short_flows_only_writes_the_flows_table_pandas_built(tmp_path: Path) -> None:
    """No connections: the columns the simulator backend built from Python lists were
    float64 in pandas (an empty list is ``np.array([])``); the file keeps that schema."""
    import pyarrow.parquet as pq

    path = tmp_path / "short.toml"
    path.write_text(
        'name = "s"\nduration = "2s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n'
        '[[flows]]\ncca = "cubic"\nrtt = "20ms"\nsize = "20KB"\ndirection = "reverse"\n'
        'arrivals = { process = "fixed", rate = "10/s" }\n'
    )
    out = SimBackend().run(load_scenario(path)).save(tmp_path / "run")
    listed = ["group", "label", "cca", "rtt_s", "start_s", "size_bytes", "direction"]
    empty = np.zeros(0, dtype=np.int64)
    old = pd.DataFrame(
        {"flow": empty, **{c: [] for c in listed[:5]}, "bytes": empty, "retransmits": empty}
    )
    old["mean_rtt_s"] = np.nan
    old["size_bytes"] = []
    old["direction"] = []
    old.to_parquet(tmp_path / "old.parquet", index=False)
    assert pq.read_schema(out / "flows.parquet").equals(
        pq.read_schema(tmp_path / "old.parquet"), check_metadata=True
    )
    assert len(pd.read_parquet(out / "short_flows.parquet")) == 20
