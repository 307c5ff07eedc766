"""``tcpfair report`` opened in a real browser (issue 12 §2): headless Chromium, with no
network (a network namespace of its own when root, and a proxy that goes nowhere either
way), on a run, a sweep store (with --compare) and a ``tcpfair repro vegas --quick`` store.

For each report: no console error, uncaught exception or failed load; no resource loaded
at all (the Performance API's resource entries are empty); every chart element exists, has
a size, and holds drawn traces; a screenshot is not blank (its pixels vary); and the HTML
names no external URL (tests/test_report.py's scan).

A small probe script is put at the start of a copy of the report; after the charts are
drawn it writes what it saw into the page as JSON, which ``--dump-dom`` prints.

Chromium comes from Debian's ``chromium`` package (``./dev setup`` installs it when run as
root); without it these tests skip, saying so."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from report_support import invoke, make_repro, make_run, make_store
from test_report import external_refs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (./dev setup installs Debian's chromium when run as "
    "root: apt-get install chromium)",
)

PROBE = """<script>
(function(){
  const P = window.__probe = {errors: []};
  window.addEventListener("error", function(e){
    const t = e.target;
    if (t && t !== window && (t.src || t.href)) P.errors.push("load failed: " + (t.src || t.href));
    else P.errors.push("uncaught: " + e.message);
  }, true);
  window.addEventListener("unhandledrejection", function(e){
    P.errors.push("unhandled rejection: " + e.reason);
  });
  const err = console.error;
  console.error = function(){
    P.errors.push("console.error: " + Array.from(arguments).join(" "));
    return err.apply(console, arguments);
  };
  window.addEventListener("load", function(){ setTimeout(function(){
    const charts = Array.from(document.querySelectorAll("div.plot")).map(function(d){
      const r = d.getBoundingClientRect();
      return {id: d.id, kind: d.dataset.chart, width: r.width, height: r.height,
              svg: d.querySelectorAll("svg.main-svg").length,
              traces: d.querySelectorAll("g.trace").length,
              heatmaps: d.querySelectorAll("g.hm image").length,
              marks: d.querySelectorAll("g.trace path, g.trace .point, g.trace rect").length,
              data: (d.data || []).length};
    });
    const pre = document.createElement("pre");
    pre.id = "__probe";
    pre.textContent = JSON.stringify({
      errors: P.errors, charts: charts, plotly: typeof Plotly,
      resources: performance.getEntriesByType("resource").map(function(e){ return e.name; })
    });
    document.body.appendChild(pre);
  }, 1000); });
})();
</script>"""


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with no network: in an empty network namespace when we may
    make one, and with every connection sent to a proxy that does not exist."""
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM,
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--proxy-server=http://127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={profile}",
        *args,
    ]
    if os.geteuid() == 0:
        cmd.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        if shutil.which("unshare"):
            cmd = ["unshare", "--net", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def probe(report: Path, tmp: Path) -> dict:
    text = report.read_text(encoding="utf-8")
    page = tmp / f"probed-{report.name}"
    page.write_text(text.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    r = chromium(
        ["--virtual-time-budget=15000", "--window-size=1280,1600", "--dump-dom", page.as_uri()],
        tmp / "profile-dom",
    )
    m = re.search(r'<pre id="__probe">(.*?)</pre>', r.stdout, re.S)
    assert m, f"the probe did not report (exit {r.returncode}); stderr:\n{r.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


def screenshot(report: Path, tmp: Path) -> np.ndarray:
    import matplotlib.pyplot as plt

    png = tmp / f"{report.stem}.png"
    r = chromium(
        [
            "--virtual-time-budget=15000",
            "--window-size=1280,2400",
            f"--screenshot={png}",
            report.as_uri(),
        ],
        tmp / "profile-shot",
    )
    assert png.is_file(), f"no screenshot (exit {r.returncode}): {r.stderr[-2000:]}"
    return plt.imread(png)


def check_in_browser(report: Path, tmp: Path, kinds: list[str]) -> dict:
    text = report.read_text(encoding="utf-8")
    assert external_refs(text) == []
    p = probe(report, tmp)
    assert p["plotly"] == "object", "plotly.js did not load"
    assert p["errors"] == []
    assert p["resources"] == [], f"the page loaded resources: {p['resources']}"
    charts = p["charts"]
    assert [c["kind"] for c in charts] == kinds
    for c in charts:
        assert c["svg"] >= 1 and c["width"] > 300 and c["height"] > 200, c
        assert c["data"] >= 1, c
        assert c["traces"] + c["heatmaps"] >= 1 and c["marks"] + c["heatmaps"] >= 1, c
    img = screenshot(report, tmp)
    grey = img[..., :3].mean(axis=2)
    assert grey.std() > 0.05, "the screenshot is (nearly) one colour"
    colours = np.unique((img[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50, f"the screenshot has only {len(colours)} colours"
    return p


def _kinds_in(report: Path) -> list[str]:
    return re.findall(r'data-chart="([^"]+)"', report.read_text(encoding="utf-8"))


def test_run_report_in_chromium(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    out = tmp_path / "run.html"
    invoke(["report", str(run), "-o", str(out), "--no-progress"])
    check_in_browser(out, tmp_path, ["run", "flow-bars", "cdf"])


def test_sweep_store_report_with_comparison_in_chromium(tmp_path: Path) -> None:
    a, b = make_store(tmp_path, "a", 1), make_store(tmp_path, "b", 2)
    out = tmp_path / "store.html"
    invoke(["report", str(a), "--compare", str(b), "-o", str(out), "--no-progress"])
    kinds = _kinds_in(out)
    for k in ("jfi-line", "jfi-box", "jfi-surface", "flow-bars"):
        assert k in kinds
    check_in_browser(out, tmp_path, kinds)
    assert "Comparison: A = a:report-sweep/sim" in out.read_text(encoding="utf-8")


def test_repro_store_report_in_chromium(tmp_path: Path) -> None:
    store = make_repro(tmp_path)
    out = tmp_path / "repro.html"
    invoke(["report", str(store), "-o", str(out), "--no-progress"])
    text = out.read_text(encoding="utf-8")
    assert "<h2>Reproduction</h2>" in text and "repro-vegas-quick" in text
    # every row of the repro table is in the report, with its verdict
    import csv

    with (store / "repro-vegas-quick.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        assert html.escape(row["row"]) in text
    check_in_browser(out, tmp_path, _kinds_in(out))
