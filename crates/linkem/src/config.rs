//! The relay's configuration: a JSON document written by tcpfair's kernel backend.

use serde::Deserialize;

/// One address class: packets whose *sender-side* address (source on the data direction,
/// destination on the ACK direction) lies in `net/prefix` get these one-way delays.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Class {
    pub net: String,
    pub prefix: u8,
    /// One-way delay added on the data direction (interface `a` → `b`), ns.
    pub fwd_delay_ns: i64,
    /// One-way delay added on the ACK direction (`b` → `a`), ns.
    pub rev_delay_ns: i64,
    /// Per-connection delays by the sender-side TCP port (source port on the data
    /// direction, destination port on the ACK direction; with `far`, the other end's); a
    /// port outside the table (or a non-TCP packet) keeps the class's own delays.
    #[serde(default)]
    pub ports: Option<PortDelays>,
}

/// A dense port → one-way delay table: entry `i` is port `base + i`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortDelays {
    pub base: u16,
    pub fwd_delay_ns: Vec<i64>,
    pub rev_delay_ns: Vec<i64>,
    /// Key on the port of the far end — the host on the other side of the relay from the
    /// class's addresses (destination port on `a` → `b`, source port on `b` → `a`). A
    /// reverse entry's connections are opened from the far side, each from its own
    /// source port, to one server port on the class's side.
    #[serde(default)]
    pub far: bool,
}

impl PortDelays {
    /// Index of `port` in the table (O(1)), None when the table does not cover it.
    pub fn index(&self, port: u16) -> Option<usize> {
        let i = usize::from(port.checked_sub(self.base)?);
        (i < self.fwd_delay_ns.len()).then_some(i)
    }

    fn validate(&self) -> Result<(), String> {
        let n = self.fwd_delay_ns.len();
        if n != self.rev_delay_ns.len() {
            return Err(format!(
                "ports: fwd_delay_ns has {n} entries, rev_delay_ns {}; they must match",
                self.rev_delay_ns.len()
            ));
        }
        if usize::from(self.base) + n > 65536 {
            return Err(format!(
                "ports: base {} + {n} entries goes past port 65535",
                self.base
            ));
        }
        if self
            .fwd_delay_ns
            .iter()
            .chain(&self.rev_delay_ns)
            .any(|&d| d < 0)
        {
            return Err("ports: delays must be >= 0".into());
        }
        Ok(())
    }
}

/// Random Early Detection parameters (Floyd & Jacobson 1993, §4).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Red {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    #[serde(default = "default_wq")]
    pub wq: f64,
    /// Thresholds and queue measured in bytes (else packets).
    #[serde(default)]
    pub bytes: bool,
    /// Gentle RED (Floyd 2000): drop probability rises linearly from max_p to 1 between
    /// max_th and 2·max_th instead of jumping to 1.
    #[serde(default)]
    pub gentle: bool,
}

fn default_wq() -> f64 {
    0.002
}

/// A user-space bottleneck on the data direction: serialisation at `rate_bps` and a FIFO
/// limited to `limit_bytes` and/or `limit_pkts`, with optional RED in front.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queue {
    pub rate_bps: u64,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    #[serde(default)]
    pub limit_pkts: Option<u64>,
    #[serde(default)]
    pub red: Option<Red>,
    /// Packet size used for RED's idle-time decay and byte-mode scaling (the MTU + 14).
    #[serde(default = "default_mean_pkt")]
    pub mean_pkt_bytes: u32,
}

fn default_mean_pkt() -> u32 {
    1514
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Interface on the senders' side.
    pub a: String,
    /// Interface on the receivers' side.
    pub b: String,
    #[serde(default)]
    pub classes: Vec<Class>,
    /// Bernoulli loss probability on the data direction.
    #[serde(default)]
    pub loss: f64,
    #[serde(default)]
    pub seed: u64,
    /// The user-space bottleneck of the data direction (`a` → `b`).
    #[serde(default)]
    pub queue: Option<Queue>,
    /// The reverse direction's (`b` → `a`) bottleneck: reverse-direction data shares it
    /// with the forward flows' ACKs. None: that direction only delays.
    #[serde(default)]
    pub rev_queue: Option<Queue>,
    /// Bernoulli loss probability on the reverse direction (ACKs and reverse data alike).
    #[serde(default)]
    pub rev_loss: f64,
    #[serde(default = "default_stats_ms")]
    pub stats_interval_ms: u64,
    /// Largest frame expected (virtio header excluded); 65 550 when GSO/GRO are on.
    #[serde(default = "default_frame")]
    pub max_frame: usize,
    /// Run with SCHED_FIFO priority (0 = normal scheduling).
    #[serde(default)]
    pub rt_priority: i32,
}

fn default_stats_ms() -> u64 {
    100
}

fn default_frame() -> usize {
    2048
}

impl Config {
    pub fn validate(&self) -> Result<(), String> {
        for (key, p) in [("loss", self.loss), ("rev_loss", self.rev_loss)] {
            if !(0.0..1.0).contains(&p) {
                return Err(format!("{key} must be in [0, 1), got {p}"));
            }
        }
        for c in &self.classes {
            parse_ipv4(&c.net)
                .ok_or_else(|| format!("class net {:?} is not an IPv4 address", c.net))?;
            if c.prefix > 32 {
                return Err(format!("class prefix {} > 32", c.prefix));
            }
            if c.fwd_delay_ns < 0 || c.rev_delay_ns < 0 {
                return Err("delays must be >= 0".into());
            }
            if let Some(p) = &c.ports {
                p.validate().map_err(|e| format!("class {}: {e}", c.net))?;
            }
        }
        for (key, q) in [("queue", &self.queue), ("rev_queue", &self.rev_queue)] {
            if let Some(q) = q {
                q.validate().map_err(|e| format!("{key}.{e}"))?;
            }
        }
        if self.max_frame < 64 {
            return Err("max_frame too small".into());
        }
        Ok(())
    }
}

impl Queue {
    fn validate(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err("rate_bps must be > 0".into());
        }
        if let Some(r) = &self.red {
            let ok = 0.0 <= r.min_th
                && r.min_th < r.max_th
                && r.max_p > 0.0
                && r.max_p <= 1.0
                && r.wq > 0.0
                && r.wq <= 1.0;
            if !ok {
                return Err("red needs 0 <= min_th < max_th, 0 < max_p <= 1, 0 < wq <= 1".into());
            }
        }
        Ok(())
    }
}

pub fn parse_ipv4(s: &str) -> Option<u32> {
    s.parse::<std::net::Ipv4Addr>().ok().map(u32::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_delays_parse_look_up_and_validate() {
        let c = parse(
            r#"{"a": "a", "b": "b", "classes": [
                {"net": "10.1.0.0", "prefix": 24, "fwd_delay_ns": 5, "rev_delay_ns": 6,
                 "ports": {"base": 20000, "fwd_delay_ns": [10, 20, 30],
                           "rev_delay_ns": [11, 21, 31]}},
                {"net": "10.1.1.0", "prefix": 24, "fwd_delay_ns": 1, "rev_delay_ns": 1}]}"#,
        )
        .unwrap();
        assert!(c.classes[1].ports.is_none(), "ports are optional");
        let p = c.classes[0].ports.as_ref().unwrap();
        assert_eq!(p.index(20000), Some(0));
        assert_eq!(p.index(20002), Some(2));
        assert_eq!((p.fwd_delay_ns[1], p.rev_delay_ns[1]), (20, 21));
        assert_eq!(p.index(20003), None, "past the table");
        assert_eq!(p.index(19999), None, "below the base");
        assert_eq!(p.index(0), None);
        let bad = |ports: &str| {
            parse(&format!(
                r#"{{"a": "a", "b": "b", "classes": [{{"net": "10.1.0.0", "prefix": 24,
                    "fwd_delay_ns": 5, "rev_delay_ns": 6, "ports": {ports}}}]}}"#
            ))
            .unwrap_err()
        };
        assert_eq!(
            bad(r#"{"base": 1, "fwd_delay_ns": [1, 2], "rev_delay_ns": [1]}"#),
            "class 10.1.0.0: ports: fwd_delay_ns has 2 entries, rev_delay_ns 1; they must match"
        );
        assert_eq!(
            bad(r#"{"base": 65535, "fwd_delay_ns": [1, 2], "rev_delay_ns": [1, 2]}"#),
            "class 10.1.0.0: ports: base 65535 + 2 entries goes past port 65535"
        );
        assert_eq!(
            bad(r#"{"base": 1, "fwd_delay_ns": [1], "rev_delay_ns": [-1]}"#),
            "class 10.1.0.0: ports: delays must be >= 0"
        );
        let full = parse(
            r#"{"a": "a", "b": "b", "classes": [{"net": "10.1.0.0", "prefix": 24,
                "fwd_delay_ns": 5, "rev_delay_ns": 6,
                "ports": {"base": 65535, "fwd_delay_ns": [7], "rev_delay_ns": [8]}}]}"#,
        )
        .unwrap();
        assert_eq!(
            full.classes[0].ports.as_ref().unwrap().index(65535),
            Some(0)
        );
    }

    fn parse(text: &str) -> Result<Config, String> {
        let c: Config = serde_json::from_str(text).map_err(|e| e.to_string())?;
        c.validate()?;
        Ok(c)
    }

    #[test]
    fn reverse_queue_and_loss_are_optional_and_validated() {
        let c = parse(r#"{"a": "a", "b": "b"}"#).unwrap();
        assert!(c.rev_queue.is_none());
        assert_eq!(c.rev_loss, 0.0);
        let c = parse(
            r#"{"a": "a", "b": "b", "rev_loss": 0.01,
                "rev_queue": {"rate_bps": 50000000, "limit_bytes": 62500}}"#,
        )
        .unwrap();
        let q = c.rev_queue.unwrap();
        assert_eq!(
            (q.rate_bps, q.limit_bytes, q.limit_pkts),
            (50_000_000, Some(62_500), None)
        );
        assert_eq!(c.rev_loss, 0.01);
        let e = parse(r#"{"a": "a", "b": "b", "rev_loss": 1.0}"#).unwrap_err();
        assert_eq!(e, "rev_loss must be in [0, 1), got 1");
        let e = parse(r#"{"a": "a", "b": "b", "rev_queue": {"rate_bps": 0}}"#).unwrap_err();
        assert_eq!(e, "rev_queue.rate_bps must be > 0");
    }
}
