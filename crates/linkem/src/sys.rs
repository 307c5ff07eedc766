//! Thin wrappers around the Linux system calls linkem needs and `std` does not offer.
//!
//! This is the only module with `unsafe` code (see the justification in Cargo.toml). Each
//! block is a single libc call on memory owned by the caller, with lengths passed exactly.

use std::ffi::CString;
use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// `PACKET_VNET_HDR` (linux/if_packet.h): every frame is preceded by a `virtio_net_hdr`
/// carrying GSO and checksum-offload metadata, so partially checksummed or GSO frames
/// survive the trip through user space.
const PACKET_VNET_HDR: libc::c_int = 15;
/// `PACKET_IGNORE_OUTGOING` (Linux ≥ 4.20): do not deliver our own transmissions back to us.
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
/// Size of `struct virtio_net_hdr` (no mergeable-buffers field).
pub const VNET_HDR_LEN: usize = 10;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `value` lives for the duration of the call and its exact size is passed.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// A raw AF_PACKET socket bound to one interface, non-blocking, with kernel receive
/// timestamps (`SO_TIMESTAMPNS`, CLOCK_REALTIME) and the virtio-net header.
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
}

impl PacketSocket {
    pub fn open(ifname: &str) -> io::Result<Self> {
        let cname = CString::new(ifname).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "interface name contains NUL")
        })?;
        // SAFETY: `cname` is a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no interface named {ifname:?}"),
            ));
        }
        let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
        // SAFETY: plain socket(2) call; the returned descriptor is owned below.
        let raw = cvt(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                proto,
            )
        })?;
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = PacketSocket {
            fd,
            ifindex: ifindex as i32,
        };
        setsockopt_int(s.raw(), libc::SOL_PACKET, PACKET_VNET_HDR, 1)?;
        // Best effort: older kernels lack it; `recv` also filters PACKET_OUTGOING frames.
        let _ = setsockopt_int(s.raw(), libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
        setsockopt_int(s.raw(), libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
        // Large buffers so a burst (one BDP of ACKs released at once) is not dropped here.
        // FORCE variants ignore rmem_max; they need CAP_NET_ADMIN, which we have as root.
        let big = 32 << 20;
        if setsockopt_int(s.raw(), libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, big).is_err() {
            setsockopt_int(s.raw(), libc::SOL_SOCKET, libc::SO_RCVBUF, big)?;
        }
        if setsockopt_int(s.raw(), libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, big).is_err() {
            setsockopt_int(s.raw(), libc::SOL_SOCKET, libc::SO_SNDBUF, big)?;
        }
        // SAFETY: zeroed sockaddr_ll is a valid value; we fill the fields bind needs.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = s.ifindex;
        // SAFETY: `sll` is a properly initialised sockaddr_ll and its size is passed.
        cvt(unsafe {
            libc::bind(
                s.raw(),
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        Ok(s)
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Receive one frame (virtio-net header included) into `buf`. Returns the length and
    /// the kernel's receive timestamp in ns (CLOCK_REALTIME), or `None` when nothing is
    /// waiting. Our own outgoing frames are skipped.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, i64)>> {
        loop {
            // SAFETY: zeroed plain-old-data structures.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut cbuf = [0u64; 16]; // 128 bytes, 8-aligned: room for one timespec cmsg
            let mut iov = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            };
            // SAFETY: zeroed msghdr, then every pointer set to memory that outlives the call.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&cbuf);
            // SAFETY: `msg` points to valid buffers of the stated sizes.
            let n = unsafe { libc::recvmsg(self.raw(), &mut msg, libc::MSG_TRUNC) };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock => Ok(None),
                    io::ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            if sll.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            let n = n as usize;
            if n > buf.len() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("frame of {n} bytes does not fit the {} byte buffer (GSO on without --gso?)", buf.len()),
                ));
            }
            let mut ts = None;
            // SAFETY: walking the control messages the kernel wrote into `cbuf` with the
            // libc CMSG helpers, which respect `msg_controllen`.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET
                        && (*c).cmsg_type == libc::SCM_TIMESTAMPNS
                    {
                        let t: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                        ts = Some(t.tv_sec * 1_000_000_000 + t.tv_nsec);
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
            }
            return Ok(Some((n, ts.unwrap_or_else(now_ns))));
        }
    }

    /// Send one frame (virtio-net header first). `Ok(false)` when the kernel has no room.
    pub fn send(&self, frame: &[u8]) -> io::Result<bool> {
        // SAFETY: `frame` is a valid slice of the stated length.
        let n = unsafe { libc::send(self.raw(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) => Ok(false),
                _ => Err(e),
            };
        }
        Ok(true)
    }
}

/// CLOCK_REALTIME in ns (the clock of SO_TIMESTAMPNS).
pub fn now_ns() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut t) };
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// Wait until one of `fds` is readable or `timeout_ns` passes (None: forever).
/// Interruption by a signal is not an error (returns 0).
pub fn poll_readable(fds: &[RawFd], timeout_ns: Option<i64>) -> io::Result<usize> {
    poll_events(fds, libc::POLLIN, timeout_ns)
}

/// Wait until one of `fds` has one of `events` (or an error or hang-up) or `timeout_ns`
/// passes (None: forever; 0: just look). Returns how many fds are ready; interruption by a
/// signal is not an error (returns 0).
pub fn poll_events(
    fds: &[RawFd],
    events: libc::c_short,
    timeout_ns: Option<i64>,
) -> io::Result<usize> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events,
            revents: 0,
        })
        .collect();
    let ts = timeout_ns.map(|t| {
        let t = t.max(0);
        libc::timespec {
            tv_sec: t / 1_000_000_000,
            tv_nsec: t % 1_000_000_000,
        }
    });
    let tp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `p` has exactly `p.len()` entries; `tp` is null or points to `ts`.
    let r = unsafe {
        libc::ppoll(
            p.as_mut_ptr(),
            p.len() as libc::nfds_t,
            tp,
            std::ptr::null(),
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(r as usize)
}

/// A non-blocking TCP socket with a connection to `to` started: the SYN has left when
/// this returns. Its outcome is read with [`poll_events`] (`POLLOUT`) and
/// [`socket_error`].
pub fn tcp_connect_start(to: SocketAddrV4) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call; the descriptor is owned right away.
    let fd = cvt(unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: to.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*to.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `sin` lives for the call and its exact size is passed.
    let r = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
    }
    Ok(fd)
}

/// The pending error of a socket (`SO_ERROR`, which reading clears): `Ok(None)` when
/// there is none (e.g. a connection that was accepted).
pub fn socket_error(fd: RawFd) -> io::Result<Option<io::Error>> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` live for the call; `len` holds `v`'s exact size.
    cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    })?;
    Ok((v != 0).then(|| io::Error::from_raw_os_error(v)))
}

/// Timer slack of 1 ns: the default 50 µs slack would add up to 50 µs to every wake-up.
pub fn set_min_timer_slack() {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Ask for SCHED_FIFO at `prio` so wake-ups are not delayed behind iperf3 and the
/// kernel's softirq work. Returns false when the kernel refuses (no CAP_SYS_NICE).
pub fn set_realtime(prio: i32) -> bool {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: `p` is a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// Deliver SIGTERM to us when our parent (the tcpfair process) dies, so a crashed run
/// does not leave an emulator behind.
pub fn die_with_parent() {
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGTERM as libc::c_ulong,
            0,
            0,
            0,
        )
    };
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Install SIGINT/SIGTERM/SIGHUP handlers that only set a flag (no SA_RESTART, so a
/// blocked ppoll returns and the main loop sees `stop_requested`).
pub fn install_stop_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a handler that only touches an atomic.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}
