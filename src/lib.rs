//! hostbench: how good a (cloud) host really is. See docs/design.md for the layers:
//! front ends (`cli`, `compat`) -> workloads (`workload`, on `measure`) -> `model`
//! -> renderers (`report`) and orchestration (`suite`).

pub mod cli;
pub mod compat;
pub mod env;
pub mod fsutil;
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
pub mod limits;
pub mod measure;
pub mod model;
pub mod progress;
pub mod report;
pub mod store;
pub mod suite;
pub mod units;
pub mod workload;

/// The tests' rule for a missing requirement (`HOSTBENCH_STRICT`), the same file the
/// integration tests use.
#[cfg(test)]
#[path = "../tests/common/strict.rs"]
pub(crate) mod strict;

#[cfg(test)]
mod strict_tests {
    use std::process::Command;

    /// A missing requirement is a printed skip, and under `HOSTBENCH_STRICT=1` a
    /// failure: this test runs itself again as a probe that misses something.
    #[test]
    fn a_missing_requirement_fails_only_when_strict() {
        if std::env::var_os("HOSTBENCH_STRICT_PROBE").is_some() {
            crate::strict::missing("a probe's requirement", "nothing to install");
            return;
        }
        let me = "strict_tests::a_missing_requirement_fails_only_when_strict";
        for (strict, passes, says) in [
            (
                "1",
                false,
                "HOSTBENCH_STRICT=1: a probe's requirement is missing; nothing to install",
            ),
            (
                "0",
                true,
                "skipped: a probe's requirement is missing; nothing to install",
            ),
        ] {
            let out = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", me, "--nocapture"])
                .env("HOSTBENCH_STRICT_PROBE", "1")
                .env("HOSTBENCH_STRICT", strict)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.success(), passes, "{text}");
            assert!(text.contains(says), "{text}");
        }
    }
}
