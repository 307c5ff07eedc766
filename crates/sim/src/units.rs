//! Unit newtypes: integer nanoseconds for time, bits per second for rates.
//!
//! 1500 B at 10 Gbit/s is 1.2 µs, so nanoseconds are the coarsest unit that keeps
//! serialization exact enough; `u64` nanoseconds last 584 years of simulated time.

use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time (or a duration), in integer nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        debug_assert!(
            self.0 >= rhs.0,
            "time went backwards: {} - {}",
            self.0,
            rhs.0
        );
        SimTime(self.0 - rhs.0)
    }
}

/// A link or pacing rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` at this rate, rounded up to the next nanosecond.
    pub fn tx_time(self, bytes: u64) -> SimTime {
        debug_assert!(self.0 > 0);
        // The same quotient in 64 bits when the product fits (any packet or queue below
        // 2.3 GB): a 128-bit division is a library call, and this runs on every packet.
        if let Some(bits) = bytes.checked_mul(8_000_000_000) {
            return SimTime(bits.div_ceil(self.0));
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        SimTime(bits.div_ceil(self.0 as u128) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_is_exact_in_nanoseconds() {
        // 1500 B at 10 Gbit/s = 12000 bits / 1e10 bit/s = 1.2 µs.
        assert_eq!(Rate(10_000_000_000).tx_time(1500), SimTime(1_200));
        // 1500 B at 100 Mbit/s = 120 µs.
        assert_eq!(Rate(100_000_000).tx_time(1500), SimTime(120_000));
        // 1000 B at 1.5 Mbit/s = 5.333… ms, rounded up.
        assert_eq!(Rate(1_500_000).tx_time(1000), SimTime(5_333_334));
    }

    #[test]
    fn serialization_time_rounds_up_on_both_sides_of_the_64_bit_limit() {
        let fits = u64::MAX / 8_000_000_000; // the largest byte count done in 64 bits
        for bytes in [0, 1, 52, 1500, 1 << 31, fits - 1, fits, fits + 1, 1 << 40] {
            for rate in [1, 3, 7_000_001, 1_500_000, 10_000_000_000, u64::MAX] {
                // ceil(bytes * 8e9 / rate), exact in 128 bits
                let num = u128::from(bytes) * 8_000_000_000;
                let want = num / u128::from(rate) + u128::from(num % u128::from(rate) != 0);
                if want > u128::from(u64::MAX) {
                    continue; // beyond any simulated time
                }
                let got = Rate(rate).tx_time(bytes);
                assert_eq!(u128::from(got.0), want, "{bytes} B at {rate} bit/s");
            }
        }
    }
}
