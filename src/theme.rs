//! Themes: flat TOML files of named colour slots (themes/*.toml, documented in dark.toml).
//! The three shipped themes are built into the binary; `--theme` also takes a file path. A file
//! that sets only some slots takes the rest from the dark default. `NO_COLOR` turns every colour
//! off; glyphs and bold/reversed keep states readable without it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};

use crate::a2a::{StateClass, TaskState};
use crate::event::Health;

pub const BUILT_IN: [(&str, &str); 3] = [
    ("dark", include_str!("../themes/dark.toml")),
    ("light", include_str!("../themes/light.toml")),
    ("ansi16", include_str!("../themes/ansi16.toml")),
];

/// A theme that cannot be used, in the words the user sees.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    #[error("{slot} = {value:?}: not a colour")]
    NotAColour { slot: String, value: String },
    #[error("unknown colour slot {0:?} (see themes/dark.toml)")]
    UnknownSlot(String),
    /// Neither a built-in name nor a readable file.
    #[error("theme {name:?}: {source} (built-in themes: {})", built_in_names())]
    NotFound { name: String, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    InFile { path: PathBuf, source: Box<ThemeError> },
}

fn built_in_names() -> String {
    BUILT_IN.map(|(n, _)| n).join(", ")
}

#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub text: Color,
    pub dim: Color,
    pub title: Color,
    pub border: Color,
    pub selection: Color,
    pub header: Color,
    pub link: Color,
    pub active: Color,
    pub interrupted: Color,
    pub success: Color,
    pub failure: Color,
    pub canceled: Color,
    pub unknown: Color,
    pub healthy: Color,
    pub degraded: Color,
    pub broken: Color,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::parse(BUILT_IN[0].1, None).expect("the built-in dark theme parses")
    }
}

impl Theme {
    /// Reads a theme file's text over `base` (over `blank` when `None`).
    pub fn parse(text: &str, base: Option<&Theme>) -> Result<Theme, ThemeError> {
        let slots: BTreeMap<String, String> = toml::from_str(text)?;
        let mut theme = base.cloned().unwrap_or_else(Theme::blank);
        for (slot, value) in slots {
            let Ok(color) = value.parse::<Color>() else {
                return Err(ThemeError::NotAColour { slot, value });
            };
            let target = match slot.as_str() {
                "text" => &mut theme.text,
                "dim" => &mut theme.dim,
                "title" => &mut theme.title,
                "border" => &mut theme.border,
                "selection" => &mut theme.selection,
                "header" => &mut theme.header,
                "link" => &mut theme.link,
                "active" => &mut theme.active,
                "interrupted" => &mut theme.interrupted,
                "success" => &mut theme.success,
                "failure" => &mut theme.failure,
                "canceled" => &mut theme.canceled,
                "unknown" => &mut theme.unknown,
                "healthy" => &mut theme.healthy,
                "degraded" => &mut theme.degraded,
                "broken" => &mut theme.broken,
                _ => return Err(ThemeError::UnknownSlot(slot)),
            };
            *target = color;
        }
        Ok(theme)
    }

    /// A built-in name (`dark`, `light`, `ansi16`) or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Theme, ThemeError> {
        if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
            return Theme::parse(text, None);
        }
        let path = Path::new(name_or_path);
        let text = std::fs::read_to_string(path).map_err(|source| ThemeError::NotFound {
            name: name_or_path.to_string(),
            source,
        })?;
        Theme::parse(&text, Some(&Theme::default())).map_err(|e| ThemeError::InFile {
            path: path.to_path_buf(),
            source: Box::new(e),
        })
    }

    /// Every colour the terminal's own. With `NO_COLOR` (https://no-color.org) this is the
    /// theme; it is also what a theme file is read over when no base is given.
    pub fn blank() -> Theme {
        let r = Color::Reset;
        Theme {
            text: r,
            dim: r,
            title: r,
            border: r,
            selection: r,
            header: r,
            link: r,
            active: r,
            interrupted: r,
            success: r,
            failure: r,
            canceled: r,
            unknown: r,
            healthy: r,
            degraded: r,
            broken: r,
        }
    }

    pub fn state(&self, state: &TaskState) -> Style {
        let style = Style::new();
        match state.class() {
            StateClass::Active => style.fg(self.active),
            StateClass::Interrupted => style.fg(self.interrupted).add_modifier(Modifier::BOLD),
            StateClass::Terminal => match state {
                TaskState::Completed => style.fg(self.success),
                TaskState::Canceled => style.fg(self.canceled),
                _ => style.fg(self.failure),
            },
            StateClass::Unknown => style.fg(self.unknown).add_modifier(Modifier::REVERSED),
        }
    }

    pub fn health(&self, health: &Health) -> Style {
        let color = match health {
            Health::Streaming => self.healthy,
            Health::Connecting | Health::Polling { .. } | Health::Reconnecting { .. } => self.degraded,
            Health::Unauthorized { .. } | Health::Unreachable { .. } => self.broken,
        };
        Style::new().fg(color)
    }

    pub fn dim(&self) -> Style {
        Style::new().fg(self.dim)
    }
}

/// A glyph beside each state colour, so a state reads without colour too.
pub fn state_glyph(state: &TaskState) -> &'static str {
    match state.class() {
        StateClass::Active => "●",
        StateClass::Interrupted => "◆",
        StateClass::Terminal if *state == TaskState::Completed => "✔",
        StateClass::Terminal if *state == TaskState::Canceled => "○",
        StateClass::Terminal => "✖",
        StateClass::Unknown => "?",
    }
}

pub fn health_glyph(health: &Health) -> &'static str {
    match health {
        Health::Streaming => "●",
        Health::Polling { .. } => "◐",
        Health::Connecting | Health::Reconnecting { .. } => "◌",
        Health::Unauthorized { .. } => "⊘",
        Health::Unreachable { .. } => "✖",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_themes_parse_and_set_every_slot() {
        for (name, text) in BUILT_IN {
            let slots: BTreeMap<String, String> = toml::from_str(text).unwrap();
            assert_eq!(slots.len(), 16, "{name} sets every slot");
            Theme::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn partial_themes_fall_back_and_mistakes_are_named() {
        let t = Theme::parse("success = \"#00ff00\"", Some(&Theme::default())).unwrap();
        assert_eq!(t.success, Color::Rgb(0, 255, 0));
        assert_eq!(t.failure, Theme::default().failure);
        let err = Theme::parse("sucess = \"red\"", None).unwrap_err().to_string();
        assert!(err.contains("sucess"), "{err}");
        let err = Theme::parse("success = \"grean\"", None).unwrap_err().to_string();
        assert!(err.contains("not a colour"), "{err}");
        assert!(
            Theme::load("no-such-theme")
                .unwrap_err()
                .to_string()
                .contains("built-in themes")
        );
    }

    #[test]
    fn states_are_styled_by_class() {
        let t = Theme::default();
        assert!(t.state(&TaskState::InputRequired).add_modifier.contains(Modifier::BOLD));
        assert!(
            t.state(&TaskState::Unknown("X".into()))
                .add_modifier
                .contains(Modifier::REVERSED)
        );
        assert_ne!(t.state(&TaskState::Completed).fg, t.state(&TaskState::Failed).fg);
        assert_eq!(state_glyph(&TaskState::Rejected), "✖");
    }
}
