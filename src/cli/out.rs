//! Every byte the command line writes goes through here. A reader that went away (`| head -1`)
//! ends the process quietly with exit 0, as other Unix tools do (Rust ignores SIGPIPE, so the
//! write fails with EPIPE instead of killing us, and `println!` would panic on it).

use std::io::{self, Write};

/// Writes `text` to stdout as is.
pub fn print(text: &str) {
    write(text.as_bytes());
}

/// Writes `bytes` to stdout in one locked write and flushes: a batch of lines reaches the
/// reader together, with one system call rather than one per line.
pub fn write(bytes: &[u8]) {
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        stdout_failed(&e);
    }
}

/// Writes one line to stdout.
pub fn line(text: &str) {
    let mut out = io::stdout().lock();
    if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
        stdout_failed(&e);
    }
}

/// Writes one line to stderr. The caller sanitises agent text; a closed stderr is not worth a
/// panic (the exit code still tells).
pub fn error(text: &str) {
    let _ = writeln!(io::stderr().lock(), "{text}");
}

fn stdout_failed(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    error(&format!("a2a-watch: cannot write the output: {e}"));
    std::process::exit(1);
}
