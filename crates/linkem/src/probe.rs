//! RTT probe: time a TCP connect to a port nobody listens on. The receiver's kernel
//! answers the SYN with a RST, so one probe measures exactly one round trip through the
//! emulated path with no user-space process on the far side (unlike ICMP or UDP echo).

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::json;

pub struct ProbeResult {
    pub rtt_ns: Vec<i64>,
    pub errors: Vec<String>,
}

pub fn probe(to: SocketAddr, count: usize, interval: Duration, timeout: Duration) -> ProbeResult {
    let mut r = ProbeResult {
        rtt_ns: Vec::new(),
        errors: Vec::new(),
    };
    for i in 0..count {
        if i > 0 {
            std::thread::sleep(interval);
        }
        let t = Instant::now();
        match TcpStream::connect_timeout(&to, timeout) {
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                r.rtt_ns.push(t.elapsed().as_nanos() as i64)
            }
            Err(e) => r.errors.push(e.to_string()),
            Ok(_) => r
                .errors
                .push(format!("{to} accepted the connection; probe a closed port")),
        }
    }
    r
}

pub fn to_json(r: &ProbeResult) -> serde_json::Value {
    let mut s = r.rtt_ns.clone();
    s.sort_unstable();
    let median = if s.is_empty() {
        None
    } else {
        Some(s[s.len() / 2])
    };
    json!({"rtt_ns": r.rtt_ns, "min_ns": s.first(), "median_ns": median, "max_ns": s.last(), "errors": r.errors})
}
