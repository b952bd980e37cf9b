//! iperf3's test as hostbench runs it, on either end: its wire protocol (`wire`),
//! stream setup (`connect`), the data streams and their accounting (`streams`), the
//! running test with its intervals (`engine`), and the results, with the client's
//! conversion to the one result model (`result`). The iperf3 personality
//! (`compat::iperf3`) keeps the command line, the control flow and the output.

pub mod connect;
pub mod engine;
pub mod result;
pub mod streams;
pub mod wire;

pub use engine::Row;
pub use result::ClientRun;
