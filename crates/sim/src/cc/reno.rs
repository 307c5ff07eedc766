//! Reno AIMD (RFC 5681): slow start, one segment per RTT in congestion avoidance,
//! multiplicative decrease by half. What Linux calls "reno"; NewReno vs SACK recovery is
//! the sender's business, not the algorithm's.

use super::{cong_avoid_ai, slow_start_prologue, AckEvent, CongestionControl, TcpCc};

#[derive(Clone, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    /// RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize / 2, 2·SMSS); Linux halves cwnd.
    fn ssthresh(&mut self, tcp: &mut TcpCc) -> u32 {
        (tcp.cwnd >> 1).max(2)
    }

    fn cong_avoid(&mut self, tcp: &mut TcpCc, ev: &AckEvent) {
        let Some(acked) = slow_start_prologue(tcp, ev.acked) else {
            return;
        };
        // RFC 5681 §3.1: cwnd += SMSS·SMSS/cwnd per ACK, i.e. one segment per cwnd acked.
        let w = tcp.cwnd;
        cong_avoid_ai(tcp, w, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u32) -> AckEvent {
        AckEvent {
            acked,
            ..AckEvent::default()
        }
    }

    #[test]
    fn slow_start_doubles_per_window_then_stops_at_ssthresh() {
        let mut tcp = TcpCc::new(1448, u32::MAX);
        tcp.ssthresh = 15;
        let mut cc = Reno;
        cc.cong_avoid(&mut tcp, &ack(4));
        assert_eq!(tcp.cwnd, 14);
        // 4 more acked: 1 reaches ssthresh, 3 left over count toward linear increase.
        cc.cong_avoid(&mut tcp, &ack(4));
        assert_eq!(tcp.cwnd, 15);
        assert_eq!(tcp.cwnd_cnt, 3);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut tcp = TcpCc::new(1448, u32::MAX);
        tcp.cwnd = 20;
        tcp.ssthresh = 20;
        let mut cc = Reno;
        for _ in 0..19 {
            cc.cong_avoid(&mut tcp, &ack(1));
        }
        assert_eq!(tcp.cwnd, 20);
        cc.cong_avoid(&mut tcp, &ack(1));
        assert_eq!(tcp.cwnd, 21);
    }

    #[test]
    fn ssthresh_halves_but_not_below_two() {
        let mut tcp = TcpCc::new(1448, u32::MAX);
        tcp.cwnd = 33;
        assert_eq!(Reno.ssthresh(&mut tcp), 16);
        tcp.cwnd = 3;
        assert_eq!(Reno.ssthresh(&mut tcp), 2);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut tcp = TcpCc::new(1448, u32::MAX);
        tcp.is_cwnd_limited = false;
        Reno.cong_avoid(&mut tcp, &ack(5));
        assert_eq!(tcp.cwnd, 10);
    }

    #[test]
    fn aimd_average_window_under_periodic_loss_is_sqrt_3_over_2p() {
        // Deterministic loss every 1/p packets: the window saws between W/2 and W, one
        // segment per RTT, so a cycle carries (W/2)·(3W/4) = 3W²/8 = 1/p packets and the
        // average window is 3W/4 = √(3/(2p)) = 1.2247/√p (Mathis et al. 1997, periodic
        // model): 38.7, 122.5, 387.3 for p = 1e-3, 1e-4, 1e-5. Integer windows and the
        // recovery round keep the simulated value within 1 %.
        use crate::cc::harness::{periodic_loss_average_window, TestSender};
        for p in [1e-3, 1e-4, 1e-5] {
            let mut s = TestSender::new(Reno);
            s.tcp.ssthresh = 10;
            let w = periodic_loss_average_window(
                &mut s,
                crate::units::SimTime::from_millis(50),
                (1.0 / p) as u64,
                200,
                10,
            );
            let model = (1.5f64 / p).sqrt();
            assert!(
                (w / model - 1.0).abs() < 0.01,
                "p {p}: {w:.2} vs {model:.2}"
            );
        }
    }
}
