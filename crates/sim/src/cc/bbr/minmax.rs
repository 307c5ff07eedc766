//! Windowed max filter (Kathleen Nichols' algorithm, as in Linux `lib/win_minmax.c`): the
//! best, 2nd-best and 3rd-best samples of a sliding window, each from a later sub-window,
//! so the max over the last `win` time units is tracked in O(1) time and space.
//! BBR uses it for the bottleneck bandwidth over the last 10 round trips.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    /// Time of the sample (BBR: round-trip count).
    t: u64,
    v: u64,
}

#[derive(Clone, Debug, Default)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// Forget everything: `v` at time `t` is best, 2nd and 3rd best.
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Add measurement `v` taken at time `t`; returns the max over the window `win`.
    pub fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        // A new best, or nothing seen for a whole window: restart from this sample.
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Age the estimates: the best expires after `win`; keep the 2nd and 3rd best from
    /// later quarters/halves of the window so there is always a successor.
    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_holds_for_the_window_then_expires() {
        let mut f = WindowedMax::default();
        f.reset(0, 0);
        assert_eq!(f.update(10, 1, 100), 100);
        // Lower samples in later rounds do not replace the max while it is in the window.
        for t in 2..=11 {
            assert_eq!(f.update(10, t, 50), 100, "round {t}");
        }
        // Round 12 is more than 10 rounds after the max (round 1): it expires, and the
        // best of the later samples (50) takes over.
        assert_eq!(f.update(10, 12, 40), 50);
    }

    #[test]
    fn a_new_maximum_replaces_everything() {
        let mut f = WindowedMax::default();
        f.reset(0, 0);
        f.update(10, 1, 100);
        f.update(10, 2, 80);
        assert_eq!(f.update(10, 3, 120), 120);
        assert_eq!(f.update(10, 20, 10), 10);
    }

    #[test]
    fn second_best_from_a_later_subwindow_succeeds_the_best() {
        let mut f = WindowedMax::default();
        f.reset(0, 0);
        f.update(10, 0, 100);
        f.update(10, 3, 90); // > win/4 after the best: 2nd and 3rd best
        f.update(10, 6, 80); // > win/2: 3rd best
        assert_eq!(f.update(10, 8, 10), 100);
        assert_eq!(f.update(10, 11, 10), 90); // best (round 0) expired
        assert_eq!(f.update(10, 14, 10), 80); // 90 (round 3) expired
    }
}
