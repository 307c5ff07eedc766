//! tcpfair-linkem as a library: the relay's modules, and `sys`, the thin system-call
//! wrappers that tcpfair's traffic generator (crates/traffic) reuses for its signal
//! handling and parent-death signal.

pub mod config;
pub mod link;
pub mod probe;
pub mod relay;
pub mod sys;
