//! RTT probe: time a TCP connect to a port nobody listens on. The receiver's kernel
//! answers the SYN with a RST, so one probe measures exactly one round trip through the
//! emulated path with no user-space process on the far side (unlike ICMP or UDP echo).
//! The prober watches its socket without sleeping around the expected answer (see
//! `SPIN_NS`), so its own wake-up latency is not counted as path delay.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::sys;

pub struct ProbeResult {
    pub rtt_ns: Vec<i64>,
    pub errors: Vec<String>,
}

/// How long before (and after) the shortest round trip seen so far a probe watches its
/// socket without sleeping. A thread woken from a sleep of a round trip on an idle
/// (virtual) machine runs 0.1–0.3 ms after the answer came (more at times): that is the
/// prober's own wake-up, not the path's delay, and a TCP sender measures its RTT in the
/// kernel as the ACK arrives, without it. Watching without sleeping from 2 ms before the
/// expected answer takes the wake-up out of the probe; the first probe, with nothing to
/// expect yet, sleeps (the median of the probes is what is reported), and so does a probe
/// whose answer has not come 2 ms after the expected time (no spinning on a dead path).
const SPIN_NS: i64 = 2_000_000;

pub fn probe(to: SocketAddr, count: usize, interval: Duration, timeout: Duration) -> ProbeResult {
    let mut r = ProbeResult {
        rtt_ns: Vec::new(),
        errors: Vec::new(),
    };
    let SocketAddr::V4(to) = to else {
        r.errors.push(format!("{to}: only IPv4 is probed"));
        return r;
    };
    let timeout_ns = timeout.as_nanos() as i64;
    let mut shortest: Option<i64> = None;
    for i in 0..count {
        if i > 0 {
            std::thread::sleep(interval);
        }
        match one(to, shortest, timeout_ns) {
            Ok(ns) => {
                shortest = Some(shortest.map_or(ns, |s| s.min(ns)));
                r.rtt_ns.push(ns);
            }
            Err(e) => r.errors.push(e),
        }
    }
    r
}

/// One SYN → RST round trip in ns.
fn one(to: std::net::SocketAddrV4, shortest: Option<i64>, timeout_ns: i64) -> Result<i64, String> {
    let t = Instant::now();
    let elapsed = || t.elapsed().as_nanos() as i64;
    let sock = sys::tcp_connect_start(to).map_err(|e| e.to_string())?;
    let fd = [sock.as_raw_fd()];
    let mut answered = false;
    if let Some(s) = shortest {
        let sleep = (s - SPIN_NS - elapsed()).min(timeout_ns);
        if sleep > 0 {
            answered =
                sys::poll_events(&fd, libc::POLLOUT, Some(sleep)).map_err(|e| e.to_string())? > 0;
        }
        let spin_until = (s + SPIN_NS).min(timeout_ns);
        while !answered && elapsed() < spin_until {
            answered =
                sys::poll_events(&fd, libc::POLLOUT, Some(0)).map_err(|e| e.to_string())? > 0;
        }
    }
    if !answered {
        let left = timeout_ns - elapsed();
        if left > 0 {
            answered =
                sys::poll_events(&fd, libc::POLLOUT, Some(left)).map_err(|e| e.to_string())? > 0;
        }
    }
    let ns = elapsed();
    if !answered {
        return Err(format!(
            "{to}: no answer within {:.1} s",
            timeout_ns as f64 / 1e9
        ));
    }
    match sys::socket_error(fd[0]).map_err(|e| e.to_string())? {
        Some(e) if e.kind() == io::ErrorKind::ConnectionRefused => Ok(ns),
        Some(e) => Err(e.to_string()),
        None => Err(format!("{to} accepted the connection; probe a closed port")),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_closed_loopback_port_answers_every_probe_with_a_reset() {
        // a port that was just free: the kernel answers the SYN with a RST at once
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let to = SocketAddr::from(([127, 0, 0, 1], port));
        let r = probe(to, 5, Duration::from_millis(1), Duration::from_secs(2));
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert_eq!(r.rtt_ns.len(), 5);
        // probes 2–5 expect the answer and watch without sleeping: a loopback round trip
        // is microseconds, far below the 2 s timeout and below one timer tick
        assert!(
            r.rtt_ns.iter().all(|&ns| ns > 0 && ns < 50_000_000),
            "{:?}",
            r.rtt_ns
        );
        let j = to_json(&r);
        assert_eq!(j["median_ns"].as_i64(), {
            let mut s = r.rtt_ns.clone();
            s.sort_unstable();
            Some(s[2])
        });
    }

    #[test]
    fn a_listening_port_is_reported_not_timed() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let r = probe(
            l.local_addr().unwrap(),
            2,
            Duration::from_millis(1),
            Duration::from_secs(2),
        );
        assert!(r.rtt_ns.is_empty());
        assert_eq!(r.errors.len(), 2);
        assert!(r.errors[0].contains("accepted the connection; probe a closed port"));
    }
}
