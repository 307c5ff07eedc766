//! Client mode: open every scheduled connection at its time, send its bytes, close, and
//! record what happened (JSON on stdout).
//!
//! One thread per connection, started by the scheduler at the flow's start time: a
//! connection blocks only its own thread, so hundreds of arrivals per second keep their
//! times however slowly earlier flows finish. Per flow: socket → `TCP_CONGESTION` →
//! bind (address and/or the scheduled port) → clock (`connect_ns`, the SYN time) → connect → write `size` bytes →
//! `shutdown(SHUT_WR)` → read until the server closes (it has then read every byte) →
//! `TCP_INFO` (retransmissions, timeouts) and the congestion control read back → close.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tcpfair_linkem::sys;

use crate::schedule::{Flow, Schedule};
use crate::sock::{self, mono_ns, Socket};

#[derive(Debug, Clone, Default, Serialize)]
pub struct Record {
    pub id: u64,
    /// Scheduled start (offset from t0) and the CLOCK_MONOTONIC time connect() was called.
    pub start_ns: i64,
    /// The scheduled size (bytes to send).
    pub size: u64,
    pub connect_ns: Option<i64>,
    pub local_port: Option<u16>,
    pub bytes_sent: u64,
    /// When the server's close was seen (every byte was read by then).
    pub done_ns: Option<i64>,
    /// The congestion control the socket used, read back after connect.
    pub cca: Option<String>,
    pub total_retrans: Option<u32>,
    pub timeouts: Option<u16>,
    pub error: Option<String>,
}

const CHUNK: usize = 64 * 1024;

fn transfer(f: &Flow, rec: &Mutex<Record>) -> Result<(), String> {
    let set = |u: &dyn Fn(&mut Record)| u(&mut rec.lock().unwrap_or_else(|e| e.into_inner()));
    let s = Socket::new().map_err(|e| format!("socket: {e}"))?;
    s.set_congestion(&f.cca)
        .map_err(|e| format!("TCP_CONGESTION {:?}: {e}", f.cca))?;
    if f.src.is_some() || f.sport.is_some() {
        let at = SocketAddrV4::new(f.src.unwrap_or(Ipv4Addr::UNSPECIFIED), f.sport.unwrap_or(0));
        s.bind(&at).map_err(|e| format!("bind {at}: {e}"))?;
    }
    let t = mono_ns();
    set(&|r| r.connect_ns = Some(t));
    let mut st: TcpStream = s
        .connect(&f.dst)
        .map_err(|e| format!("connect {}: {e}", f.dst))?;
    let port = st.local_addr().map(|a| a.port()).ok();
    let cca = sock::congestion(&st).ok();
    set(&|r| {
        r.local_port = port;
        r.cca = cca.clone();
    });
    let buf = [0u8; CHUNK];
    let mut left = f.size;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        st.write_all(&buf[..n]).map_err(|e| format!("write: {e}"))?;
        left -= n as u64;
        set(&|r| r.bytes_sent = f.size - left);
    }
    st.shutdown(Shutdown::Write)
        .map_err(|e| format!("shutdown: {e}"))?;
    let mut sink = [0u8; 512];
    loop {
        match st.read(&mut sink) {
            Ok(0) => break,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("waiting for the server to close: {e}")),
        }
    }
    let done = mono_ns();
    let info = sock::tcp_info(&st).ok().flatten();
    set(&|r| {
        r.done_ns = Some(done);
        r.total_retrans = info.map(|i| i.total_retrans);
        r.timeouts = info.and_then(|i| i.timeouts);
    });
    Ok(())
}

fn sleep_until(t: i64) {
    loop {
        let now = mono_ns();
        if now >= t || sys::stop_requested() {
            return;
        }
        // at most 50 ms at a time, so a stop request is seen promptly
        std::thread::sleep(Duration::from_nanos((t - now).min(50_000_000) as u64));
    }
}

/// Run the schedule; returns the records in schedule order. Stops early (unfinished flows
/// get an error) when SIGTERM/SIGINT/SIGHUP arrives.
pub fn run(s: &Schedule) -> Vec<Record> {
    let t0 = if s.t0_mono_ns > 0 {
        s.t0_mono_ns
    } else {
        mono_ns()
    };
    let recs: Vec<Arc<Mutex<Record>>> = s
        .flows
        .iter()
        .map(|f| {
            Arc::new(Mutex::new(Record {
                id: f.id,
                start_ns: f.start_ns,
                size: f.size,
                ..Record::default()
            }))
        })
        .collect();
    let mut handles = Vec::with_capacity(s.flows.len());
    for (i, (f, rec)) in s.flows.iter().zip(&recs).enumerate() {
        sleep_until(t0 + f.start_ns);
        if sys::stop_requested() {
            break;
        }
        let (f, rec) = (f.clone(), Arc::clone(rec));
        let h = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                if let Err(e) = transfer(&f, &rec) {
                    rec.lock().unwrap_or_else(|e| e.into_inner()).error = Some(e);
                }
            });
        if let Err(e) = h.as_ref() {
            recs[i].lock().unwrap_or_else(|e| e.into_inner()).error =
                Some(format!("cannot start a thread: {e}"));
        }
        handles.push(h);
    }
    while !sys::stop_requested()
        && handles
            .iter()
            .any(|h| h.as_ref().is_ok_and(|h| !h.is_finished()))
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    recs.iter()
        .map(|r| {
            let mut r = r.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if r.done_ns.is_none() && r.error.is_none() {
                r.error = Some("stopped before the flow completed".into());
            }
            r
        })
        .collect()
}
