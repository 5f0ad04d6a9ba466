//! Helpers for the steps most service plugins take, all on the [`Universe`] and all
//! idempotent: running a command twice leaves every file as the first run left it.
//!
//! - [`insert_fragment`] puts code above a scaffold marker (`// +mni:scaffold:NAME` in Rust,
//!   `# +mni:scaffold:NAME` in YAML, TOML and shell, `<!-- +mni:scaffold:NAME -->` in Markdown
//!   and HTML) between `+mni:fragment:NAME:ID` and `+mni:fragment-end:NAME:ID` lines — the
//!   format of `mni-scaffold`'s built-in plugins, so the CLI's own plugins and yours edit the
//!   same files the same way. Inserting the same id again replaces the fragment.
//! - [`insert_before_marker`] puts plain text above a marker line, once, without delimiters
//!   (for Markdown lists a reader sees).
//! - [`add_dependency`] adds a `Cargo.toml` dependency line at its `dependencies` marker.
//! - [`add_crd`] and [`add_sample`] write a manifest under `config/crd/bases/` or
//!   `config/samples/` and list it in the directory's `kustomization.yaml` at the kustomize
//!   plugin's markers.
//! - [`add_book_page`] writes an mdBook page under `book/src/` and links it from `SUMMARY.md`.
//!
//! Rust and YAML are not parsed here: `mni-scaffold` validates everything a plugin returns and
//! refuses the whole response, naming the file, if something does not parse.

use mni_plugin::{IfExists, PluginError, Universe, UniverseError, WriteOutcome};

/// Why a step could not be taken. Nothing is changed when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StepError {
    /// The file to edit is not in the project.
    #[error("{path}: not found in the project; {hint}")]
    MissingFile {
        /// The file.
        path: String,
        /// What creates it.
        hint: String,
    },
    /// The file type has no known comment syntax for markers.
    #[error(
        "{path}: cannot insert at markers in this kind of file (known: .rs, .yaml, .yml, .toml, .sh, .md, .html, Makefile, Dockerfile)"
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
        /// The full marker line.
        marker: String,
    },
    /// A fragment start has no end line.
    #[error("{path}: fragment `{id}` has no end line `{end}`")]
    Unterminated {
        /// The file.
        path: String,
        /// The fragment id.
        id: String,
        /// The missing line.
        end: String,
    },
    /// The text to add is not usable (e.g. a dependency line without `name =`).
    #[error("{what}: {message}")]
    InvalidArgument {
        /// The argument.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// Writing into the Universe failed.
    #[error(transparent)]
    Universe(#[from] UniverseError),
}

impl From<StepError> for PluginError {
    /// A step fails because the project is not what it expects (a file or marker missing, a
    /// file already there): that is the user's input, so [`PluginError::InvalidInput`] (or the
    /// Universe error itself).
    fn from(e: StepError) -> Self {
        match e {
            StepError::Universe(e) => Self::Universe(e),
            e => Self::InvalidInput(e.to_string()),
        }
    }
}

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// The text went in above the marker.
    Inserted,
    /// An earlier version of the fragment was replaced.
    Replaced,
    /// It was already there.
    Unchanged,
}

/// `(start, end)` of a comment line in `path`'s syntax.
fn comment(path: &str) -> Option<(&'static str, &'static str)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.').map(|(_, e)| e) {
        Some("rs") => Some(("// ", "")),
        Some("yaml" | "yml" | "toml" | "sh") => Some(("# ", "")),
        Some("md" | "html") => Some(("<!-- ", " -->")),
        _ if name == "Makefile" || name == "Dockerfile" => Some(("# ", "")),
        _ => None,
    }
}

fn contents<'u>(universe: &'u Universe, path: &str, hint: &str) -> Result<&'u str, StepError> {
    universe.get(path).ok_or_else(|| StepError::MissingFile {
        path: path.to_owned(),
        hint: hint.to_owned(),
    })
}

/// Stores `text` at `path` (touching the file when nothing changed).
fn store(universe: &mut Universe, path: &str, text: String) -> Result<Inserted, StepError> {
    if universe.modify(path, |_| text)? {
        Ok(Inserted::Inserted)
    } else {
        universe.touch(path)?;
        Ok(Inserted::Unchanged)
    }
}

/// The index of the one line whose trimmed text is `needle`.
fn find_line(lines: &[&str], needle: &str) -> Option<usize> {
    lines.iter().position(|l| l.trim() == needle)
}

/// Inserts `code` above marker `NAME` of the file at `path` as fragment `id` (unique per marker
/// and file, e.g. the kind), indented like the marker. See the [module docs](self).
pub fn insert_fragment(
    universe: &mut Universe,
    path: &str,
    marker: &str,
    id: &str,
    code: &str,
) -> Result<Inserted, StepError> {
    let (open, close) = comment(path).ok_or_else(|| StepError::UnsupportedFile {
        path: path.to_owned(),
    })?;
    let current = contents(
        universe,
        path,
        "it must exist before a plugin inserts into it",
    )?;
    let line = |what: &str| format!("{open}+mni:{what}{close}");
    let marker_line = line(&format!("scaffold:{marker}"));
    let begin = line(&format!("fragment:{marker}:{id}"));
    let end = line(&format!("fragment-end:{marker}:{id}"));
    let lines: Vec<&str> = current.split_inclusive('\n').collect();

    let block = |at: usize| {
        let indent: String = lines[at]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let mut out = format!("{indent}{begin}\n");
        for l in code.trim_end_matches('\n').lines() {
            if l.is_empty() {
                out.push('\n');
            } else {
                out.push_str(&format!("{indent}{l}\n"));
            }
        }
        out.push_str(&format!("{indent}{end}\n"));
        out
    };
    let (start, stop, replacing) = match find_line(&lines, &begin) {
        Some(b) => {
            let e = lines[b..]
                .iter()
                .position(|l| l.trim() == end)
                .ok_or_else(|| StepError::Unterminated {
                    path: path.to_owned(),
                    id: id.to_owned(),
                    end: end.clone(),
                })?;
            (b, b + e + 1, true)
        }
        None => {
            let m = find_line(&lines, &marker_line).ok_or_else(|| StepError::MarkerNotFound {
                path: path.to_owned(),
                marker: marker_line.clone(),
            })?;
            (m, m, false)
        }
    };
    let new_block = block(start);
    if replacing && lines[start..stop].concat() == new_block {
        universe.touch(path)?;
        return Ok(Inserted::Unchanged);
    }
    let text = [lines[..start].concat(), new_block, lines[stop..].concat()].concat();
    store(universe, path, text)?;
    Ok(if replacing {
        Inserted::Replaced
    } else {
        Inserted::Inserted
    })
}

/// Inserts `text` (one or more whole lines) just above the line that reads `marker_line`
/// (e.g. `<!-- +mni:scaffold:apis -->`), unless the file already contains it.
pub fn insert_before_marker(
    universe: &mut Universe,
    path: &str,
    marker_line: &str,
    text: &str,
) -> Result<Inserted, StepError> {
    let current = contents(
        universe,
        path,
        "it must exist before a plugin inserts into it",
    )?;
    let text = if text.ends_with('\n') {
        text.to_owned()
    } else {
        format!("{text}\n")
    };
    if current.contains(&text) {
        universe.touch(path)?;
        return Ok(Inserted::Unchanged);
    }
    let lines: Vec<&str> = current.split_inclusive('\n').collect();
    let at = find_line(&lines, marker_line.trim()).ok_or_else(|| StepError::MarkerNotFound {
        path: path.to_owned(),
        marker: marker_line.trim().to_owned(),
    })?;
    let new = [lines[..at].concat(), text, lines[at..].concat()].concat();
    store(universe, path, new)
}

/// Adds a dependency line such as `serde = "1"` to the manifest at `manifest` (e.g.
/// `Cargo.toml` or `services/billing/operator/Cargo.toml`), above its
/// `# +mni:scaffold:dependencies` marker, as a fragment named after the dependency: adding it
/// again with another version replaces the line.
pub fn add_dependency(
    universe: &mut Universe,
    manifest: &str,
    line: &str,
) -> Result<Inserted, StepError> {
    let name = line
        .split_once('=')
        .map(|(n, _)| n.trim())
        .filter(|n| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        .ok_or_else(|| StepError::InvalidArgument {
            what: "dependency".to_owned(),
            message: format!("{line:?} is not a `name = ...` line"),
        })?;
    insert_fragment(universe, manifest, "dependencies", name, line.trim())
}

/// Writes the CRD `yaml` as `<config_dir>/crd/bases/<file>` and lists it in
/// `<config_dir>/crd/kustomization.yaml` (at `# +mni:scaffold:crdkustomizeresource`).
/// `config_dir` is `config` in an operator project.
pub fn add_crd(
    universe: &mut Universe,
    config_dir: &str,
    file: &str,
    yaml: &str,
) -> Result<WriteOutcome, StepError> {
    add_manifest(
        universe,
        &format!("{config_dir}/crd"),
        &format!("bases/{file}"),
        yaml,
        "crdkustomizeresource",
    )
}

/// Writes the sample `yaml` as `<config_dir>/samples/<file>` and lists it in
/// `<config_dir>/samples/kustomization.yaml` (at `# +mni:scaffold:manifestskustomizesamples`).
pub fn add_sample(
    universe: &mut Universe,
    config_dir: &str,
    file: &str,
    yaml: &str,
) -> Result<WriteOutcome, StepError> {
    add_manifest(
        universe,
        &format!("{config_dir}/samples"),
        file,
        yaml,
        "manifestskustomizesamples",
    )
}

fn add_manifest(
    universe: &mut Universe,
    dir: &str,
    rel: &str,
    yaml: &str,
    marker: &str,
) -> Result<WriteOutcome, StepError> {
    if rel.is_empty() || rel.ends_with('/') || rel.contains("..") {
        return Err(StepError::InvalidArgument {
            what: "file".to_owned(),
            message: format!("{rel:?} is not a file name"),
        });
    }
    let kustomization = format!("{dir}/kustomization.yaml");
    // Checked first, so that nothing is written when the kustomization is missing.
    contents(
        universe,
        &kustomization,
        "it is scaffolded by the kustomize plugin (`kustomize.mni.dev/v1`)",
    )?;
    let outcome = universe.write(&format!("{dir}/{rel}"), yaml, IfExists::Error)?;
    insert_fragment(universe, &kustomization, marker, rel, &format!("- {rel}"))?;
    Ok(outcome)
}

/// Writes `markdown` as the mdBook page `book/src/<page>` and links it as `title` from
/// `book/src/SUMMARY.md` (created with a `# Summary` heading when missing; the link is added
/// once, at the end).
pub fn add_book_page(
    universe: &mut Universe,
    page: &str,
    title: &str,
    markdown: &str,
) -> Result<WriteOutcome, StepError> {
    if !page.ends_with(".md") || page.contains("..") || page.starts_with('/') {
        return Err(StepError::InvalidArgument {
            what: "page".to_owned(),
            message: format!("{page:?} is not a relative path ending in .md"),
        });
    }
    let summary = "book/src/SUMMARY.md";
    let outcome = universe.write(&format!("book/src/{page}"), markdown, IfExists::Error)?;
    let link = format!("- [{title}]({page})\n");
    match universe.get(summary) {
        None => {
            universe.write(summary, format!("# Summary\n\n{link}"), IfExists::Error)?;
        }
        Some(text) if text.lines().any(|l| l.trim() == link.trim()) => universe.touch(summary)?,
        Some(text) => {
            let sep = if text.ends_with('\n') || text.is_empty() {
                ""
            } else {
                "\n"
            };
            let new = format!("{text}{sep}{link}");
            universe.modify(summary, |_| new)?;
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn universe(files: &[(&str, &str)]) -> Universe {
        let mut u = Universe::new();
        for (path, contents) in files {
            u.insert_existing(path, *contents).unwrap();
        }
        u
    }

    const MAIN: &str =
        "fn main() {\n    let c = vec![\n        // +mni:scaffold:controllers\n    ];\n}\n";

    #[test]
    fn fragments_are_inserted_once_and_replaced_in_place() {
        let mut u = universe(&[("src/main.rs", MAIN)]);
        let first = insert_fragment(&mut u, "src/main.rs", "controllers", "ship", "ship(),");
        assert_eq!(first, Ok(Inserted::Inserted));
        let expected = "fn main() {\n    let c = vec![\n        // +mni:fragment:controllers:ship\n        ship(),\n        // +mni:fragment-end:controllers:ship\n        // +mni:scaffold:controllers\n    ];\n}\n";
        assert_eq!(u.get("src/main.rs"), Some(expected));
        let again = insert_fragment(&mut u, "src/main.rs", "controllers", "ship", "ship(),");
        assert_eq!(again, Ok(Inserted::Unchanged));
        assert_eq!(u.get("src/main.rs"), Some(expected));
        let changed = insert_fragment(&mut u, "src/main.rs", "controllers", "ship", "ship(2),");
        assert_eq!(changed, Ok(Inserted::Replaced));
        assert_eq!(u.get("src/main.rs").unwrap().matches("ship").count(), 3);
        assert!(u.get("src/main.rs").unwrap().contains("ship(2),"));
    }

    #[test]
    fn refuses_missing_files_markers_and_unknown_syntax() {
        let mut u = universe(&[("src/main.rs", "fn main() {}\n"), ("data.bin", "x")]);
        let err = insert_fragment(&mut u, "src/main.rs", "controllers", "a", "a").unwrap_err();
        assert_eq!(
            err.to_string(),
            "src/main.rs: scaffold marker `// +mni:scaffold:controllers` not found; add it where generated code should go"
        );
        let err = insert_fragment(&mut u, "data.bin", "x", "a", "a").unwrap_err();
        assert!(matches!(err, StepError::UnsupportedFile { .. }), "{err}");
        let err = insert_fragment(&mut u, "nope.rs", "x", "a", "a").unwrap_err();
        assert!(err.to_string().starts_with("nope.rs: not found"), "{err}");
        assert!(matches!(
            PluginError::from(err),
            PluginError::InvalidInput(_)
        ));
    }

    #[test]
    fn plain_inserts_go_above_the_marker_once() {
        let readme = "# Crew\n\n<!-- +mni:scaffold:apis -->\n";
        let mut u = universe(&[("README.md", readme)]);
        let marker = "<!-- +mni:scaffold:apis -->";
        assert_eq!(
            insert_before_marker(&mut u, "README.md", marker, "- [Ship](docs/ship.md)"),
            Ok(Inserted::Inserted)
        );
        assert_eq!(
            insert_before_marker(&mut u, "README.md", marker, "- [Ship](docs/ship.md)\n"),
            Ok(Inserted::Unchanged)
        );
        assert_eq!(
            u.get("README.md"),
            Some("# Crew\n\n- [Ship](docs/ship.md)\n<!-- +mni:scaffold:apis -->\n")
        );
        // Markdown fragments use HTML comments.
        insert_fragment(&mut u, "README.md", "apis", "boat", "- Boat").unwrap();
        assert!(
            u.get("README.md")
                .unwrap()
                .contains("<!-- +mni:fragment:apis:boat -->\n- Boat\n<!-- +mni:fragment-end:apis:boat -->\n<!-- +mni:scaffold:apis -->")
        );
    }

    #[test]
    fn dependencies_are_fragments_named_after_the_crate() {
        let manifest = "[dependencies]\nanyhow = \"1\"\n# +mni:scaffold:dependencies\n";
        let mut u = universe(&[("Cargo.toml", manifest)]);
        add_dependency(&mut u, "Cargo.toml", "serde = \"1\"").unwrap();
        add_dependency(&mut u, "Cargo.toml", "serde = { version = \"1.0.200\" }").unwrap();
        assert_eq!(
            u.get("Cargo.toml"),
            Some(
                "[dependencies]\nanyhow = \"1\"\n# +mni:fragment:dependencies:serde\nserde = { version = \"1.0.200\" }\n# +mni:fragment-end:dependencies:serde\n# +mni:scaffold:dependencies\n"
            )
        );
        let err = add_dependency(&mut u, "Cargo.toml", "[serde]").unwrap_err();
        assert!(err.to_string().starts_with("dependency: "), "{err}");
    }

    #[test]
    fn crds_and_samples_are_written_and_listed_like_the_kustomize_plugin_does() {
        let crd_k = "resources:\n# +mni:scaffold:crdkustomizeresource\n";
        let sample_k = "resources:\n# +mni:scaffold:manifestskustomizesamples\n";
        let mut u = universe(&[
            ("config/crd/kustomization.yaml", crd_k),
            ("config/samples/kustomization.yaml", sample_k),
        ]);
        add_crd(&mut u, "config", "crew.acme.io_ships.yaml", "kind: CRD\n").unwrap();
        add_sample(&mut u, "config", "crew_v1_ship.yaml", "kind: Ship\n").unwrap();
        assert_eq!(
            u.get("config/crd/kustomization.yaml"),
            Some(
                "resources:\n# +mni:fragment:crdkustomizeresource:bases/crew.acme.io_ships.yaml\n- bases/crew.acme.io_ships.yaml\n# +mni:fragment-end:crdkustomizeresource:bases/crew.acme.io_ships.yaml\n# +mni:scaffold:crdkustomizeresource\n"
            )
        );
        assert_eq!(
            u.get("config/crd/bases/crew.acme.io_ships.yaml"),
            Some("kind: CRD\n")
        );
        assert!(
            u.get("config/samples/kustomization.yaml")
                .unwrap()
                .contains("\n- crew_v1_ship.yaml\n")
        );
        let mut bare = Universe::new();
        let err = add_sample(&mut bare, "config", "x.yaml", "a: b\n").unwrap_err();
        assert!(err.to_string().contains("kustomize.mni.dev/v1"), "{err}");
        assert!(bare.is_empty(), "nothing written");
    }

    #[test]
    fn book_pages_are_linked_from_the_summary_once() {
        let mut u = Universe::new();
        add_book_page(&mut u, "ships.md", "Ships", "# Ships\n").unwrap();
        add_book_page(&mut u, "boats.md", "Boats", "# Boats\n").unwrap();
        assert_eq!(
            u.get("book/src/SUMMARY.md"),
            Some("# Summary\n\n- [Ships](ships.md)\n- [Boats](boats.md)\n")
        );
        let err = add_book_page(&mut u, "../x.md", "X", "").unwrap_err();
        assert!(err.to_string().starts_with("page: "), "{err}");
    }
}
