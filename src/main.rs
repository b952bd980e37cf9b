use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    // A UnixBench-style test program (a copy started by `unixbench`/`index`): it must
    // stay single-threaded, so it runs before the Ctrl-C handler's thread exists.
    if let Some(code) = hostbench::workload::unixbench::program::main_if_program(&args[1..]) {
        return code;
    }
    install_interrupt_handler();
    quiet_on_broken_pipe();
    // Invoked through a peer's name (a `sysbench -> hostbench` symlink), or as
    // `hostbench sysbench ...`: the personality takes the rest of the line verbatim.
    let invoked_as = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The line as typed, the program's file name first: what the store keeps.
    let command_line: Vec<String> = std::iter::once(invoked_as.clone())
        .chain(args[1..].iter().map(|a| a.to_string_lossy().into_owned()))
        .collect();
    if let Some(code) = hostbench::compat::dispatch(&invoked_as, &args[1..], &command_line) {
        return code;
    }
    if let Some(peer) = args.get(1).map(|a| a.to_string_lossy().into_owned())
        && let Some(code) = hostbench::compat::dispatch(&peer, &args[2..], &command_line)
    {
        return code;
    }
    args[0] = "hostbench".into();
    hostbench::cli::main(args)
}

/// `hostbench … | head`: when the reader goes away, end quietly with the status a
/// shell gives a tool killed by SIGPIPE (141) instead of a panic message. (SIGPIPE
/// itself stays ignored, so network and Redis sockets report a closed peer as an
/// error rather than killing the process.)
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to std") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// First Ctrl-C: stop measuring and report what was measured, marked interrupted.
/// Second: leave at once.
fn install_interrupt_handler() {
    let result = ctrlc::set_handler(|| {
        if hostbench::measure::stop_requested() {
            std::process::exit(130);
        }
        hostbench::measure::request_stop();
    });
    if let Err(e) = result {
        eprintln!("hostbench: warning: Ctrl-C will end the run without a report ({e})");
    }
}
