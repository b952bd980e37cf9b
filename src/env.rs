//! The environment variables through which hostbench is steered where a command line
//! has no room for its flags: a personality speaks its peer's grammar, and a soak
//! slice is a peer's command line run unchanged. One place, so the writer (soak) and
//! the readers (`compat::keep`, `cli::save`) cannot drift apart. docs/store.md lists
//! them for users.

/// `1`: keep nothing (a native command's `--no-save`).
pub const NO_SAVE: &str = "HOSTBENCH_NO_SAVE";
/// A results database other than the default (a native command's `--db` wins).
pub const DB: &str = "HOSTBENCH_DB";
/// `k=v[,k=v…]`: labels for a personality's run.
pub const LABEL: &str = "HOSTBENCH_LABEL";
/// `1`: say on stderr where a personality's run was kept, or why not.
pub const DEBUG: &str = "HOSTBENCH_DEBUG";
/// Set by a soak: the slice's length in seconds, which a personality applies to its
/// own time option.
pub const SLICE_SECONDS: &str = "HOSTBENCH_SLICE_SECONDS";
/// Set by a soak: where a personality writes its outcomes (a JSON array).
pub const OUTCOMES: &str = "HOSTBENCH_OUTCOMES";

/// Whether a switch variable is on: set, not empty, not `0`.
pub fn on(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}
