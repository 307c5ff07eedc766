//! The registry of congestion controls: every algorithm a scenario may name, the stacks it
//! exists in, and its parameters under each (name, kind, default, range, unit, meaning).
//!
//! This is the one list. The Python package asks `tcpfair._core` for it (scenario
//! validation, `tcpfair doctor`, the parameter table in docs/scenario.md), so adding an
//! algorithm or a parameter means: its file declares `PARAMS` and reads them in its
//! constructor, and one entry here names it.

use super::params::{ParamError, ParamSpec, Params};
use super::{bic, compound, cubic, highspeed, vegas, AnyCc};
use crate::config::Stack;
use std::collections::BTreeMap;

/// One algorithm under one stack: its parameters there.
#[derive(Clone, Copy, Debug)]
pub struct StackParams {
    pub stack: Stack,
    pub params: &'static [ParamSpec],
}

/// One congestion control a scenario may name.
#[derive(Clone, Copy, Debug)]
pub struct CcInfo {
    pub name: &'static str,
    /// One line: what it is and which implementation the simulator follows.
    pub summary: &'static str,
    pub stacks: &'static [StackParams],
    /// The name Linux's `net.ipv4.tcp_congestion_control` takes for it (the kernel
    /// backend's), or None when mainline Linux has no such module.
    pub kernel: Option<&'static str>,
}

const fn linux(params: &'static [ParamSpec]) -> StackParams {
    StackParams {
        stack: Stack::Linux,
        params,
    }
}

const fn ns2(params: &'static [ParamSpec]) -> StackParams {
    StackParams {
        stack: Stack::Ns2,
        params,
    }
}

/// Parameters of `Agent/TCP/Vegas` (ns-default.tcl names in the meanings).
pub const NS2_VEGAS_PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "alpha",
        1,
        0,
        vegas::MAX_THRESHOLD,
        "packets",
        "v_alpha_: below alpha packets queued (diff) the window grows by one per RTT",
    ),
    ParamSpec::int(
        "beta",
        3,
        0,
        vegas::MAX_THRESHOLD,
        "packets",
        "v_beta_: above beta packets queued (diff) the window shrinks by one per RTT",
    ),
    ParamSpec::int(
        "gamma",
        1,
        0,
        vegas::MAX_THRESHOLD,
        "packets",
        "v_gamma_: slow start ends once more than gamma packets are queued",
    ),
    ParamSpec::int(
        "delta",
        0,
        1,
        vegas::MAX_THRESHOLD,
        "packets",
        "Enhanced Vegas (Hasegawa et al.): alpha = beta = delta, no hold region; unset: Vegas",
    )
    .optional(),
    ParamSpec::int(
        "window_init",
        2,
        1,
        64,
        "packets",
        "windowInit_: the window once packet 0 is acknowledged (ns-2 default 2 since \
         2001-05-26, 1 before; seed 003's runs match 1)",
    ),
    ParamSpec::flag(
        "exact_base_rtt",
        false,
        "v_baseRTT_ is the path's true minimum RTT, not measured (seed 003's stated condition)",
    ),
];

/// Every congestion control, in the order tables list them.
pub const REGISTRY: &[CcInfo] = &[
    CcInfo {
        name: "reno",
        summary: "RFC 5681 AIMD (Linux's reno; ns-2's Agent/TCP/Reno)",
        stacks: &[linux(&[]), ns2(&[])],
        kernel: Some("reno"),
    },
    CcInfo {
        name: "newreno",
        summary: "Reno's window with RFC 6582 recovery (Linux: reno with sack = false; \
                  ns-2's Agent/TCP/Newreno)",
        stacks: &[linux(&[]), ns2(&[])],
        kernel: Some("reno"),
    },
    CcInfo {
        name: "sack",
        summary: "ns-2's Agent/TCP/Sack1: Reno's window with a SACK scoreboard and pipe-based \
                  recovery (under linux, SACK is the flow's sack = true)",
        stacks: &[ns2(&[])],
        kernel: None,
    },
    CcInfo {
        name: "cubic",
        summary: "CUBIC (RFC 9438) with HyStart, as Linux's tcp_cubic.c",
        stacks: &[linux(cubic::PARAMS)],
        kernel: Some("cubic"),
    },
    CcInfo {
        name: "bic",
        summary: "BIC-TCP (Xu, Harfoush & Rhee 2004), as Linux's tcp_bic.c",
        stacks: &[linux(bic::PARAMS)],
        kernel: Some("bic"),
    },
    CcInfo {
        name: "highspeed",
        summary: "HighSpeed TCP (RFC 3649), as Linux's tcp_highspeed.c",
        stacks: &[linux(highspeed::PARAMS)],
        kernel: Some("highspeed"),
    },
    CcInfo {
        name: "compound",
        summary: "Compound TCP (Tan et al. 2006), as the Linux port tcp_compound.c",
        stacks: &[linux(compound::PARAMS)],
        kernel: None,
    },
    CcInfo {
        name: "vegas",
        summary: "TCP Vegas (Brakmo & Peterson 1995): Linux's tcp_vegas.c; ns-2's \
                  Agent/TCP/Vegas",
        stacks: &[linux(vegas::PARAMS), ns2(NS2_VEGAS_PARAMS)],
        kernel: Some("vegas"),
    },
    CcInfo {
        name: "bbr",
        summary: "BBR v1, as Linux's tcp_bbr.c (no tunables)",
        stacks: &[linux(&[])],
        kernel: Some("bbr"),
    },
];

/// The entry of `name`.
pub fn find(name: &str) -> Option<&'static CcInfo> {
    REGISTRY.iter().find(|c| c.name == name)
}

/// Names of the algorithms that exist under `stack`.
pub fn names_in(stack: Stack) -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|c| c.stacks.iter().any(|s| s.stack == stack))
        .map(|c| c.name)
        .collect()
}

/// The declared parameters of `name` under `stack`; an error (naming no parameter) when
/// the algorithm does not exist there.
pub fn params_of(name: &str, stack: Stack) -> Result<&'static [ParamSpec], ParamError> {
    let allowed = || names_in(stack).join(", ");
    let info = find(name).ok_or_else(|| {
        ParamError::new(
            "",
            format!(
                "unknown congestion control {name:?}; allowed: {}",
                allowed()
            ),
        )
    })?;
    info.stacks
        .iter()
        .find(|s| s.stack == stack)
        .map(|s| s.params)
        .ok_or_else(|| {
            ParamError::new(
                "",
                format!(
                    "congestion control {name:?} does not exist under stack {:?}; allowed: {}",
                    stack.name(),
                    allowed()
                ),
            )
        })
}

/// Check `given` as `name`'s parameters under `stack`: declared names, kinds and ranges,
/// then the algorithm's own rules across parameters (e.g. Vegas's alpha <= beta) by
/// building it.
pub fn check(name: &str, stack: Stack, given: &BTreeMap<String, f64>) -> Result<(), ParamError> {
    match stack {
        Stack::Linux => AnyCc::from_name(name, given, 0).map(|_| ()),
        Stack::Ns2 => {
            let specs = params_of(name, stack)?;
            let p = Params::new(name, specs, given)?;
            if name == "vegas" {
                crate::ns2::vegas_params(&p, 0.0)?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_builds_with_defaults_and_reads_every_declared_parameter() {
        for info in REGISTRY {
            for sp in info.stacks {
                let empty = BTreeMap::new();
                let p = Params::new(info.name, sp.params, &empty).unwrap();
                match sp.stack {
                    Stack::Linux => {
                        AnyCc::build(info.name, &p, 1).unwrap();
                    }
                    Stack::Ns2 if info.name == "vegas" => {
                        crate::ns2::vegas_params(&p, 0.0).unwrap();
                    }
                    Stack::Ns2 => {}
                }
                assert!(
                    p.unread().is_empty(),
                    "{} ({:?}) never reads {:?}",
                    info.name,
                    sp.stack,
                    p.unread()
                );
            }
        }
    }

    #[test]
    fn declarations_are_consistent() {
        for info in REGISTRY {
            for sp in info.stacks {
                for (i, s) in sp.params.iter().enumerate() {
                    assert!(s.min <= s.max, "{}.{}", info.name, s.name);
                    if let Some(d) = s.default {
                        assert!(s.problem(d).is_none(), "{}.{} default", info.name, s.name);
                    }
                    assert!(!s.meaning.is_empty() && !s.meaning.contains('\n'));
                    assert!(sp.params[..i].iter().all(|o| o.name != s.name));
                }
            }
        }
    }

    #[test]
    fn algorithms_exist_where_the_stacks_implement_them() {
        assert_eq!(
            names_in(Stack::Linux),
            [
                "reno",
                "newreno",
                "cubic",
                "bic",
                "highspeed",
                "compound",
                "vegas",
                "bbr"
            ]
        );
        assert_eq!(names_in(Stack::Ns2), ["reno", "newreno", "sack", "vegas"]);
        assert_eq!(
            params_of("cubic", Stack::Ns2).unwrap_err().message,
            "congestion control \"cubic\" does not exist under stack \"ns2\"; allowed: reno, \
             newreno, sack, vegas"
        );
    }

    #[test]
    fn errors_name_the_parameter() {
        let given = |k: &str, v: f64| BTreeMap::from([(k.to_string(), v)]);
        let e = check("cubic", Stack::Linux, &given("betta", 0.8)).unwrap_err();
        assert_eq!(e.param, "betta");
        assert!(
            e.message.contains("allowed: beta, c, fast_convergence"),
            "{e}"
        );
        let e = check("vegas", Stack::Linux, &given("alpha", 5.0)).unwrap_err();
        assert_eq!(
            e,
            ParamError::new(
                "alpha",
                "vegas needs alpha <= beta, got alpha = 5 and beta = 4"
            )
        );
        let e = check("vegas", Stack::Linux, &given("delta", 2.0)).unwrap_err();
        assert_eq!(
            e.message,
            "vegas has no parameter \"delta\"; allowed: alpha, beta, gamma"
        );
        assert!(check("vegas", Stack::Ns2, &given("delta", 2.0)).is_ok());
        let e = check("compound", Stack::Linux, &given("gamma_low", 40.0)).unwrap_err();
        assert_eq!(e.param, "gamma_low");
    }
}
