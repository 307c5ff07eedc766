//! Parameters of the congestion controls: how each is declared (`ParamSpec`, listed by the
//! algorithm's file and gathered in `cc::registry`), and how a flow's `cca_params` are
//! checked against the declarations and read by the algorithm's constructor (`Params`).
//!
//! Every key must be declared for the algorithm under its stack, every value of the
//! declared type and within the declared range. Errors name the parameter, the value and
//! what is allowed (`ParamError`).

use std::collections::BTreeMap;
use std::fmt;

/// How a parameter's value is written and read. Values cross the configuration as `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A real number.
    Real,
    /// A whole number.
    Int,
    /// A switch: true (1) or false (0).
    Bool,
}

impl ParamKind {
    /// The name the registry reports (`real`, `int`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::Real => "real",
            ParamKind::Int => "int",
            ParamKind::Bool => "bool",
        }
    }
}

/// One parameter of one algorithm: what the registry reports and what `Params` enforces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    /// The value when the flow does not set it (None: unset, the feature is off).
    pub default: Option<f64>,
    /// Smallest and largest allowed values (a `Bool` is 0 to 1).
    pub min: f64,
    pub max: f64,
    /// Unit of the value ("packets", "segments", "µs", "" for a pure number).
    pub unit: &'static str,
    /// One line: what the parameter does (and its convention, e.g. β multiplies cwnd).
    pub meaning: &'static str,
}

impl ParamSpec {
    pub const fn real(
        name: &'static str,
        default: f64,
        min: f64,
        max: f64,
        unit: &'static str,
        meaning: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind: ParamKind::Real,
            default: Some(default),
            min,
            max,
            unit,
            meaning,
        }
    }

    pub const fn int(
        name: &'static str,
        default: u32,
        min: u32,
        max: u32,
        unit: &'static str,
        meaning: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind: ParamKind::Int,
            default: Some(default as f64),
            min: min as f64,
            max: max as f64,
            unit,
            meaning,
        }
    }

    pub const fn flag(name: &'static str, default: bool, meaning: &'static str) -> Self {
        ParamSpec {
            name,
            kind: ParamKind::Bool,
            default: Some(if default { 1.0 } else { 0.0 }),
            min: 0.0,
            max: 1.0,
            unit: "",
            meaning,
        }
    }

    /// The same parameter without a default: unset unless the flow gives it.
    pub const fn optional(self) -> Self {
        ParamSpec {
            default: None,
            ..self
        }
    }

    /// What values are allowed, as error messages say it.
    pub fn allowed(&self) -> String {
        match self.kind {
            ParamKind::Real => format!("a number from {} to {}", self.min, self.max),
            ParamKind::Int => format!("a whole number from {} to {}", self.min, self.max),
            ParamKind::Bool => "true or false".to_string(),
        }
    }

    /// Why `v` is not a value of this parameter, or None.
    pub fn problem(&self, v: f64) -> Option<String> {
        let fits = v.is_finite()
            && v >= self.min
            && v <= self.max
            && (self.kind == ParamKind::Real || v.fract() == 0.0);
        (!fits).then(|| format!("{} is not allowed; allowed: {}", v, self.allowed()))
    }
}

/// A parameter that cannot be used: which one (empty when none in particular) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub param: String,
    pub message: String,
}

impl ParamError {
    pub fn new(param: &str, message: impl Into<String>) -> Self {
        ParamError {
            param: param.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.param.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "parameter {}: {}", self.param, self.message)
        }
    }
}

/// The parameters given for one flow, checked against the algorithm's declarations when
/// built; the constructor reads them (declared defaults fill what was not given).
pub struct Params<'a> {
    cca: &'a str,
    specs: &'static [ParamSpec],
    given: &'a BTreeMap<String, f64>,
    #[cfg(test)]
    read: std::cell::RefCell<std::collections::BTreeSet<&'static str>>,
}

impl<'a> Params<'a> {
    /// Check `given` against `specs` (the algorithm `cca`'s declarations under one stack).
    pub fn new(
        cca: &'a str,
        specs: &'static [ParamSpec],
        given: &'a BTreeMap<String, f64>,
    ) -> Result<Self, ParamError> {
        for (k, &v) in given {
            let Some(spec) = specs.iter().find(|s| s.name == k) else {
                let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
                let allowed = if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                };
                return Err(ParamError::new(
                    k,
                    format!("{cca} has no parameter {k:?}; allowed: {allowed}"),
                ));
            };
            if let Some(problem) = spec.problem(v) {
                return Err(ParamError::new(k, problem));
            }
        }
        Ok(Params {
            cca,
            specs,
            given,
            #[cfg(test)]
            read: Default::default(),
        })
    }

    pub fn cca(&self) -> &str {
        self.cca
    }

    /// The value of declared parameter `key`: given, else its default (None: unset).
    /// Panics when `key` is not declared (a bug in the algorithm's file, caught by the
    /// registry's tests, never by user input: `new` has refused undeclared keys).
    pub fn get(&self, key: &str) -> Option<f64> {
        let spec = self
            .specs
            .iter()
            .find(|s| s.name == key)
            .unwrap_or_else(|| panic!("{} reads undeclared parameter {key}", self.cca));
        #[cfg(test)]
        self.read.borrow_mut().insert(spec.name);
        self.given.get(key).copied().or(spec.default)
    }

    /// Whether the flow gave `key` itself (rather than taking the default).
    pub fn given(&self, key: &str) -> bool {
        self.given.contains_key(key)
    }

    fn required(&self, key: &str) -> f64 {
        self.get(key)
            .unwrap_or_else(|| panic!("{} parameter {key} has no default", self.cca))
    }

    pub fn real(&self, key: &str) -> f64 {
        self.required(key)
    }

    pub fn int(&self, key: &str) -> u32 {
        self.required(key) as u32
    }

    pub fn flag(&self, key: &str) -> bool {
        self.required(key) != 0.0
    }

    /// Declared parameters the constructor never read (each must change something).
    #[cfg(test)]
    pub fn unread(&self) -> Vec<&'static str> {
        let read = self.read.borrow();
        self.specs
            .iter()
            .map(|s| s.name)
            .filter(|n| !read.contains(n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec::int("alpha", 2, 0, 100, "packets", "a"),
        ParamSpec::real("beta", 0.7, 0.05, 0.95, "", "b"),
        ParamSpec::flag("hystart", true, "h"),
    ];

    fn map(kv: &[(&str, f64)]) -> BTreeMap<String, f64> {
        kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn unknown_parameter_is_named_with_the_allowed_ones() {
        let given = map(&[("alpha", 1.0), ("gamm", 2.0)]);
        let err = Params::new("vegas", SPECS, &given).err().unwrap();
        assert_eq!(err.param, "gamm");
        assert_eq!(
            err.message,
            "vegas has no parameter \"gamm\"; allowed: alpha, beta, hystart"
        );
    }

    #[test]
    fn values_are_checked_by_kind_and_range() {
        for (k, v, allowed) in [
            ("beta", 1.5, "a number from 0.05 to 0.95"),
            ("alpha", 1.5, "a whole number from 0 to 100"),
            ("alpha", -1.0, "a whole number from 0 to 100"),
            ("hystart", 0.5, "true or false"),
            ("beta", f64::NAN, "a number from 0.05 to 0.95"),
        ] {
            let given = map(&[(k, v)]);
            let err = Params::new("cubic", SPECS, &given).err().unwrap();
            assert_eq!(err.param, k);
            assert_eq!(
                err.message,
                format!("{v} is not allowed; allowed: {allowed}")
            );
        }
    }

    #[test]
    fn defaults_fill_what_is_not_given() {
        let given = map(&[("beta", 0.8), ("hystart", 0.0)]);
        let p = Params::new("cubic", SPECS, &given).unwrap();
        assert_eq!(
            (p.int("alpha"), p.real("beta"), p.flag("hystart")),
            (2, 0.8, false)
        );
        assert!(p.given("beta") && !p.given("alpha"));
        assert!(p.unread().is_empty());
    }

    #[test]
    fn algorithm_without_parameters_rejects_any() {
        let given = map(&[("x", 1.0)]);
        let err = Params::new("reno", &[], &given).err().unwrap();
        assert_eq!(err.message, "reno has no parameter \"x\"; allowed: none");
    }
}
