//! A small `.gitignore` matcher: enough of git's rules to leave build output and local files out
//! of the Universe.
//!
//! Supported: blank lines and `#` comments, `!` negation, a trailing `/` for directories only,
//! patterns with a `/` anchored to their `.gitignore`'s directory, patterns without one matching
//! at any depth, `*`, `?`, `[...]` classes and `**`. Not supported: `core.excludesFile`,
//! `.git/info/exclude` and trailing-space escapes. As in git, a file under an ignored directory
//! stays ignored even if a later `!` pattern names it.

use regex::Regex;

/// Why a `.gitignore` pattern could not be compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitignoreError {
    /// The pattern does not translate to a valid regular expression (e.g. an unclosed `[`).
    #[error("{file}: invalid pattern {pattern:?}: {source}")]
    Pattern {
        /// The `.gitignore` file.
        file: String,
        /// The pattern.
        pattern: String,
        /// The regex error.
        #[source]
        source: regex::Error,
    },
}

#[derive(Debug)]
struct Rule {
    /// Directory of the `.gitignore`, relative to the root, with a trailing `/` (or empty).
    base: String,
    regex: Regex,
    negate: bool,
    dir_only: bool,
}

/// Compiled ignore rules of a project. Paths are relative to the project root, `/`-separated.
#[derive(Debug, Default)]
pub struct Gitignore {
    rules: Vec<Rule>,
}

impl Gitignore {
    /// No rules.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the rules of the `.gitignore` in directory `dir` (relative to the root; `""` for
    /// the root itself).
    pub fn add(&mut self, dir: &str, contents: &str) -> Result<(), GitignoreError> {
        let base = if dir.is_empty() {
            String::new()
        } else {
            format!("{}/", dir.trim_end_matches('/'))
        };
        for line in contents.lines() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (negate, pat) = match line.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, line.strip_prefix('\\').unwrap_or(line)),
            };
            let (dir_only, pat) = match pat.strip_suffix('/') {
                Some(rest) => (true, rest),
                None => (false, pat),
            };
            if pat.is_empty() {
                continue;
            }
            let anchored = pat.contains('/');
            let pat = pat.strip_prefix('/').unwrap_or(pat);
            let body = glob_to_regex(pat);
            let source = if anchored {
                format!("^{body}$")
            } else {
                format!("^(?:.*/)?{body}$")
            };
            let regex = Regex::new(&source).map_err(|source| GitignoreError::Pattern {
                file: format!("{base}.gitignore"),
                pattern: line.to_owned(),
                source,
            })?;
            self.rules.push(Rule {
                base: base.clone(),
                regex,
                negate,
                dir_only,
            });
        }
        Ok(())
    }

    /// Whether `path` itself matches (last matching rule wins), ignoring its parents.
    fn matches(&self, path: &str, is_dir: bool) -> bool {
        let mut ignored = false;
        for rule in &self.rules {
            if rule.dir_only && !is_dir {
                continue;
            }
            let Some(rel) = path.strip_prefix(&rule.base) else {
                continue;
            };
            if rule.regex.is_match(rel) {
                ignored = !rule.negate;
            }
        }
        ignored
    }

    /// Whether `path` is ignored, itself or through one of its parent directories.
    #[must_use]
    pub fn is_ignored(&self, path: &str, is_dir: bool) -> bool {
        let mut prefix = String::new();
        let parts: Vec<&str> = path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                prefix.push('/');
            }
            prefix.push_str(part);
            let last = i + 1 == parts.len();
            if self.matches(&prefix, !last || is_dir) {
                return true;
            }
        }
        false
    }
}

fn glob_to_regex(glob: &str) -> String {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                let at_start = i == 0 || chars[i - 1] == '/';
                if at_start && chars.get(i + 2) == Some(&'/') {
                    out.push_str("(?:.*/)?");
                    i += 3;
                    continue;
                }
                out.push_str(".*");
                i += 2;
                continue;
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => {
                let close = chars[i + 1..]
                    .iter()
                    .position(|&c| c == ']')
                    .map(|p| p + i + 1);
                match close {
                    Some(end) if end > i + 1 => {
                        let mut class: String = chars[i + 1..end].iter().collect();
                        if let Some(rest) = class.strip_prefix('!') {
                            class = format!("^{rest}");
                        }
                        out.push('[');
                        out.push_str(&class.replace('\\', "\\\\"));
                        out.push(']');
                        i = end + 1;
                        continue;
                    }
                    _ => out.push_str("\\["),
                }
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(rules: &[(&str, &str)], path: &str, is_dir: bool, expected: bool) {
        let mut ig = Gitignore::new();
        for (dir, contents) in rules {
            ig.add(dir, contents).unwrap();
        }
        assert_eq!(
            ig.is_ignored(path, is_dir),
            expected,
            "{path} with {rules:?}"
        );
    }

    #[test]
    fn matches_like_git() {
        let root = [(
            "",
            "# build\n*.log\n/dist\nbuild/\n!keep.log\ndocs/**/*.tmp\nsecret?.txt\n[ab].bin\n",
        )];
        check(&root, "a.log", false, true);
        check(&root, "sub/deep/a.log", false, true);
        check(&root, "keep.log", false, false);
        check(&root, "dist", true, true);
        check(&root, "dist/x.rs", false, true);
        check(&root, "sub/dist/x.rs", false, false);
        check(&root, "build/out.o", false, true);
        check(&root, "build", false, false);
        check(&root, "docs/a/b/c.tmp", false, true);
        check(&root, "docs/c.tmp", false, true);
        check(&root, "secret1.txt", false, true);
        check(&root, "secret10.txt", false, false);
        check(&root, "a.bin", false, true);
        check(&root, "c.bin", false, false);
        check(&root, "src/main.rs", false, false);
        let nested = [("", "*.tmp\n"), ("crate", "local.txt\n!keep.tmp\n")];
        check(&nested, "crate/local.txt", false, true);
        check(&nested, "local.txt", false, false);
        check(&nested, "crate/keep.tmp", false, false);
        check(&nested, "other/keep.tmp", false, true);
        let negated_dir = [("", "out/\n!out/keep.txt\n")];
        check(&negated_dir, "out/keep.txt", false, true);
    }

    #[test]
    fn bad_pattern_is_an_error_not_a_panic() {
        assert!(Gitignore::new().add("", "[\n").is_ok());
        assert!(Gitignore::new().add("", "[z-a]\n").is_err());
    }
}
