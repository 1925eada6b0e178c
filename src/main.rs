fn main() -> std::process::ExitCode {
    a2a_watch::cli::main()
}
