//! HighSpeed TCP (RFC 3649) as Linux implements it (`net/ipv4/tcp_highspeed.c`): above
//! Low_Window = 38 segments the additive increase a(w) grows and the decrease b(w)
//! shrinks with the window, so that a flow needs a loss rate of only 1e-7 to sustain
//! 83 000 segments (RFC 3649 §5), while at and below 38 segments it is Reno.
//!
//! Linux uses a table (RFC 3649 Appendix B) of 72 windows w_i with a(w) = i + 1 for
//! w_{i−1} < cwnd ≤ w_i and b(w_i) scaled by 256. We compute the table from the RFC's
//! formulas (§5): b(w) = (0.1 − 0.5)·(ln w − ln 38)/(ln 83000 − ln 38) + 0.5,
//! p(w) = 0.078/w^1.2, a(w) = w²·p(w)·2·b(w)/(2 − b(w)); w_0 = 38 and w_i is the
//! smallest window with a(w) ≥ i + 1; b is floored to 1/256. The windows are within
//! 0.3 % of the kernel's (e.g. 1791 vs 1793, 5493 vs 5497, 89302 vs 89053), the
//! decrease factors identical.

use super::{slow_start, AckEvent, CongestionControl, ParamError, ParamSpec, Params, TcpCc};
use std::sync::{Arc, OnceLock};

const LOW_WINDOW: f64 = 38.0;
const HIGH_WINDOW: f64 = 83_000.0;
/// RFC 3649's High_Decrease, b(High_Window).
const HIGH_DECREASE: f64 = 0.1;
const ROWS: usize = 72;
/// Largest window a table row may reach (HighSpeed clamps cwnd to u32::MAX / 128).
const MAX_ROW_WINDOW: u32 = u32::MAX / 128;

/// HighSpeed's table choice: RFC 3649 §5 builds a(w) and b(w) from Low_Window = 38,
/// High_Window = 83 000, High_P = 10⁻⁷ and High_Decrease; §6 discusses other choices of
/// High_Decrease (the decrease at High_Window), which this parameter makes.
pub const PARAMS: &[ParamSpec] = &[ParamSpec::real(
    "high_decrease",
    HIGH_DECREASE,
    0.05,
    0.5,
    "",
    "RFC 3649 High_Decrease: the table's b(w) falls from 0.5 at 38 segments to this at 83000",
)];

type Table = [(u32, u32); ROWS];

/// (w_i, b(w_i)·256) for RFC 3649's formulas with b(High_Window) = `high_decrease`. Rows
/// a window cannot reach (a(w) < i + 1 up to `MAX_ROW_WINDOW`) repeat the last one.
fn build(high_decrease: f64) -> Table {
    let b = |w: f64| {
        (high_decrease - 0.5) * (w.ln() - LOW_WINDOW.ln()) / (HIGH_WINDOW.ln() - LOW_WINDOW.ln())
            + 0.5
    };
    let a = |w: f64| w * w * (0.078 / w.powf(1.2)) * 2.0 * b(w) / (2.0 - b(w));
    let mut t = [(0u32, 0u32); ROWS];
    let mut w = LOW_WINDOW as u32;
    for i in 0..ROWS {
        if i > 0 {
            while a(f64::from(w)) < (i + 1) as f64 && w < MAX_ROW_WINDOW {
                w += 1;
            }
            if w == MAX_ROW_WINDOW {
                t[i] = t[i - 1];
                continue;
            }
        }
        t[i] = (w, (b(f64::from(w)) * 256.0) as u32);
    }
    t
}

/// The table of RFC 3649's own parameters (Linux's), built once.
fn default_table() -> Arc<Table> {
    static TABLE: OnceLock<Arc<Table>> = OnceLock::new();
    TABLE.get_or_init(|| Arc::new(build(HIGH_DECREASE))).clone()
}

#[derive(Clone, Debug)]
pub struct HighSpeed {
    /// Table row of the current window: a(w) = ai + 1.
    pub(crate) ai: usize,
    table: Arc<Table>,
}

impl Default for HighSpeed {
    fn default() -> Self {
        HighSpeed {
            ai: 0,
            table: default_table(),
        }
    }
}

impl HighSpeed {
    /// Build from the flow's parameters (`PARAMS`).
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let high_decrease = p.real("high_decrease");
        let table = if high_decrease == HIGH_DECREASE {
            default_table()
        } else {
            Arc::new(build(high_decrease))
        };
        Ok(HighSpeed { ai: 0, table })
    }
}

impl CongestionControl for HighSpeed {
    fn init(&mut self, tcp: &mut TcpCc) {
        self.ai = 0;
        tcp.cwnd_clamp = tcp.cwnd_clamp.min(u32::MAX / 128);
    }

    /// RFC 3649 §5: cwnd·(1 − b(w)).
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        let md = self.table[self.ai].1;
        (tcp.cwnd - ((tcp.cwnd * md) >> 8)).max(2)
    }

    fn cong_avoid(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        if !tcp.is_cwnd_limited {
            return;
        }
        if tcp.in_slow_start() {
            slow_start(tcp, ev.acked);
            return;
        }
        // Keep w_{ai−1} < cwnd ≤ w_ai.
        let t = &self.table;
        while tcp.cwnd > t[self.ai].0 && self.ai < ROWS - 1 {
            self.ai += 1;
        }
        while self.ai > 0 && tcp.cwnd <= t[self.ai - 1].0 {
            self.ai -= 1;
        }
        // cwnd += a(w)/cwnd per ACK (Linux counts ACKs here, not segments).
        if tcp.cwnd < tcp.cwnd_clamp {
            tcp.cwnd_cnt += self.ai as u32 + 1;
            if tcp.cwnd_cnt >= tcp.cwnd {
                tcp.cwnd_cnt -= tcp.cwnd;
                tcp.cwnd += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::harness::TestSender;

    #[test]
    fn table_follows_rfc3649_appendix_b() {
        let t = default_table();
        // RFC 3649 Appendix B (and Linux): w = 38 → a 1, b 0.50; 118 → 2, 0.44;
        // 221 → 3, 0.41; 347 → 4, 0.38.
        assert_eq!(t[0], (38, 128));
        assert_eq!(t[1], (118, 112));
        assert_eq!(t[2], (221, 104));
        assert_eq!(t[3], (347, 98));
        // Further rows within 0.3 % of the kernel's table (1793, 5497, 19965, 89053),
        // decrease factors equal (76, 61, 44, 24).
        for (i, w, md) in [
            (10, 1793.0, 76),
            (20, 5497.0, 61),
            (40, 19965.0, 44),
            (71, 89053.0, 24),
        ] {
            assert!(
                (f64::from(t[i].0) / w - 1.0).abs() < 0.003,
                "row {i}: {:?}",
                t[i]
            );
            assert_eq!(t[i].1, md, "row {i}");
        }
    }

    #[test]
    fn reno_at_low_windows() {
        let mut s = TestSender::new(HighSpeed::default());
        s.tcp.cwnd = 30;
        s.tcp.ssthresh = 30;
        for _ in 0..30 {
            s.ack(1);
        }
        assert_eq!(s.cwnd(), 31); // a = 1
        assert_eq!(s.cc.ssthresh(&mut s.tcp), 16); // 31 − ⌊31·128/256⌋
    }

    #[test]
    fn large_windows_increase_faster_and_decrease_less() {
        // cwnd 1000: 851 < 1000 ≤ 1058 → row 7: a = 8 segments per RTT, b = 83/256 = 0.32.
        let mut s = TestSender::new(HighSpeed::default());
        s.tcp.cwnd = 1000;
        s.tcp.ssthresh = 1000;
        for _ in 0..1000 {
            s.ack(1);
        }
        // 1000 ACKs add 8000 to the counter; increments cost 1000, 1001, ... 1006
        // (7 046 in all), the 8th would need 1007 more: cwnd 1007.
        assert_eq!(s.cc.ai, 7);
        assert_eq!(s.cwnd(), 1007);
        // 1007 − ⌊1007·83/256⌋ = 1007 − 326 = 681.
        assert_eq!(s.cc.ssthresh(&mut s.tcp), 681);
    }
}
