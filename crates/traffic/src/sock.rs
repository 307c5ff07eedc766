//! The few socket and clock calls the generator needs beyond `std`: a TCP socket whose
//! congestion control is set *before* `connect()` (so the SYN already belongs to it),
//! `TCP_INFO` and `TCP_CONGESTION` read back, and CLOCK_MONOTONIC in nanoseconds.
//!
//! The only module with `unsafe` code; each block is one libc call on memory owned by
//! the caller, with lengths passed exactly.

use std::io;
use std::net::{SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `TCP_CONGESTION` (linux/tcp.h).
const TCP_CONGESTION: libc::c_int = 13;
/// `TCP_INFO` (linux/tcp.h).
const TCP_INFO: libc::c_int = 11;
/// Offsets in `struct tcp_info` (linux/tcp.h): `tcpi_total_retrans` (u32) and, since
/// Linux 6.7, `tcpi_total_rto` (u16: retransmission timeouts of this connection).
const OFF_TOTAL_RETRANS: usize = 100;
const OFF_TOTAL_RTO: usize = 240;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// CLOCK_MONOTONIC in ns: the clock every network namespace shares, so a time taken by
/// the client in one namespace and one taken by the server in another can be subtracted.
pub fn mono_ns() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

fn sockaddr(a: &SocketAddrV4) -> libc::sockaddr_in {
    // SAFETY: a zeroed sockaddr_in is a valid value; the fields are filled below.
    let mut s: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    s.sin_family = libc::AF_INET as libc::sa_family_t;
    s.sin_port = a.port().to_be();
    s.sin_addr.s_addr = u32::from(*a.ip()).to_be();
    s
}

/// A fresh blocking IPv4 TCP socket, not yet connected.
pub struct Socket(OwnedFd);

impl Socket {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain socket(2); the descriptor is owned right below.
        let fd =
            cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: `fd` is fresh and owned by nobody else.
        Ok(Socket(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Set the congestion control by name (`TCP_CONGESTION`).
    pub fn set_congestion(&self, name: &str) -> io::Result<()> {
        // SAFETY: `name` is valid for `name.len()` bytes for the duration of the call.
        cvt(unsafe {
            libc::setsockopt(
                self.raw(),
                libc::IPPROTO_TCP,
                TCP_CONGESTION,
                name.as_ptr().cast(),
                name.len() as libc::socklen_t,
            )
        })?;
        Ok(())
    }

    /// Bind to a local address (port 0: the kernel picks one).
    pub fn bind(&self, a: &SocketAddrV4) -> io::Result<()> {
        let s = sockaddr(a);
        // SAFETY: `s` is an initialised sockaddr_in and its exact size is passed.
        cvt(unsafe {
            libc::bind(
                self.raw(),
                (&s as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        })?;
        Ok(())
    }

    /// Connect (blocking: the SYN leaves inside this call) and hand the socket to `std`.
    pub fn connect(self, a: &SocketAddrV4) -> io::Result<TcpStream> {
        let s = sockaddr(a);
        loop {
            // SAFETY: as in `bind`.
            let r = unsafe {
                libc::connect(
                    self.raw(),
                    (&s as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            };
            match cvt(r) {
                Ok(_) => return Ok(TcpStream::from(self.0)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The congestion control a connected socket really uses (`TCP_CONGESTION` read back).
pub fn congestion(s: &TcpStream) -> io::Result<String> {
    let mut buf = [0u8; 32];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` has `len` writable bytes; the kernel writes at most that many.
    cvt(unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    let b = &buf[..(len as usize).min(buf.len())];
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    Ok(String::from_utf8_lossy(&b[..end]).into_owned())
}

/// Counters from `TCP_INFO`: retransmitted segments, and retransmission timeouts when the
/// kernel reports them (Linux ≥ 6.7; None on older kernels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    pub total_retrans: u32,
    pub timeouts: Option<u16>,
}

/// Parse the bytes the kernel returned for `TCP_INFO` (its length tells which fields the
/// running kernel has).
pub fn parse_info(b: &[u8]) -> Option<Info> {
    let u32_at = |o: usize| {
        b.get(o..o + 4)
            .map(|x| u32::from_ne_bytes(x.try_into().unwrap()))
    };
    let u16_at = |o: usize| {
        b.get(o..o + 2)
            .map(|x| u16::from_ne_bytes(x.try_into().unwrap()))
    };
    Some(Info {
        total_retrans: u32_at(OFF_TOTAL_RETRANS)?,
        timeouts: u16_at(OFF_TOTAL_RTO),
    })
}

pub fn tcp_info(s: &TcpStream) -> io::Result<Option<Info>> {
    let mut buf = [0u8; 512];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` has `len` writable bytes; the kernel writes at most that many.
    cvt(unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    Ok(parse_info(&buf[..(len as usize).min(buf.len())]))
}

/// Wait until `fd` is readable or `timeout_ms` passes; a signal ends the wait early.
pub fn wait_readable(fd: RawFd, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(r > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_info_fields_by_offset_and_length() {
        let mut b = vec![0u8; 248];
        b[100..104].copy_from_slice(&7u32.to_ne_bytes());
        b[240..242].copy_from_slice(&2u16.to_ne_bytes());
        let i = parse_info(&b).unwrap();
        assert_eq!(
            i,
            Info {
                total_retrans: 7,
                timeouts: Some(2)
            }
        );
        // an older kernel's shorter struct: no RTO count
        assert_eq!(parse_info(&b[..232]).unwrap().timeouts, None);
        assert_eq!(parse_info(&b[..100]), None);
    }

    #[test]
    fn monotonic_clock_advances() {
        let a = mono_ns();
        let b = mono_ns();
        assert!(a > 0 && b >= a);
    }
}
