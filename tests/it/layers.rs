//! The layers (issue 21): the engine is its own crate (`crates/a2a-watch-engine`), so the
//! compiler keeps it from naming the front ends; what the compiler does not check is checked
//! here: no import circle between the top-level modules of either crate, and no terminal or
//! command-line crate among the engine's dependencies. Read from the `crate::` paths of each
//! module's files, test code left out, so a new circle fails here before review. Text is matched
//! naively: a `crate::` path in a string counts (an extra edge fails loudly, never silently), and
//! a line is read up to its first `//`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates' source folders.
fn crates() -> [PathBuf; 2] {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [root.join("src"), root.join("crates/a2a-watch-engine/src")]
}

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Each top-level module of a crate's `src` and the top-level modules its non-test code names.
fn module_graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    let mut files = vec![src.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("src/ is readable") {
                let entry = entry.expect("a directory entry");
                // A `tests/` folder or `tests.rs` is test code, as `#[cfg(test)] mod tests` is.
                if entry.file_name() != "tests" {
                    files.push(entry.path());
                }
            }
            continue;
        }
        let relative = path.strip_prefix(src).expect("below src/");
        let first = relative
            .components()
            .next()
            .expect("a path")
            .as_os_str()
            .to_string_lossy();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        let name = path.file_name().unwrap_or_default();
        if path.extension().is_none_or(|e| e != "rs")
            || ["main", "lib"].contains(&module.as_str())
            || name == "tests.rs"
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let named = graph.entry(module.clone()).or_default();
        for target in crate_paths(&text) {
            if target != module {
                named.insert(target);
            }
        }
    }
    graph
}

/// The top-level modules a file's code names as `crate::x` or `crate::{x, y::z}`, before its
/// `#[cfg(test)] mod` and without `//` comments.
fn crate_paths(text: &str) -> BTreeSet<String> {
    // Test modules close a file; a `#[cfg(test)]` helper elsewhere is read as code.
    let tests = text.match_indices("#[cfg(test)]").find(|(at, attr)| {
        let after = text[at + attr.len()..].trim_start();
        after.starts_with("mod ") || after.starts_with("pub mod ")
    });
    let code = &text[..tests.map_or(text.len(), |(at, _)| at)];
    let code: String = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The first name of each item at the group's own depth.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphabetic() || c == '_') => {
                        found.insert(identifier(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(identifier(rest));
        }
    }
    found.retain(|m| !m.is_empty() && m != "self");
    found
}

fn identifier(text: &str) -> String {
    text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// A circle through `from`, as the modules on it, if there is one.
fn circle_from(graph: &Graph, from: &str) -> Option<Vec<String>> {
    // Depth-first, keeping the path: a module met again on the path closes a circle.
    fn walk(graph: &Graph, at: &str, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == at) {
            return Some(path[start..].to_vec());
        }
        if !done.insert(at.to_string()) {
            return None;
        }
        path.push(at.to_string());
        for next in graph.get(at).into_iter().flatten() {
            if let Some(circle) = walk(graph, next, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    walk(graph, from, &mut Vec::new(), &mut BTreeSet::new())
}

#[test]
fn paths_are_read_from_groups_nested_groups_and_plain_uses() {
    let text = "use crate::{a2a::{Task, Message}, event::Event};\nlet x = crate::store::Store::new();\n\
                // crate::ui in a comment\n#[cfg(test)]\nfn helper() { crate::text::one_line(\"\"); }\n\
                #[cfg(test)]\nmod tests { use crate::app::App; }";
    let found: Vec<_> = crate_paths(text).into_iter().collect();
    assert_eq!(found, ["a2a", "event", "store", "text"]);
}

#[test]
fn no_import_circle_between_top_level_modules() {
    for src in crates() {
        let graph = module_graph(&src);
        assert!(
            graph.len() > 5,
            "the graph of {} is read at all: {graph:?}",
            src.display()
        );
        for module in graph.keys() {
            if let Some(circle) = circle_from(&graph, module) {
                panic!(
                    "an import circle in {}: {} -> {}",
                    src.display(),
                    circle.join(" -> "),
                    circle[0]
                );
            }
        }
    }
}

#[test]
fn the_front_end_graph_sees_ui_draw_app() {
    let [front, _] = crates();
    let graph = module_graph(&front);
    assert!(graph.get("ui").is_some_and(|named| named.contains("app")), "{graph:?}");
}

/// The names of a manifest's `[dependencies]` (not dev or build ones).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            names.push(line.split(['=', '.']).next().unwrap_or_default().trim().to_string());
        }
    }
    names
}

#[test]
fn the_engine_depends_on_no_terminal_or_command_line_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("crates/a2a-watch-engine/Cargo.toml")).expect("the manifest");
    let names = dependencies(&manifest);
    assert!(
        names.iter().any(|n| n == "reqwest"),
        "the manifest is read at all: {names:?}"
    );
    for front_end in [
        "ratatui",
        "crossterm",
        "clap",
        "arboard",
        "ratatui-textarea",
        "a2a-watch",
    ] {
        assert!(
            !names.iter().any(|n| n == front_end),
            "the engine depends on {front_end}"
        );
    }
}
