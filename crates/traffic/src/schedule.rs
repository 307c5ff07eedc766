//! The client's input: which connections to open, when, from where to where, how many
//! bytes each sends and with which congestion control. Written by tcpfair's kernel
//! backend from the scenario's arrival draws (the same ones the simulator uses).
//!
//! ```json
//! {"t0_mono_ns": 123456789,
//!  "flows": [{"id": 0, "start_ns": 0, "size": 20000, "cca": "cubic",
//!             "src": "10.1.1.2", "dst": "10.2.1.2:6201"}]}
//! ```
//!
//! `start_ns` is an offset from `t0_mono_ns` (CLOCK_MONOTONIC; 0 or absent: when the
//! client starts). `src` (optional) is the local address to bind; `sport` (optional, unique
//! within the schedule) the local port to bind, else the kernel chooses one. The link
//! emulator can then give each flow its own delay by its port.

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddrV4};

use serde::Deserialize;

/// Linux's `TCP_CA_NAME_MAX` is 16 bytes including the terminating NUL.
const CA_NAME_MAX: usize = 15;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub id: u64,
    pub start_ns: i64,
    pub size: u64,
    pub cca: String,
    #[serde(default)]
    pub src: Option<Ipv4Addr>,
    #[serde(default)]
    pub sport: Option<u16>,
    pub dst: SocketAddrV4,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    #[serde(default)]
    pub t0_mono_ns: i64,
    pub flows: Vec<Flow>,
}

impl Schedule {
    /// Parse and check a schedule; flows come back sorted by start time (then id).
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let mut s: Schedule = serde_json::from_str(text).map_err(|e| e.to_string())?;
        s.check()?;
        s.flows.sort_by_key(|f| (f.start_ns, f.id));
        Ok(s)
    }

    fn check(&self) -> Result<(), String> {
        if self.t0_mono_ns < 0 {
            return Err(format!("t0_mono_ns must be >= 0, got {}", self.t0_mono_ns));
        }
        let mut ids = HashSet::new();
        let mut sports = HashSet::new();
        for f in &self.flows {
            let at = format!("flow {}", f.id);
            if !ids.insert(f.id) {
                return Err(format!("{at}: the id appears twice"));
            }
            if f.start_ns < 0 {
                return Err(format!("{at}: start_ns must be >= 0, got {}", f.start_ns));
            }
            if f.size == 0 {
                return Err(format!("{at}: size must be at least 1 byte"));
            }
            let name_ok = !f.cca.is_empty()
                && f.cca.len() <= CA_NAME_MAX
                && f.cca
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'_');
            if !name_ok {
                return Err(format!(
                    "{at}: cca {:?} is not a congestion-control name (1-{CA_NAME_MAX} letters, digits, _)",
                    f.cca
                ));
            }
            if f.dst.port() == 0 {
                return Err(format!("{at}: dst {} has port 0", f.dst));
            }
            match f.sport {
                Some(0) => return Err(format!("{at}: sport must be 1-65535, got 0")),
                Some(p) if !sports.insert(p) => {
                    return Err(format!("{at}: sport {p} is already another flow's"))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str =
        r#"{"id": 3, "start_ns": 5, "size": 100, "cca": "cubic", "dst": "10.2.0.2:6201"}"#;

    fn with(flows: &str) -> String {
        format!(r#"{{"t0_mono_ns": 10, "flows": [{flows}]}}"#)
    }

    #[test]
    fn parses_and_sorts_by_start() {
        let text = with(&format!(
            r#"{ONE}, {{"id": 1, "start_ns": 2, "size": 7, "cca": "reno", "src": "10.1.0.2", "dst": "10.2.0.2:6201"}}"#
        ));
        let s = Schedule::parse(&text).unwrap();
        assert_eq!(s.t0_mono_ns, 10);
        assert_eq!(s.flows.iter().map(|f| f.id).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(s.flows[0].src, Some(Ipv4Addr::new(10, 1, 0, 2)));
        assert_eq!(s.flows[1].src, None);
        assert_eq!(s.flows[1].sport, None);
        assert_eq!(s.flows[1].dst, "10.2.0.2:6201".parse().unwrap());
        assert_eq!((s.flows[1].start_ns, s.flows[1].size), (5, 100));
    }

    #[test]
    fn t0_defaults_to_zero_and_an_empty_schedule_is_fine() {
        let s = Schedule::parse(r#"{"flows": []}"#).unwrap();
        assert_eq!((s.t0_mono_ns, s.flows.len()), (0, 0));
    }

    fn err(text: &str) -> String {
        Schedule::parse(text).unwrap_err()
    }

    #[test]
    fn refuses_bad_flows_naming_the_flow_and_value() {
        assert_eq!(
            err(&with(&format!("{ONE}, {ONE}"))),
            "flow 3: the id appears twice"
        );
        assert_eq!(
            err(&with(&ONE.replace(r#""start_ns": 5"#, r#""start_ns": -1"#))),
            "flow 3: start_ns must be >= 0, got -1"
        );
        assert_eq!(
            err(&with(&ONE.replace(r#""size": 100"#, r#""size": 0"#))),
            "flow 3: size must be at least 1 byte"
        );
        assert!(
            err(&with(&ONE.replace("cubic", "cubic; rm"))).starts_with("flow 3: cca \"cubic; rm\"")
        );
        assert!(err(&with(&ONE.replace("cubic", "averyveryverylongname"))).contains("1-15 letters"));
        assert_eq!(
            err(&with(&ONE.replace("10.2.0.2:6201", "10.2.0.2:0"))),
            "flow 3: dst 10.2.0.2:0 has port 0"
        );
        assert_eq!(
            err(r#"{"t0_mono_ns": -5, "flows": []}"#),
            "t0_mono_ns must be >= 0, got -5"
        );
    }

    #[test]
    fn source_ports_are_optional_and_unique() {
        let port = |id: u64, p: u16| {
            ONE.replace(r#""id": 3"#, &format!(r#""id": {id}"#))
                .replace(r#""cca""#, &format!(r#""sport": {p}, "cca""#))
        };
        let s = Schedule::parse(&with(&format!("{}, {}", port(1, 20000), port(2, 20001)))).unwrap();
        assert_eq!(
            s.flows.iter().map(|f| f.sport).collect::<Vec<_>>(),
            vec![Some(20000), Some(20001)]
        );
        assert_eq!(
            err(&with(&format!("{}, {}", port(1, 20000), port(2, 20000)))),
            "flow 2: sport 20000 is already another flow's"
        );
        assert_eq!(
            err(&with(&port(4, 0))),
            "flow 4: sport must be 1-65535, got 0"
        );
    }

    #[test]
    fn refuses_malformed_documents() {
        assert!(err(&with(&ONE.replace("10.2.0.2:6201", "host:80"))).contains("invalid"));
        assert!(
            err(&with(&ONE.replace(r#""size""#, r#""bytes""#))).contains("unknown field `bytes`")
        );
        assert!(err(r#"{"flows": [{"id": 1}]}"#).contains("missing field"));
        assert!(err("42").contains("invalid type"), "{}", err("42"));
    }
}
