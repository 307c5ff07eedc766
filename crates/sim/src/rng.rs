//! Deterministic pseudo-random numbers: xoshiro256** (Blackman & Vigna 2018) seeded through
//! SplitMix64, written here so the stream never changes with a dependency upgrade.
//! Never seeded from the OS: the scenario's seed is the only source of randomness.

/// A connection's own seed, derived from the scenario seed and its id (for algorithms with
/// randomness, e.g. BBR's PROBE_BW phase).
pub fn flow_seed(seed: u64, id: u32) -> u64 {
    let mut x = seed ^ (u64::from(id) + 1).wrapping_mul(0xd134_2543_de82_ef95);
    splitmix64(&mut x)
}

/// The seed of a connection's host-delay (send jitter) stream: a different stream from
/// `flow_seed`'s, so turning jitter on never changes the congestion control's draws.
pub fn jitter_seed(seed: u64, id: u32) -> u64 {
    let mut x = flow_seed(seed, id) ^ 0x6a09_e667_f3bc_c908;
    splitmix64(&mut x)
}

/// The seed of a connection's ACK-path host-delay (`ack_jitter`) stream, separate from
/// the send jitter's and the congestion control's.
pub fn ack_jitter_seed(seed: u64, id: u32) -> u64 {
    let mut x = flow_seed(seed, id) ^ 0xbb67_ae85_84ca_a73b;
    splitmix64(&mut x)
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_different_seed_different_stream() {
        let (mut a, mut b, mut c) = (Rng::new(7), Rng::new(7), Rng::new(8));
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn bernoulli_frequency_matches_p() {
        // 200k draws at p = 0.01: mean 2000, sd ≈ 44.5; ±5 sd is a bound a correct generator
        // essentially never crosses.
        let mut r = Rng::new(1);
        let n = (0..200_000).filter(|_| r.bernoulli(0.01)).count() as f64;
        assert!((n - 2000.0).abs() < 5.0 * 44.5, "{n}");
    }

    #[test]
    fn uniform_is_in_unit_interval() {
        let mut r = Rng::new(3);
        for _ in 0..10_000 {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
