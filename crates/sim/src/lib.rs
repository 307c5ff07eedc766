//! tcpfair-sim: a deterministic, packet-level simulator of a TCP dumbbell.
//!
//! Pure Rust: no I/O, no clock, no Python. `run(&Config)` simulates a whole scenario and
//! returns column arrays (`Output`). Same config and seed ⇒ identical output.

pub mod aqm;
pub mod cc;
pub mod config;
pub mod event;
pub mod link;
pub mod measure;
pub mod ns2;
pub mod output;
pub mod packet;
pub mod rng;
pub mod sim;
pub mod tcp;
pub mod units;

pub use config::Config;
pub use output::Output;

/// Errors the simulator reports for a scenario it cannot run. `key` is the dotted scenario
/// key the problem comes from (e.g. `flows.1.cca`), or empty when none applies.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    Config { key: String, message: String },
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Config { key, message } if key.is_empty() => write!(f, "{message}"),
            SimError::Config { key, message } => write!(f, "{key}: {message}"),
        }
    }
}

impl std::error::Error for SimError {}

/// Simulate a whole scenario.
pub fn run(cfg: &Config) -> Result<Output, SimError> {
    Ok(sim::Sim::new(cfg)?.run())
}
