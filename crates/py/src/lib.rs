//! PyO3 bindings: the only Rust that knows about Python. Converts types and errors; no logic.

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;
use tcpfair_sim::cc::registry;
use tcpfair_sim::config::Stack;

/// Run one resolved scenario (JSON text from `tcpfair.spec`) on the simulator, with the GIL
/// released. Returns a dict of column arrays (see `tcpfair.backends.sim`).
#[pyfunction]
fn simulate<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let cfg = tcpfair_sim::Config::from_json(config_json).map_err(to_py_err)?;
    let out = py.detach(|| tcpfair_sim::run(&cfg)).map_err(to_py_err)?;
    output_to_dict(py, out)
}

/// A simulation run in chunks, so that the caller can report progress between them.
/// `advance(until_ns)` runs with the GIL released; `finish()` returns the same dict as
/// `simulate`.
#[pyclass]
struct Simulation {
    sim: Option<tcpfair_sim::sim::Sim>,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        let cfg = tcpfair_sim::Config::from_json(config_json).map_err(to_py_err)?;
        let sim = tcpfair_sim::sim::Sim::new(&cfg).map_err(to_py_err)?;
        Ok(Simulation { sim: Some(sim) })
    }

    /// Simulate up to `until_ns`; returns True when the run is complete.
    fn advance(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<bool> {
        let sim = self
            .sim
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("simulation already finished"))?;
        Ok(py.detach(|| sim.run_until(tcpfair_sim::units::SimTime(until_ns))))
    }

    /// Simulated time reached (ns) and the end of the run (ns).
    fn progress(&self) -> PyResult<(u64, u64)> {
        let sim = self
            .sim
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("simulation already finished"))?;
        Ok((sim.now().as_nanos(), sim.end().as_nanos()))
    }

    /// Run to the end and return the output dict.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut sim = self
            .sim
            .take()
            .ok_or_else(|| PyValueError::new_err("simulation already finished"))?;
        let out = py.detach(move || {
            sim.run_until(sim.end());
            sim.finish()
        });
        output_to_dict(py, out)
    }
}

fn to_py_err(e: tcpfair_sim::SimError) -> PyErr {
    match e {
        tcpfair_sim::SimError::Config { key, message } => {
            let err = PyValueError::new_err(if key.is_empty() {
                message.clone()
            } else {
                format!("{key}: {message}")
            });
            Python::attach(|py| {
                let _ = err.value(py).setattr("key", key);
            });
            err
        }
    }
}

fn output_to_dict(py: Python<'_>, out: tcpfair_sim::Output) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);

    let flows = PyDict::new(py);
    let col = |f: fn(&tcpfair_sim::output::FlowSummary) -> u64| {
        out.flows.iter().map(f).collect::<Vec<u64>>()
    };
    flows.set_item(
        "id",
        out.flows
            .iter()
            .map(|f| f.id)
            .collect::<Vec<u32>>()
            .into_pyarray(py),
    )?;
    flows.set_item("bytes_sent", col(|f| f.bytes_sent).into_pyarray(py))?;
    flows.set_item(
        "bytes_retransmitted",
        col(|f| f.bytes_retransmitted).into_pyarray(py),
    )?;
    flows.set_item(
        "bytes_delivered",
        col(|f| f.bytes_delivered).into_pyarray(py),
    )?;
    flows.set_item(
        "bytes_delivered_window",
        col(|f| f.bytes_delivered_window).into_pyarray(py),
    )?;
    flows.set_item("retransmits", col(|f| f.retransmits).into_pyarray(py))?;
    flows.set_item("timeouts", col(|f| f.timeouts).into_pyarray(py))?;
    flows.set_item(
        "completion_ns",
        out.flows
            .iter()
            .map(|f| f.completion_ns.map_or(-1, |v| v as i64))
            .collect::<Vec<i64>>()
            .into_pyarray(py),
    )?;
    d.set_item("flows", flows)?;

    let s = out.samples;
    let samples = PyDict::new(py);
    samples.set_item("flow", s.flow.into_pyarray(py))?;
    samples.set_item("t_ns", s.t_ns.into_pyarray(py))?;
    samples.set_item("delivered_bytes", s.delivered_bytes.into_pyarray(py))?;
    samples.set_item("cwnd_bytes", s.cwnd_bytes.into_pyarray(py))?;
    samples.set_item("srtt_ns", s.srtt_ns.into_pyarray(py))?;
    samples.set_item("retransmits", s.retransmits.into_pyarray(py))?;
    samples.set_item("inflight_bytes", s.inflight_bytes.into_pyarray(py))?;
    d.set_item("samples", samples)?;

    // A run with a reverse bottleneck adds the ACK-drop counts and the reverse link's
    // series and totals; a run without one keeps exactly the keys it always had.
    let reverse = out.reverse_link.is_some();
    d.set_item("link", link_dict(py, out.link, reverse)?)?;
    d.set_item("link_totals", totals_dict(py, &out.link_totals, reverse)?)?;
    if let (Some(l), Some(t)) = (out.reverse_link, out.reverse_link_totals) {
        d.set_item("reverse_link", link_dict(py, l, true)?)?;
        d.set_item("reverse_link_totals", totals_dict(py, &t, true)?)?;
    }

    let st = out.stats;
    let stats = PyDict::new(py);
    stats.set_item("events", st.events)?;
    stats.set_item("bottleneck_packets", st.bottleneck_packets)?;
    stats.set_item("simulated_ns", st.simulated_ns)?;
    d.set_item("stats", stats)?;

    // short flows (issue 10 §3): one row per arrival; empty without arrivals
    let sf = out.short_flows;
    let short = PyDict::new(py);
    short.set_item("group", sf.group.into_pyarray(py))?;
    short.set_item("start_ns", sf.start_ns.into_pyarray(py))?;
    short.set_item("size_bytes", sf.size_bytes.into_pyarray(py))?;
    short.set_item("rtt_ns", sf.rtt_ns.into_pyarray(py))?;
    short.set_item("fct_ns", sf.fct_ns.into_pyarray(py))?;
    short.set_item("bytes_delivered", sf.bytes_delivered.into_pyarray(py))?;
    short.set_item("retransmits", sf.retransmits.into_pyarray(py))?;
    short.set_item("timeouts", sf.timeouts.into_pyarray(py))?;
    short.set_item("slots", sf.slots)?;
    d.set_item("short_flows", short)?;
    Ok(d)
}

fn link_dict(
    py: Python<'_>,
    l: tcpfair_sim::output::LinkSamples,
    ack_drops: bool,
) -> PyResult<Bound<'_, PyDict>> {
    let link = PyDict::new(py);
    link.set_item("t_ns", l.t_ns.into_pyarray(py))?;
    link.set_item("queue_bytes", l.queue_bytes.into_pyarray(py))?;
    link.set_item("queue_pkts", l.queue_pkts.into_pyarray(py))?;
    link.set_item("drops", l.drops.into_pyarray(py))?;
    link.set_item("random_losses", l.random_losses.into_pyarray(py))?;
    link.set_item("tx_bytes", l.tx_bytes.into_pyarray(py))?;
    if ack_drops {
        link.set_item("ack_drops", l.ack_drops.into_pyarray(py))?;
    }
    Ok(link)
}

fn totals_dict<'py>(
    py: Python<'py>,
    t: &tcpfair_sim::output::LinkTotals,
    ack_drops: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let totals = PyDict::new(py);
    totals.set_item("tx_packets", t.tx_packets)?;
    totals.set_item("tx_bytes", t.tx_bytes)?;
    totals.set_item("drops", t.drops)?;
    totals.set_item("random_losses", t.random_losses)?;
    totals.set_item("max_queue_bytes", t.max_queue_bytes)?;
    totals.set_item("max_queue_pkts", t.max_queue_pkts)?;
    totals.set_item("busy_ns", t.busy_ns)?;
    totals.set_item("tx_bytes_window", t.tx_bytes_window)?;
    if ack_drops {
        totals.set_item("ack_drops", t.ack_drops)?;
        totals.set_item("ack_tx_packets", t.ack_tx_packets)?;
        totals.set_item("ack_tx_bytes", t.ack_tx_bytes)?;
    }
    Ok(totals)
}

/// Names of the congestion controls the simulator implements (Linux stack).
#[pyfunction]
fn congestion_controls() -> Vec<&'static str> {
    registry::names_in(Stack::Linux)
}

/// The registry of congestion controls (`tcpfair_sim::cc::registry`): a list of
/// `{"name", "summary", "kernel", "stacks": {stack: [parameter, ...]}}` (`kernel`: Linux's
/// module name, None when mainline Linux lacks it), each parameter
/// `{"name", "type", "default", "min", "max", "unit", "meaning", "allowed"}` (`default`
/// None: unset; `allowed` as error messages say it).
#[pyfunction]
fn cc_registry(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    registry::REGISTRY
        .iter()
        .map(|info| {
            let d = PyDict::new(py);
            d.set_item("name", info.name)?;
            d.set_item("summary", info.summary)?;
            d.set_item("kernel", info.kernel)?;
            let stacks = PyDict::new(py);
            for sp in info.stacks {
                let params = sp
                    .params
                    .iter()
                    .map(|s| {
                        let p = PyDict::new(py);
                        p.set_item("name", s.name)?;
                        p.set_item("type", s.kind.name())?;
                        p.set_item("default", s.default)?;
                        p.set_item("min", s.min)?;
                        p.set_item("max", s.max)?;
                        p.set_item("unit", s.unit)?;
                        p.set_item("meaning", s.meaning)?;
                        p.set_item("allowed", s.allowed())?;
                        Ok(p)
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                stacks.set_item(sp.stack.name(), params)?;
            }
            d.set_item("stacks", stacks)?;
            Ok(d)
        })
        .collect()
}

/// Check a flow's parameters against the registry and the algorithm's own rules: None
/// when they are fine, else `(parameter, message)` (parameter "" when none in particular).
#[pyfunction]
fn check_cc_params(
    cca: &str,
    stack: &str,
    params: BTreeMap<String, f64>,
) -> Option<(String, String)> {
    let Some(stack) = Stack::from_name(stack) else {
        return Some((String::new(), format!("unknown stack {stack:?}")));
    };
    registry::check(cca, stack, &params)
        .err()
        .map(|e| (e.param, e.message))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Built with the simulator's profile (`--cfg tcpfair_pgo` next to `-Cprofile-use`:
    // build_backend/tcpfair_build.py); `tcpfair bench` says which build it timed.
    m.add("PROFILE_GUIDED", cfg!(tcpfair_pgo))?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls, m)?)?;
    m.add_function(wrap_pyfunction!(cc_registry, m)?)?;
    m.add_function(wrap_pyfunction!(check_cc_params, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
