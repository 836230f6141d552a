//! The `tinytool` binary: parse, run, map the outcome to the exit-status table.

fn main() -> std::process::ExitCode {
    let status = tinytool::cli::run(std::env::args_os().collect());
    std::process::ExitCode::from(status.code() as u8)
}
