//! The command line's own errors, apart from the protocol's (`a2a::Error`): what the user can
//! fix in the flags or the config, and what the app itself meets (the terminal, the demo's
//! ports). Each maps to the exit code the command line documents.

use crate::a2a;
use crate::app::keys::KeyError;
use crate::config::ConfigError;
use crate::theme::ThemeError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Anything the agent, the transport or the client refused.
    #[error(transparent)]
    Protocol(#[from] a2a::Error),

    #[error(transparent)]
    Config(#[from] ConfigError),

    #[error(transparent)]
    Theme(#[from] ThemeError),

    #[error(transparent)]
    Keys(#[from] KeyError),

    /// A flag, or a combination of flags and the task's state, that cannot be used.
    #[error("{0}")]
    Usage(String),

    /// What the agents could not do that no flag mends: no extended card on offer, agents that
    /// `status` could not read.
    #[error("{0}")]
    Failed(String),

    /// The terminal, the ports the demo binds, the files `get --save-artifacts` writes.
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },

    /// A file `replay` cannot read: where, and why.
    #[error(transparent)]
    Recording(#[from] crate::record::ReadError),
}

impl From<crate::run::Error> for Error {
    fn from(error: crate::run::Error) -> Error {
        match error {
            crate::run::Error::Io { what, source } => Error::Io { what, source },
            crate::run::Error::Recording(e) => Error::Recording(e),
        }
    }
}

impl Error {
    /// 2 for what the user can fix in the command line or the config (bad usage), 1 for the rest
    /// (protocol, transport, I/O).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Protocol(a2a::Error::Input(_))
            | Error::Config(_)
            | Error::Theme(_)
            | Error::Keys(_)
            | Error::Usage(_) => 2,
            Error::Protocol(_) | Error::Failed(_) | Error::Io { .. } | Error::Recording(_) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_user_can_fix_exits_2_and_the_rest_1() {
        let input = a2a::Error::Input("header \"a b\" is not a valid HTTP header".into());
        assert_eq!(Error::from(input).exit_code(), 2);
        assert_eq!(
            Error::Usage("--timeout must be a positive number of seconds".into()).exit_code(),
            2
        );
        let bad_key = crate::app::keys::KeyMap::with_overrides([(None, "not-a-key", "quit")]).unwrap_err();
        assert_eq!(Error::from(bad_key).exit_code(), 2);
        let stream = a2a::Error::Stream("reset".into());
        assert_eq!(Error::from(stream).exit_code(), 1);
        let terminal = Error::Io {
            what: "the terminal".into(),
            source: std::io::Error::other("not a tty"),
        };
        assert_eq!(terminal.exit_code(), 1);
        assert_eq!(terminal.to_string(), "the terminal: not a tty");
    }
}
