//! `cargo run --example gen-docs [ROOT]`: writes the generated manual pages into
//! `ROOT/man/` and the completion scripts into `ROOT/completions/` (ROOT defaults to the
//! repository), removing files there that are no longer generated. `make man completions`
//! runs it; a test checks that the committed files match.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    match tinytool::docs::write_all(&root) {
        Ok(written) => {
            for path in written {
                println!("{}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("gen-docs: cannot write into {}: {err}", root.display());
            ExitCode::FAILURE
        }
    }
}
