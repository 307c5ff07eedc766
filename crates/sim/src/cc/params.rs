//! Validation of an algorithm's `cca_params` (e.g. `vegas.alpha`): every key must be known
//! to the algorithm and every value within its documented range. Errors name the
//! algorithm, the parameter, the value and what is allowed.

use std::collections::{BTreeMap, BTreeSet};

/// The parameters given for one flow, consumed one by one by the algorithm's constructor;
/// `finish` rejects whatever was not consumed.
pub struct Params<'a> {
    cca: &'a str,
    given: &'a BTreeMap<String, f64>,
    known: BTreeSet<&'static str>,
}

impl<'a> Params<'a> {
    pub fn new(cca: &'a str, given: &'a BTreeMap<String, f64>) -> Self {
        Params {
            cca,
            given,
            known: BTreeSet::new(),
        }
    }

    /// A real-valued parameter in `[min, max]`, or `default` when absent.
    pub fn real(
        &mut self,
        key: &'static str,
        default: f64,
        min: f64,
        max: f64,
    ) -> Result<f64, String> {
        self.known.insert(key);
        match self.given.get(key) {
            None => Ok(default),
            Some(&v) if v.is_finite() && v >= min && v <= max => Ok(v),
            Some(&v) => Err(format!(
                "{} parameter {key} = {v} is out of range; allowed: {min} to {max}",
                self.cca
            )),
        }
    }

    /// An integer parameter in `[min, max]`, or `default` when absent.
    pub fn int(
        &mut self,
        key: &'static str,
        default: u32,
        min: u32,
        max: u32,
    ) -> Result<u32, String> {
        self.known.insert(key);
        match self.given.get(key) {
            None => Ok(default),
            Some(&v) if v.fract() == 0.0 && v >= f64::from(min) && v <= f64::from(max) => {
                Ok(v as u32)
            }
            Some(&v) => Err(format!(
                "{} parameter {key} = {v} is not allowed; allowed: an integer from {min} to {max}",
                self.cca
            )),
        }
    }

    /// A switch given as 0 or 1.
    pub fn flag(&mut self, key: &'static str, default: bool) -> Result<bool, String> {
        Ok(self.int(key, u32::from(default), 0, 1)? == 1)
    }

    /// Reject parameters the algorithm did not ask for.
    pub fn finish(self) -> Result<(), String> {
        let unknown: Vec<&str> = self
            .given
            .keys()
            .map(String::as_str)
            .filter(|k| !self.known.contains(k))
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let allowed = if self.known.is_empty() {
            "none".to_string()
        } else {
            self.known.iter().copied().collect::<Vec<_>>().join(", ")
        };
        Err(format!(
            "unknown {} parameter{} {}; {} accepts: {allowed}",
            self.cca,
            if unknown.len() > 1 { "s" } else { "" },
            unknown.join(", "),
            self.cca
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(kv: &[(&str, f64)]) -> BTreeMap<String, f64> {
        kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn unknown_parameter_is_named_with_the_allowed_ones() {
        let given = map(&[("alpha", 1.0), ("gamm", 2.0)]);
        let mut p = Params::new("vegas", &given);
        assert_eq!(p.int("alpha", 2, 0, 100).unwrap(), 1);
        p.int("gamma", 1, 0, 100).unwrap();
        assert_eq!(
            p.finish().unwrap_err(),
            "unknown vegas parameter gamm; vegas accepts: alpha, gamma"
        );
    }

    #[test]
    fn out_of_range_value_names_key_value_and_range() {
        let given = map(&[("beta", 1.5)]);
        let mut p = Params::new("cubic", &given);
        assert_eq!(
            p.real("beta", 0.7, 0.01, 0.99).unwrap_err(),
            "cubic parameter beta = 1.5 is out of range; allowed: 0.01 to 0.99"
        );
        let given = map(&[("hystart", 0.5)]);
        let mut p = Params::new("cubic", &given);
        assert!(p
            .flag("hystart", true)
            .unwrap_err()
            .contains("an integer from 0 to 1"));
    }

    #[test]
    fn algorithm_without_parameters_rejects_any() {
        let given = map(&[("x", 1.0)]);
        let p = Params::new("reno", &given);
        assert_eq!(
            p.finish().unwrap_err(),
            "unknown reno parameter x; reno accepts: none"
        );
    }
}
