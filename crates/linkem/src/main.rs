//! tcpfair-linkem: the user-space link emulator of tcpfair's kernel backend.
//!
//! ```text
//! tcpfair-linkem relay CONFIG.json     relay frames between two interfaces (see relay.rs)
//! tcpfair-linkem probe IP:PORT [COUNT] [INTERVAL_MS]
//!                                      RTT by TCP SYN → RST, JSON on stdout
//! tcpfair-linkem check CONFIG.json     validate a configuration and exit
//! tcpfair-linkem exec PROG [ARGS…]     run PROG with SIGTERM on parent death (PR_SET_PDEATHSIG),
//!                                      so iperf3 never outlives a killed tcpfair
//! ```

use tcpfair_linkem::{config, probe, relay, sys};

use std::process::ExitCode;
use std::time::Duration;

fn usage() -> ExitCode {
    eprintln!("usage: tcpfair-linkem relay CONFIG.json | check CONFIG.json | probe IP:PORT [COUNT] [INTERVAL_MS] | exec PROG [ARGS...]");
    ExitCode::from(2)
}

fn load(path: &str) -> Result<config::Config, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let cfg: config::Config = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    cfg.validate().map_err(|e| format!("{path}: {e}"))?;
    Ok(cfg)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("relay") if args.len() == 2 => match load(&args[1]) {
            Ok(cfg) => match relay::run(&cfg) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("tcpfair-linkem: {e}");
                    ExitCode::from(1)
                }
            },
            Err(e) => {
                eprintln!("tcpfair-linkem: {e}");
                ExitCode::from(2)
            }
        },
        Some("check") if args.len() == 2 => match load(&args[1]) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tcpfair-linkem: {e}");
                ExitCode::from(2)
            }
        },
        Some("probe") if (2..=4).contains(&args.len()) => {
            let Ok(to) = args[1].parse() else {
                eprintln!("tcpfair-linkem: {:?} is not IP:PORT", args[1]);
                return ExitCode::from(2);
            };
            let count = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
            let ms = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(50);
            let r = probe::probe(to, count, Duration::from_millis(ms), Duration::from_secs(5));
            println!("{}", probe::to_json(&r));
            ExitCode::SUCCESS
        }
        Some("exec") if args.len() >= 2 => {
            use std::os::unix::process::CommandExt;
            sys::die_with_parent();
            let err = std::process::Command::new(&args[1]).args(&args[2..]).exec();
            eprintln!("tcpfair-linkem: cannot run {}: {err}", args[1]);
            ExitCode::from(127)
        }
        _ => usage(),
    }
}
