//! hostbench: how good a (cloud) host really is. See docs/design.md for the layers:
//! front ends (`cli`, `compat`) -> workloads (`workload`, on `measure`) -> `model`
//! -> renderers (`report`) and orchestration (`suite`).

pub mod cli;
pub mod compat;
pub mod fsutil;
pub mod host;
pub mod limits;
pub mod measure;
pub mod model;
pub mod net;
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
