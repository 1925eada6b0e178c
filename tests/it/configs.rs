//! Every config fixture (tests/configs): a valid file parses and builds its agents; an invalid one
//! stops the real binary with exit 2 and exactly the line of its sibling `.expected` file, as the
//! user sees it on stderr. Theme and key mistakes surface when the dashboard starts, so invalid
//! files are run through the binary rather than `Config::parse` alone.

use std::path::{Path, PathBuf};
use std::process::Command;

use a2a_watch::app::keys::KeyMap;
use a2a_watch::config::Config;

/// The fixtures of one folder, by name, as paths relative to the crate root (the messages name
/// them so).
fn fixtures(folder: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Path::new("tests/configs").join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(&dir))
        .expect("the fixture folder exists")
        .map(|entry| dir.join(entry.expect("a readable entry").file_name()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

#[test]
fn valid_configs_parse_and_build_their_agents() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in fixtures("valid") {
        let text = std::fs::read_to_string(root.join(&path)).unwrap();
        let config = Config::parse(&text, &path).unwrap_or_else(|e| panic!("{e}"));
        KeyMap::with_overrides(config.key_overrides()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for agent in &config.agent {
            let spec = agent.spec();
            assert_eq!(spec.url, agent.url, "{}", path.display());
            assert_eq!(spec.tasks, agent.tasks, "{}", path.display());
        }
    }
}

#[test]
fn invalid_configs_fail_with_the_expected_message() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in fixtures("invalid") {
        let expected = std::fs::read_to_string(root.join(path.with_extension("expected")))
            .unwrap_or_else(|e| panic!("{}: no .expected beside it: {e}", path.display()));
        let out = Command::new(env!("CARGO_BIN_EXE_a2a-watch"))
            .arg("--config")
            .arg(&path)
            .current_dir(root)
            .env_remove("A2A_TOKEN")
            .output()
            .expect("the binary runs");
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        assert_eq!(String::from_utf8_lossy(&out.stderr), expected, "{}", path.display());
        assert!(out.stdout.is_empty(), "{}", path.display());
    }
}
