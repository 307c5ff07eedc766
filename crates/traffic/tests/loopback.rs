//! The generator end to end on loopback (no root, no namespaces): a server, a client with
//! 200 flows at 1,000 arrivals per second, SIGTERM to the server, and the two JSON outputs
//! checked against the schedule and against each other.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_tcpfair-traffic");

#[allow(unsafe_code)]
fn mono_ns() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

#[allow(unsafe_code)]
fn terminate(pid: u32) {
    // SAFETY: kill(2) with a child's pid and a signal number.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn every_scheduled_flow_is_carried_and_matched() {
    let port = free_port();
    let server = Command::new(BIN)
        .args(["server", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // wait until it listens
    let t = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t.elapsed() < Duration::from_secs(5), "server did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let sizes = [1u64, 1448, 20_000, 300_000];
    let t0 = mono_ns() + 200_000_000; // the schedule's origin: 200 ms from now
    let flows: Vec<Value> = (0..200)
        .map(|i| {
            serde_json::json!({"id": i, "start_ns": i * 1_000_000, "size": sizes[i as usize % 4],
                               "cca": "reno", "src": "127.0.0.1", "dst": format!("127.0.0.1:{port}")})
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("tcpfair-traffic-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sched = dir.join("schedule.json");
    std::fs::File::create(&sched)
        .unwrap()
        .write_all(
            serde_json::json!({ "t0_mono_ns": t0, "flows": flows })
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    let out = Command::new(BIN)
        .args(["client", sched.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(out.status.success());
    // SIGTERM: the server prints what it saw and exits
    terminate(server.id());
    let srv = server.wait_with_output().unwrap();
    assert!(srv.status.success());

    let client: Value = serde_json::from_slice(&out.stdout).unwrap();
    let conns: Value = serde_json::from_slice(&srv.stdout).unwrap();
    let client = client["flows"].as_array().unwrap();
    let conns = conns["conns"].as_array().unwrap();
    assert_eq!(client.len(), 200);
    // the readiness probe above is one more connection, with no bytes
    assert_eq!(conns.iter().filter(|c| c["bytes"] != 0).count(), 200);
    for (i, r) in client.iter().enumerate() {
        assert!(r["error"].is_null(), "flow {i}: {}", r["error"]);
        assert_eq!(r["size"], sizes[i % 4]);
        assert_eq!(r["bytes_sent"], sizes[i % 4]);
        assert_eq!(r["cca"], "reno");
        // TCP_INFO read (a tail-loss probe counts as a retransmission even on loopback)
        assert!(r["total_retrans"].is_u64() && r["timeouts"].is_u64());
        let connect = r["connect_ns"].as_i64().unwrap();
        // never opened before its time
        assert!(connect >= t0 + i as i64 * 1_000_000, "flow {i} early");
        let port = r["local_port"].as_u64().unwrap();
        let c = conns
            .iter()
            .find(|c| c["peer_port"].as_u64() == Some(port) && c["bytes"] != 0)
            .unwrap_or_else(|| panic!("flow {i}: no server record for port {port}"));
        assert_eq!(c["bytes"], sizes[i % 4]);
        assert_eq!(c["eof"], true);
        // FCT > 0: the last byte is read after the connect began, and before the client
        // saw the server's close
        let last = c["last_byte_ns"].as_i64().unwrap();
        assert!(connect < last && last <= r["done_ns"].as_i64().unwrap());
    }
}
