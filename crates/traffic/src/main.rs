//! tcpfair-traffic: the short-flow traffic generator of tcpfair's kernel backend.
//!
//! ```text
//! tcpfair-traffic server IP:PORT        accept connections, read each to EOF; on SIGTERM
//!                                       print {"conns": [...]} (see server.rs)
//! tcpfair-traffic client SCHEDULE.json  open each scheduled connection at its time, send
//!                                       its bytes, close; print {"flows": [...]} (client.rs)
//! tcpfair-traffic check SCHEDULE.json   validate a schedule and exit
//! ```
//!
//! Both modes receive SIGTERM when their parent dies (PR_SET_PDEATHSIG), like linkem.
//! Exit status 2: bad arguments or schedule (one line on stderr).

mod client;
mod schedule;
mod server;
mod sock;

use std::process::ExitCode;

use serde_json::json;
use tcpfair_linkem::sys;

fn usage() -> ExitCode {
    eprintln!("usage: tcpfair-traffic server IP:PORT | client SCHEDULE.json | check SCHEDULE.json");
    ExitCode::from(2)
}

fn load(path: &str) -> Result<schedule::Schedule, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    schedule::Schedule::parse(&text).map_err(|e| format!("{path}: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    sys::die_with_parent();
    sys::install_stop_handlers();
    match (args.first().map(String::as_str), args.len()) {
        (Some("server"), 2) => {
            let Ok(addr) = args[1].parse() else {
                eprintln!("tcpfair-traffic: {:?} is not IP:PORT", args[1]);
                return ExitCode::from(2);
            };
            let ready = || eprintln!("tcpfair-traffic: listening on {addr}");
            match server::run(addr, ready) {
                Ok(conns) => {
                    println!("{}", json!({ "conns": conns }));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("tcpfair-traffic: server on {addr}: {e}");
                    ExitCode::from(1)
                }
            }
        }
        (Some(mode @ ("client" | "check")), 2) => match load(&args[1]) {
            Err(e) => {
                eprintln!("tcpfair-traffic: {e}");
                ExitCode::from(2)
            }
            Ok(_) if mode == "check" => ExitCode::SUCCESS,
            Ok(s) => {
                let flows = client::run(&s);
                println!("{}", json!({ "flows": flows }));
                ExitCode::SUCCESS
            }
        },
        _ => usage(),
    }
}
