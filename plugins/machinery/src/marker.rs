//! Idempotent inserts at scaffold markers.
//!
//! A marker is a comment line `// +mni:scaffold:NAME` (Rust) or `# +mni:scaffold:NAME` (YAML,
//! TOML, shell, Makefile, Dockerfile). An [`Insert`] puts a fragment of code just above the
//! marker, delimited by two comment lines that carry the marker name and a fragment id:
//!
//! ```text
//!     // +mni:fragment:controllers:billing
//!     billing::controller(client.clone()),
//!     // +mni:fragment-end:controllers:billing
//!     // +mni:scaffold:controllers
//! ```
//!
//! Inserting the same id again replaces what lies between the delimiters, so running a command
//! twice leaves the file byte-identical and a changed fragment replaces its earlier version
//! instead of duplicating it. Rust files are parsed before and after the insert (an insert that
//! would leave code that does not parse is refused, naming the file and `syn`'s error) and the
//! fragment is formatted as the `rust` module describes; YAML files are parsed after the insert.
//! Inside a macro call such as `vec![...]` `syn` only sees tokens, so there the check is that
//! brackets still balance.

use mni_plugin::{Universe, UniverseError};

use crate::rust::{self, RustError};

/// Why an insert was refused. Nothing is changed when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MarkerError {
    /// The file type has no known comment syntax.
    #[error(
        "{path}: cannot insert at markers in this kind of file (known: .rs, .yaml, .yml, .toml, .sh, Makefile, Dockerfile)"
    )]
    UnsupportedFile {
        /// The file.
        path: String,
    },
    /// The marker is not in the file.
    #[error("{path}: scaffold marker `{marker}` not found; add it where generated code should go")]
    MarkerNotFound {
        /// The file.
        path: String,
        /// The full marker comment.
        marker: String,
    },
    /// The marker or a fragment delimiter appears more than once.
    #[error("{path}: `{line}` appears {count} times; it must appear once")]
    Duplicate {
        /// The file.
        path: String,
        /// The repeated line.
        line: String,
        /// How often.
        count: usize,
    },
    /// A fragment start has no matching end.
    #[error("{path}:{line}: fragment `{id}` has no end line `{end}`")]
    Unterminated {
        /// The file.
        path: String,
        /// 1-based line of the start.
        line: usize,
        /// The fragment id.
        id: String,
        /// The expected end line.
        end: String,
    },
    /// The Rust file does not parse before the insert.
    #[error("{0} (before inserting)")]
    RustBefore(#[source] RustError),
    /// The insert would leave Rust code that does not parse.
    #[error("{0} (after inserting fragment `{1}`; nothing was changed)")]
    RustAfter(#[source] RustError, String),
    /// The insert would leave YAML that does not parse.
    #[error(
        "{path}:{line}: invalid YAML after inserting fragment `{id}`: {message}; nothing was changed"
    )]
    Yaml {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The fragment id.
        id: String,
        /// The parser's message.
        message: String,
    },
    /// The file is not in the Universe.
    #[error(transparent)]
    Universe(#[from] UniverseError),
}

impl MarkerError {
    /// The [`PluginError`](mni_plugin::PluginError) a plugin `key` returns for this error: a
    /// Universe error stays one, anything else is the plugin's failure naming the file.
    #[must_use]
    pub fn into_plugin_error(self, key: &mni_plugin::PluginKey) -> mni_plugin::PluginError {
        match self {
            Self::Universe(e) => mni_plugin::PluginError::Universe(e),
            e => mni_plugin::PluginError::Failed {
                key: key.to_string(),
                message: e.to_string(),
                source: Some(Box::new(e)),
            },
        }
    }
}

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOutcome {
    /// The fragment was new and went in above the marker.
    Inserted,
    /// An earlier version of the fragment was replaced.
    Replaced,
    /// The fragment was already there, identical.
    Unchanged,
}

/// A fragment to insert at a marker. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insert {
    marker: String,
    id: String,
    code: String,
}

impl Insert {
    /// Inserts `code` at marker `NAME` (as in `+mni:scaffold:NAME`) under fragment id `id`
    /// (unique per marker and file, e.g. the service or kind name).
    #[must_use]
    pub fn new(marker: &str, id: &str, code: &str) -> Self {
        Self {
            marker: marker.to_owned(),
            id: id.to_owned(),
            code: code.to_owned(),
        }
    }

    /// The marker name.
    #[must_use]
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// The fragment id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Rust,
    Yaml,
    Hash,
}

fn syntax_of(path: &str) -> Option<Syntax> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e);
    match ext {
        Some("rs") => Some(Syntax::Rust),
        Some("yaml" | "yml") => Some(Syntax::Yaml),
        Some("toml" | "sh") => Some(Syntax::Hash),
        _ if name == "Makefile" || name == "Dockerfile" => Some(Syntax::Hash),
        _ => None,
    }
}

/// Applies `insert` to the file at `path` in the Universe. An insert that is already in place
/// leaves the file as it is but marks it touched, so the commit report lists it as unchanged.
pub fn insert(
    universe: &mut Universe,
    path: &str,
    insert: &Insert,
) -> Result<InsertOutcome, MarkerError> {
    let current = universe.get(path).ok_or_else(|| UniverseError::NotFound {
        path: path.to_owned(),
    })?;
    let (text, outcome) = insert_into(path, current, insert)?;
    if outcome == InsertOutcome::Unchanged {
        // Listed in the report as unchanged, like a template written twice.
        universe.touch(path)?;
    } else {
        universe.modify(path, |_| text)?;
    }
    Ok(outcome)
}

/// Makes sure the file at `path` has marker `NAME` (as in `+mni:scaffold:NAME`): a file
/// scaffolded before a later command needed the marker gets `lead` (lines to go above the
/// marker, e.g. a YAML key; may be empty) and the marker appended at its end, so that command
/// can [`insert`] at it. Returns whether the file changed.
pub fn ensure_marker(
    universe: &mut Universe,
    path: &str,
    marker: &str,
    lead: &str,
) -> Result<bool, MarkerError> {
    let syntax = syntax_of(path).ok_or_else(|| MarkerError::UnsupportedFile {
        path: path.to_owned(),
    })?;
    let prefix = if syntax == Syntax::Rust { "//" } else { "#" };
    let line = format!("{prefix} +mni:scaffold:{marker}");
    let current = universe.get(path).ok_or_else(|| UniverseError::NotFound {
        path: path.to_owned(),
    })?;
    if current.lines().any(|l| l.trim() == line) {
        return Ok(false);
    }
    let mut text = current.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(lead);
    if !lead.is_empty() && !lead.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&line);
    text.push('\n');
    universe.modify(path, |_| text)?;
    Ok(true)
}

/// Applies `insert` to `contents` (the file at `path`) and returns the new contents.
pub fn insert_into(
    path: &str,
    contents: &str,
    insert: &Insert,
) -> Result<(String, InsertOutcome), MarkerError> {
    let syntax = syntax_of(path).ok_or_else(|| MarkerError::UnsupportedFile {
        path: path.to_owned(),
    })?;
    let prefix = if syntax == Syntax::Rust { "//" } else { "#" };
    if syntax == Syntax::Rust {
        rust::check(path, contents).map_err(MarkerError::RustBefore)?;
    }
    let marker = format!("{prefix} +mni:scaffold:{}", insert.marker);
    let begin = format!("{prefix} +mni:fragment:{}:{}", insert.marker, insert.id);
    let end = format!("{prefix} +mni:fragment-end:{}:{}", insert.marker, insert.id);
    let code = if syntax == Syntax::Rust {
        rust::format_fragment(&insert.code)
    } else {
        rust::dedent(&insert.code)
    };

    let lines: Vec<&str> = contents.split_inclusive('\n').collect();
    let find = |needle: &str| -> Result<Option<usize>, MarkerError> {
        let hits: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.trim() == needle)
            .map(|(i, _)| i)
            .collect();
        match hits.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => Err(MarkerError::Duplicate {
                path: path.to_owned(),
                line: needle.to_owned(),
                count: many.len(),
            }),
        }
    };
    let block = |at: usize| {
        let indent: String = lines[at]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let mut out = format!("{indent}{begin}\n");
        for line in code.lines() {
            if line.is_empty() {
                out.push('\n');
            } else {
                out.push_str(&format!("{indent}{line}\n"));
            }
        }
        out.push_str(&format!("{indent}{end}\n"));
        out
    };

    let (start, stop, new_block, outcome) = if let Some(b) = find(&begin)? {
        let e = lines[b..]
            .iter()
            .position(|l| l.trim() == end)
            .map(|p| p + b)
            .ok_or_else(|| MarkerError::Unterminated {
                path: path.to_owned(),
                line: b + 1,
                id: insert.id.clone(),
                end: end.clone(),
            })?;
        (b, e + 1, block(b), InsertOutcome::Replaced)
    } else {
        let m = find(&marker)?.ok_or_else(|| MarkerError::MarkerNotFound {
            path: path.to_owned(),
            marker,
        })?;
        (m, m, block(m), InsertOutcome::Inserted)
    };
    let old_block: String = lines[start..stop].concat();
    let old_block = if old_block.ends_with('\n') {
        old_block
    } else {
        format!("{old_block}\n")
    };
    if outcome == InsertOutcome::Replaced && old_block == new_block {
        return Ok((contents.to_owned(), InsertOutcome::Unchanged));
    }
    let mut text = lines[..start].concat();
    text.push_str(&new_block);
    text.push_str(&lines[stop..].concat());
    if outcome == InsertOutcome::Replaced && stop == lines.len() && !contents.ends_with('\n') {
        text.pop();
    }

    match syntax {
        Syntax::Rust => {
            rust::check(path, &text).map_err(|e| MarkerError::RustAfter(e, insert.id.clone()))?
        }
        Syntax::Yaml => check_yaml(&text).map_err(|(line, message)| MarkerError::Yaml {
            path: path.to_owned(),
            line,
            id: insert.id.clone(),
            message,
        })?,
        Syntax::Hash => {}
    }
    Ok((text, outcome))
}

/// Parses every document of a YAML stream; on failure returns line and message.
pub(crate) fn check_yaml(text: &str) -> Result<(), (usize, String)> {
    use serde::Deserialize;
    for doc in serde_yaml::Deserializer::from_str(text) {
        serde_yaml::Value::deserialize(doc)
            .map_err(|e| (e.location().map_or(1, |l| l.line()), e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = "fn main() {\n    let controllers = vec![\n        // +mni:scaffold:controllers\n    ];\n}\n";

    #[test]
    fn ensure_marker_appends_a_missing_marker_once() {
        let mut u = Universe::new();
        u.write(
            "k.yaml",
            "resources:\n- a.yaml",
            mni_plugin::IfExists::Error,
        )
        .unwrap();
        assert!(ensure_marker(&mut u, "k.yaml", "patches", "patches:").unwrap());
        assert!(!ensure_marker(&mut u, "k.yaml", "patches", "patches:").unwrap());
        assert_eq!(
            u.get("k.yaml"),
            Some("resources:\n- a.yaml\npatches:\n# +mni:scaffold:patches\n")
        );
        u.write("lib.rs", "pub mod api;\n", mni_plugin::IfExists::Error)
            .unwrap();
        ensure_marker(&mut u, "lib.rs", "modules", "").unwrap();
        assert_eq!(
            u.get("lib.rs"),
            Some("pub mod api;\n// +mni:scaffold:modules\n")
        );
    }

    fn check(
        path: &str,
        contents: &str,
        insert: &Insert,
        expected: Result<(&str, InsertOutcome), &str>,
    ) {
        let got = insert_into(path, contents, insert);
        match (got, expected) {
            (Ok((text, outcome)), Ok((e_text, e_outcome))) => {
                assert_eq!(text, e_text);
                assert_eq!(outcome, e_outcome);
            }
            (Err(g), Err(e)) => assert!(g.to_string().contains(e), "{g}"),
            (g, e) => panic!("got {g:?}, expected {e:?}"),
        }
    }

    #[test]
    fn inserts_replaces_and_is_idempotent() {
        let one = Insert::new("controllers", "billing", "billing::controller(),");
        let expected = "fn main() {\n    let controllers = vec![\n        // +mni:fragment:controllers:billing\n        billing::controller(),\n        // +mni:fragment-end:controllers:billing\n        // +mni:scaffold:controllers\n    ];\n}\n";
        check(
            "src/main.rs",
            MAIN,
            &one,
            Ok((expected, InsertOutcome::Inserted)),
        );
        check(
            "src/main.rs",
            expected,
            &one,
            Ok((expected, InsertOutcome::Unchanged)),
        );
        let changed = Insert::new("controllers", "billing", "billing::controller(cfg),");
        let (text, outcome) = insert_into("src/main.rs", expected, &changed).unwrap();
        assert_eq!(outcome, InsertOutcome::Replaced);
        assert_eq!(text.matches("billing::controller").count(), 1);
        assert!(text.contains("billing::controller(cfg),"));
    }

    #[test]
    fn refuses_bad_inserts() {
        check(
            "src/main.rs",
            MAIN,
            &Insert::new("controllers", "x", "fn ("),
            Err("Rust syntax error"),
        );
        check(
            "src/main.rs",
            MAIN,
            &Insert::new("nope", "x", "a,"),
            Err("marker `// +mni:scaffold:nope` not found"),
        );
        check(
            "src/main.rs",
            "fn (",
            &Insert::new("a", "x", "a,"),
            Err("(before inserting)"),
        );
        check(
            "README.md",
            "x",
            &Insert::new("a", "x", "a"),
            Err("cannot insert at markers"),
        );
        let dup = "// +mni:scaffold:a\n// +mni:scaffold:a\n";
        check(
            "src/lib.rs",
            dup,
            &Insert::new("a", "x", "mod x;"),
            Err("appears 2 times"),
        );
        let open = "// +mni:fragment:a:x\nmod x;\n// +mni:scaffold:a\n";
        check(
            "src/lib.rs",
            open,
            &Insert::new("a", "x", "mod x;"),
            Err("has no end line"),
        );
    }

    #[test]
    fn yaml_and_toml_markers() {
        let yaml = "resources:\n  - a.yaml\n  # +mni:scaffold:resources\n";
        let ins = Insert::new("resources", "billing", "- billing.yaml");
        let (text, _) = insert_into("config/kustomization.yaml", yaml, &ins).unwrap();
        assert_eq!(
            text,
            "resources:\n  - a.yaml\n  # +mni:fragment:resources:billing\n  - billing.yaml\n  # +mni:fragment-end:resources:billing\n  # +mni:scaffold:resources\n"
        );
        check(
            "config/k.yaml",
            yaml,
            &Insert::new("resources", "bad", "- [x"),
            Err("invalid YAML after inserting"),
        );
        let toml = "[workspace]\nmembers = [\n    \"a\",\n    # +mni:scaffold:members\n]\n";
        let (text, _) = insert_into(
            "Cargo.toml",
            toml,
            &Insert::new("members", "b", "\"services/b\","),
        )
        .unwrap();
        assert!(text.contains("    \"services/b\",\n    # +mni:fragment-end:members:b\n"));
    }
}
