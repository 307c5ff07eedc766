//! Run a resolved scenario (JSON, as `tcpfair.spec` writes it) and print a summary:
//! `cargo run --release -p tcpfair-sim --example run_json -- scenario.json`.
use std::time::Instant;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_json scenario.json");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let cfg = tcpfair_sim::Config::from_json(&text).unwrap_or_else(|e| panic!("{e}"));
    let t0 = Instant::now();
    let mut sim = tcpfair_sim::sim::Sim::new(&cfg).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until(sim.end());
    let states = sim.sender_states();
    let out = sim.finish();
    if std::env::var_os("SIM_DEBUG").is_some() {
        for s in states {
            println!("{s}");
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let dur = cfg.duration_ns as f64 / 1e9;
    for f in &out.flows {
        println!(
            "flow {}: {:.2} Mbit/s delivered={} sent={} retx={} rto={} done={:?}",
            f.id,
            f.bytes_delivered as f64 * 8.0 / dur / 1e6,
            f.bytes_delivered,
            f.bytes_sent,
            f.retransmits,
            f.timeouts,
            f.completion_ns
        );
    }
    let t = &out.link_totals;
    println!(
        "link: util={:.4} drops={} random={} maxq={}B/{}pkt",
        t.busy_ns as f64 / cfg.duration_ns as f64,
        t.drops,
        t.random_losses,
        t.max_queue_bytes,
        t.max_queue_pkts
    );
    println!(
        "wall {:.3}s: {:.0} bottleneck pkts/s, {:.0} events/s ({} events, {} pkts)",
        wall,
        out.stats.bottleneck_packets as f64 / wall,
        out.stats.events as f64 / wall,
        out.stats.events,
        out.stats.bottleneck_packets
    );
}
