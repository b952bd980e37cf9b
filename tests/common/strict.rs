//! `HOSTBENCH_STRICT=1`: a test whose requirement (a peer tool, a privilege, a device)
//! is missing fails instead of skipping, so a suite cannot go green by skipping (CI
//! sets it). Shared by the integration tests (tests/common) and the library's unit
//! tests (src/lib.rs includes this file), so the rule lives in one place.

/// Says that `what` is missing and `how_to_get_it`. Under `HOSTBENCH_STRICT=1` that
/// fails the test; otherwise it prints the skip line and the caller skips.
pub fn missing(what: &str, how_to_get_it: &str) {
    if strict() {
        panic!("HOSTBENCH_STRICT=1: {what} is missing; {how_to_get_it}");
    }
    eprintln!("skipped: {what} is missing; {how_to_get_it}");
}

/// Whether `HOSTBENCH_STRICT=1` is set.
pub fn strict() -> bool {
    std::env::var_os("HOSTBENCH_STRICT").is_some_and(|v| v == "1")
}
