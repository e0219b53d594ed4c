//! The `drop7` binary: see `drop7 --help` and the README.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
