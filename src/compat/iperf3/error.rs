//! The iperf3 personality's errors, in iperf3's words: a command line it refuses
//! (`ArgError`, printed whole with the usage, exit 1) and a test that fails
//! (`Iperf3Error`, printed after `iperf3: error - `, or as the `-J` document's
//! `error`, exit 1). The tests compare these lines with a real iperf3's.

use super::USAGE;
use crate::workload::net::NetError;
use crate::workload::net::iperf3::connect::ConnectError;
use crate::workload::net::iperf3::wire::WireError;
use std::io;
use std::time::Duration;
use thiserror::Error;

/// `10`, `0.5`: seconds as a person writes them.
fn secs(d: &Duration) -> String {
    crate::units::format_g(d.as_secs_f64(), 6)
}

/// A command line iperf3 would refuse; Display is the whole message, usage included.
#[derive(Debug, Error)]
pub enum ArgError {
    #[error("iperf3: option '--{option}' requires an argument\n{USAGE}")]
    MissingLongValue { option: String },
    #[error("iperf3: unrecognized option '--{option}'\n{USAGE}")]
    UnknownLong { option: String },
    #[error("iperf3: option requires an argument -- '{option}'\n{USAGE}")]
    MissingShortValue { option: char },
    #[error("iperf3: invalid option -- '{option}'\n{USAGE}")]
    UnknownShort { option: char },
    /// What iperf3 calls a parameter error: the options parse but do not make a test.
    #[error("iperf3: parameter error - {0}\n{USAGE}")]
    Parameter(ParamProblem),
}

/// What is wrong with the options, after "parameter error - ".
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParamProblem {
    /// A value that does not parse as the option's number or size.
    #[error("invalid {what} '{value}'")]
    Invalid { what: &'static str, value: String },
    #[error("unexpected argument '{arg}'")]
    UnexpectedArgument { arg: String },
    #[error("bad format specifier '{value}'")]
    Format { value: String },
    #[error("invalid report interval (min = 0.1, max = 60.0 seconds)")]
    Interval { seconds: String },
    #[error("option '{option}' is not supported by hostbench's iperf3 personality")]
    Unsupported { option: String },
    #[error("must either be a client (-c) or server (-s)")]
    Role,
    #[error("number of parallel streams too large (maximum = {max})")]
    Parallel { streams: u32, max: u32 },
    #[error("test duration too long (maximum = 86400 seconds)")]
    Duration { seconds: u64 },
    #[error("cannot be both reverse and bidirectional")]
    ReverseAndBidir,
    #[error("only one test end condition (-t, -n, -k) may be specified")]
    EndConditions,
    #[error("block size invalid (minimum = {min} bytes, maximum = {max} bytes)")]
    BlockSize { len: u64, min: u64, max: u64 },
}

impl From<ParamProblem> for ArgError {
    fn from(p: ParamProblem) -> Self {
        ArgError::Parameter(p)
    }
}

/// Why a client's or a server's test failed.
#[derive(Debug, Error)]
pub enum Iperf3Error {
    /// The server's name does not resolve, or its control port does not answer.
    #[error("{}", control_connect_text(.0))]
    ControlConnect(#[source] NetError),
    /// The control connection (or the server's listener) failed outside a protocol
    /// step (the system's own words).
    #[error("{0}")]
    Control(#[source] io::Error),
    #[error("unable to send cookie to server: {0}")]
    SendCookie(#[source] io::Error),
    #[error("unable to send parameters to server: {0}")]
    SendParams(#[source] io::Error),
    #[error("control socket has closed unexpectedly")]
    ControlClosed,
    /// Before the test runs, the server did not answer a step within the bound.
    #[error(
        "no response from the server {server} within {} s (--connect-timeout sets the bound)",
        secs(.bound)
    )]
    NoResponse { server: String, bound: Duration },
    /// The test ended and no results came within the receive timeout.
    #[error(
        "no results from the server {server} within {} s of the test's end (--rcv-timeout sets the bound)",
        secs(.bound)
    )]
    NoResults { server: String, bound: Duration },
    /// ACCESS_DENIED: another client's test is running.
    #[error("the server is busy running a test. try again later")]
    Busy,
    /// SERVER_ERROR, with the iperf3 error number and errno the server sent.
    #[error("the server reported an error (iperf3 error {ierr}, errno {errno})")]
    ServerError { ierr: i32, errno: i32 },
    /// SERVER_TERMINATE from the server, or this server stopping (Ctrl-C).
    #[error("the server has terminated")]
    ServerTerminated,
    #[error("received an unknown control message ({0})")]
    UnknownState(i8),
    /// A state that needs a step not taken yet (a peer out of order).
    #[error("results requested before the test ran")]
    ResultsBeforeTest,
    #[error("display requested before results")]
    DisplayBeforeResults,
    #[error("unable to send results: {0}")]
    SendResults(#[source] io::Error),
    #[error("unable to receive results: {0}")]
    ReceiveResults(#[source] WireError),
    /// The data streams (or the server's listener) could not be set up.
    #[error(transparent)]
    Streams(#[from] ConnectError),
    #[error("unable to bind to '{bind}': not an IP address")]
    BindAddress { bind: String },
    #[error("unable to accept connection from client: {0}")]
    AcceptControl(#[source] io::Error),
    #[error("unable to receive parameters from client: {0}")]
    ReceiveParams(#[source] WireError),
    /// No data moved for the receive timeout, or the test outlived its length by 40 s.
    #[error("idle timeout for receiving data")]
    IdleTimeout,
    #[error("the client has unexpectedly closed the connection")]
    ClientClosed,
    #[error("the client has terminated")]
    ClientTerminated,
    /// IPERF_DONE before TEST_END.
    #[error("the client ended the test early")]
    ClientEndedEarly,
}

/// iperf3's words for a control connection that cannot be made: a refused one is
/// "Connection refused" without the errno.
fn control_connect_text(e: &NetError) -> String {
    match e {
        NetError::Connect { reason, .. } if reason.starts_with("connection refused") => {
            "unable to connect to server: Connection refused".into()
        }
        NetError::Connect { reason, .. } => format!("unable to connect to server: {reason}"),
        NetError::Resolve { reason, .. } => format!("unable to resolve host: {reason}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_iperf3s() {
        let refused = Iperf3Error::ControlConnect(NetError::Connect {
            addr: "127.0.0.1:9".into(),
            reason: "connection refused: is the server running on that port?".into(),
        });
        assert_eq!(
            refused.to_string(),
            "unable to connect to server: Connection refused"
        );
        let e = ArgError::from(ParamProblem::Role);
        assert_eq!(
            e.to_string(),
            format!(
                "iperf3: parameter error - must either be a client (-c) or server (-s)\n{USAGE}"
            )
        );
        let e = Iperf3Error::Streams(ConnectError::StreamsTimeout);
        assert_eq!(
            e.to_string(),
            "the client did not open its data streams in time"
        );
    }
}
