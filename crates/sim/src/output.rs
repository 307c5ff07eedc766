//! What a simulation returns: column arrays, ready to become DataFrames without copying
//! row by row. All times are integer nanoseconds since the start of the run.

/// Per connection totals at the end of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSummary {
    pub id: u32,
    /// Payload bytes handed to the network at least once (first transmissions).
    pub bytes_sent: u64,
    /// Payload bytes retransmitted.
    pub bytes_retransmitted: u64,
    /// Payload bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Payload bytes delivered in order inside the measurement window [from, to).
    pub bytes_delivered_window: u64,
    /// Segments retransmitted (fast retransmit, SACK recovery and RTO), like iperf3's `retransmits`.
    pub retransmits: u64,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// When a finite flow completed (all bytes acknowledged), if it did.
    pub completion_ns: Option<u64>,
}

/// Long-form per-flow time series: one row per (flow, interval end).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSamples {
    pub flow: Vec<u32>,
    /// End of the sampling interval.
    pub t_ns: Vec<u64>,
    /// Payload bytes delivered in order to the receiver during the interval.
    pub delivered_bytes: Vec<u64>,
    /// Congestion window at the sample time, in bytes (segments × MSS).
    pub cwnd_bytes: Vec<u64>,
    /// Smoothed RTT at the sample time (0 before the first RTT sample).
    pub srtt_ns: Vec<u64>,
    /// Segments retransmitted during the interval.
    pub retransmits: Vec<u64>,
    /// Bytes in flight at the sample time.
    pub inflight_bytes: Vec<u64>,
}

/// Bottleneck time series, one row per sampling interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkSamples {
    pub t_ns: Vec<u64>,
    /// Queue occupancy at the sample time.
    pub queue_bytes: Vec<u64>,
    pub queue_pkts: Vec<u64>,
    /// Packets dropped during the interval (queue overflow or AQM).
    pub drops: Vec<u64>,
    /// Packets lost to random loss during the interval.
    pub random_losses: Vec<u64>,
    /// Bytes that finished serialization on the bottleneck during the interval.
    pub tx_bytes: Vec<u64>,
    /// ACKs lost on this link during the interval (included in `drops` and
    /// `random_losses`); always 0 without a reverse bottleneck, where ACKs skip the links.
    pub ack_drops: Vec<u64>,
}

/// Bottleneck totals over the whole run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkTotals {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops: u64,
    pub random_losses: u64,
    pub max_queue_bytes: u64,
    pub max_queue_pkts: u64,
    /// Time the link spent serializing packets.
    pub busy_ns: u64,
    /// Bytes serialized inside the measurement window.
    pub tx_bytes_window: u64,
    /// ACKs lost on this link (included in `drops` and `random_losses`).
    pub ack_drops: u64,
    /// ACKs serialized on this link and their bytes (included in `tx_packets`/`tx_bytes`).
    pub ack_tx_packets: u64,
    pub ack_tx_bytes: u64,
}

/// Counters describing the run itself, for benchmarks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    pub events: u64,
    /// Packets (data and ACK) that entered the bottleneck queue or link.
    pub bottleneck_packets: u64,
    pub simulated_ns: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    pub flows: Vec<FlowSummary>,
    pub samples: FlowSamples,
    /// The forward bottleneck (sender side → receiver side).
    pub link: LinkSamples,
    pub link_totals: LinkTotals,
    /// The reverse bottleneck, when the dumbbell has one (`BottleneckConfig::reverse` or a
    /// reverse flow): the same series and totals.
    pub reverse_link: Option<LinkSamples>,
    pub reverse_link_totals: Option<LinkTotals>,
    pub stats: RunStats,
}
