//! Server mode: accept any number of connections, read each to EOF, and record per
//! connection the peer, bytes received and the CLOCK_MONOTONIC time of the last byte
//! (JSON on stdout when SIGTERM/SIGINT/SIGHUP arrives).
//!
//! One thread per connection; each read records its time, so `last_byte_ns` is when the
//! read that returned the final bytes came back (the FCT's end, minus the scheduling delay
//! of this thread). The server closes after EOF, which tells the client it is done.

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tcpfair_linkem::sys;

use crate::sock::{mono_ns, wait_readable};

#[derive(Debug, Clone, Default, Serialize)]
pub struct Conn {
    pub peer_ip: String,
    pub peer_port: u16,
    pub accept_ns: i64,
    pub first_byte_ns: Option<i64>,
    pub last_byte_ns: Option<i64>,
    pub bytes: u64,
    /// The client closed its side (every byte it sent was read).
    pub eof: bool,
    pub error: Option<String>,
}

fn serve(mut st: std::net::TcpStream, c: &Mutex<Conn>) {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match st.read(&mut buf) {
            Ok(0) => {
                c.lock().unwrap_or_else(|e| e.into_inner()).eof = true;
                return;
            }
            Ok(n) => {
                let t = mono_ns();
                let mut g = c.lock().unwrap_or_else(|e| e.into_inner());
                g.first_byte_ns.get_or_insert(t);
                g.last_byte_ns = Some(t);
                g.bytes += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                c.lock().unwrap_or_else(|e| e.into_inner()).error = Some(e.to_string());
                return;
            }
        }
    }
}

/// Serve on `addr` until a stop signal; returns every connection seen, in accept order.
pub fn run(addr: SocketAddr, ready: impl FnOnce()) -> std::io::Result<Vec<Conn>> {
    let l = TcpListener::bind(addr)?;
    l.set_nonblocking(true)?;
    ready();
    let mut conns: Vec<Arc<Mutex<Conn>>> = Vec::new();
    while !sys::stop_requested() {
        if !wait_readable(l.as_raw_fd(), 50)? {
            continue;
        }
        loop {
            match l.accept() {
                Ok((st, peer)) => {
                    st.set_nonblocking(false)?;
                    let c = Arc::new(Mutex::new(Conn {
                        peer_ip: peer.ip().to_string(),
                        peer_port: peer.port(),
                        accept_ns: mono_ns(),
                        ..Conn::default()
                    }));
                    conns.push(Arc::clone(&c));
                    std::thread::Builder::new()
                        .stack_size(256 * 1024)
                        .spawn(move || serve(st, &c))?;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => break,
                Err(e) => return Err(e),
            }
        }
    }
    Ok(conns
        .iter()
        .map(|c| c.lock().unwrap_or_else(|e| e.into_inner()).clone())
        .collect())
}
