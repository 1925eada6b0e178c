//! The `a2a-watch` binary: everything is in the library (`cli::main`), so tests and benches reach it too.

fn main() -> std::process::ExitCode {
    a2a_watch::cli::main()
}
