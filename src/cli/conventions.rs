//! What terminal users expect of a tool: shell completions and a man page, both made from the
//! command-line schema itself, so they never drift from the real flags.

use clap::CommandFactory;
use clap_complete::Shell;

use super::{Cli, Error, out};

/// `completions SHELL`: the completion script on stdout.
pub fn completions(shell: Shell) {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "a2a-watch", &mut script);
    out::write(&script);
}

/// `man`: the man page, in roff, on stdout.
pub fn man() -> Result<(), Error> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|source| Error::Io {
            what: "cannot render the man page".into(),
            source,
        })?;
    out::write(&page);
    Ok(())
}
