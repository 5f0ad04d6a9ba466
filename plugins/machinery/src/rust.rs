//! Rust source checks and fragment formatting, with `syn` and `prettyplease`.
//!
//! **Formatting choice.** `prettyplease` prints a syntax tree, and comments are not part of
//! `syn`'s tree, so formatting a whole file would delete every `// +mni:scaffold:` marker and
//! every comment the user wrote. rustfmt keeps comments but may be missing, or differ between
//! machines, which would make generated output drift. So mNi never reformats a whole file:
//! [`check`] parses the file (before and after every insert, and before commit), and
//! [`format_fragment`] formats only the code being inserted, when that code is one or more
//! items or statements without comments. Fragments with comments, or that are not items or
//! statements (match arms, struct fields, list elements), are inserted as written, re-indented.
//! Output is therefore deterministic and byte-identical across machines.

/// Why a Rust file does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RustError {
    /// `syn` rejected the file.
    #[error("{path}:{line}:{column}: Rust syntax error: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// `syn`'s message.
        message: String,
    },
    /// `rustfmt` could not be run or failed on the file.
    #[error("{path}: rustfmt: {message}")]
    Rustfmt {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// Where `rustfmt --edition 2024` would change `source`: the first differing line and the six
/// lines rustfmt writes from there, or `None` when it would change nothing.
///
/// mNi never runs rustfmt on what it writes (see the module docs); plugins' tests use this to
/// keep their templates' output rustfmt-clean, so that generated projects pass `cargo fmt
/// --check` as they are.
///
/// # Errors
///
/// [`RustError::Rustfmt`] when rustfmt is missing or rejects the file.
pub fn rustfmt_difference(path: &str, source: &str) -> Result<Option<String>, RustError> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    let fail = |message: String| RustError::Rustfmt {
        path: path.to_owned(),
        message,
    };
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("{e} (rustup component add rustfmt)")))?;
    let mut stdin = child.stdin.take().ok_or_else(|| fail("no stdin".into()))?;
    // rustfmt reads all of stdin before writing, so writing first cannot deadlock.
    stdin
        .write_all(source.as_bytes())
        .map_err(|e| fail(e.to_string()))?;
    drop(stdin);
    let out = child.wait_with_output().map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    let formatted = String::from_utf8_lossy(&out.stdout);
    let Some(first) = source
        .lines()
        .zip(formatted.lines())
        .position(|(a, b)| a != b)
        .or((source != formatted).then(|| source.lines().count()))
    else {
        return Ok(None);
    };
    let context: Vec<&str> = formatted.lines().skip(first).take(6).collect();
    Ok(Some(format!(
        "{path}:{}: rustfmt writes\n{}",
        first + 1,
        context.join("\n")
    )))
}

/// Parses `source` as a Rust file; the error names `path`, line, column and `syn`'s message.
pub fn check(path: &str, source: &str) -> Result<(), RustError> {
    syn::parse_file(source).map(|_| ()).map_err(|e| {
        let start = e.span().start();
        RustError::Syntax {
            path: path.to_owned(),
            line: start.line,
            column: start.column + 1,
            message: e.to_string(),
        }
    })
}

const WRAPPER: &str = "fn __mni_fragment__() {";

/// Formats a fragment with `prettyplease` when it is comment-free items or statements; otherwise
/// returns it dedented. The result has no trailing newline.
#[must_use]
pub fn format_fragment(code: &str) -> String {
    if !code.contains("//") && !code.contains("/*") {
        if let Ok(file) = syn::parse_file(code)
            && !file.items.is_empty()
        {
            return prettyplease::unparse(&file).trim_end().to_owned();
        }
        let wrapped = format!("{WRAPPER}\n{code}\n}}");
        if let Ok(file) = syn::parse_file(&wrapped) {
            let printed = prettyplease::unparse(&file);
            let body: Vec<&str> = printed.lines().skip(1).collect();
            if let Some((_, inner)) = body.split_last() {
                let inner: Vec<&str> = inner
                    .iter()
                    .map(|l| l.strip_prefix("    ").unwrap_or(l))
                    .collect();
                if !inner.is_empty() {
                    return inner.join("\n");
                }
            }
        }
    }
    dedent(code)
}

/// Removes the common leading whitespace and surrounding blank lines.
#[must_use]
pub(crate) fn dedent(code: &str) -> String {
    let lines: Vec<&str> = code.trim_matches('\n').lines().map(str::trim_end).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn rustfmt_difference_names_the_first_line_rustfmt_changes() {
        assert_eq!(
            super::rustfmt_difference("ok.rs", "fn main() {}\n").expect("rustfmt runs"),
            None
        );
        let diff = super::rustfmt_difference("bad.rs", "fn main() {}\nfn  f( ) {}\n")
            .expect("rustfmt runs")
            .expect("a difference");
        assert!(
            diff.starts_with("bad.rs:2: rustfmt writes\nfn f() {}"),
            "{diff}"
        );
        assert!(matches!(
            super::rustfmt_difference("broken.rs", "fn {"),
            Err(super::RustError::Rustfmt { .. })
        ));
    }

    use super::*;

    fn check_format(input: &str, expected: &str) {
        assert_eq!(format_fragment(input), expected);
    }

    #[test]
    fn formats_items_and_statements_only() {
        check_format("pub   mod billing;", "pub mod billing;");
        check_format("fn a()->u8{1}", "fn a() -> u8 {\n    1\n}");
        check_format("let x=1;\nrun( x );", "let x = 1;\nrun(x);");
        check_format("    // keep me\n    mod a;\n", "// keep me\nmod a;");
        check_format(
            "  Kind::A => 1,\n  Kind::B => 2,",
            "Kind::A => 1,\nKind::B => 2,",
        );
    }

    #[test]
    fn check_names_file_and_position() {
        assert_eq!(check("src/lib.rs", "fn a() {}\n"), Ok(()));
        let err = check("src/lib.rs", "fn a() {\n    let x = ;\n}\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "src/lib.rs:2:13: Rust syntax error: expected an expression"
        );
    }
}
