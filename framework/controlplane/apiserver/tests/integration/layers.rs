//! The layering of `mni-apiserver`: no module imports the module that imports it.
//!
//! Reads the crate's `src/` files, builds the module dependency graph from the paths they name
//! (`crate::…`, `super::…`, `self::…`, in `use` items and in code, `use` groups included;
//! comments and string literals do not count) and fails on any cycle: between the top-level
//! modules, and between the sibling modules of each folder (`handlers/`, `state/`, …). The
//! layers themselves are listed in the code map of `src/lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path from the crate root: `["handlers", "update"]`.
type ModPath = Vec<String>;

/// One reference from a file to a module path, with the line it is on.
#[derive(Debug)]
struct Reference {
    /// The module whose code names the path (inline modules included).
    from: ModPath,
    /// The absolute path named (modules, then possibly an item).
    to: ModPath,
    line: usize,
}

/// The module a source file defines: `src/lib.rs` is the root, `src/a.rs` and `src/a/mod.rs`
/// are `a`, `src/a/b.rs` is `a::b`.
fn module_of(relative: &Path) -> ModPath {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && stem == "lib")) {
        parts.push(stem.to_string());
    }
    parts
}

/// `text` without comments and with string and char literals emptied, so that only code is
/// left; line breaks are kept, for line numbers.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&chars, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            out.push_str("\"\"");
            while j < chars.len() {
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            i = j;
        } else if c == '"' {
            out.push_str("\"\"");
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{..}'), or else a lifetime.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Reads one path tree starting at `at` (just after `crate::`, `super::` or `self::`):
/// `a::b::Item`, `a::{b, c::{d}}`, `{self, a}`. Each leaf path is pushed onto `out`.
fn path_tree(code: &[char], mut at: usize, prefix: &ModPath, out: &mut Vec<ModPath>) -> usize {
    let mut path = prefix.clone();
    loop {
        while code.get(at).is_some_and(|c| c.is_whitespace()) {
            at += 1;
        }
        if code.get(at) == Some(&'{') {
            at += 1;
            loop {
                while code.get(at).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    at += 1;
                }
                match code.get(at) {
                    None => return at,
                    Some('}') => return at + 1,
                    Some(_) => at = path_tree(code, at, &path, out),
                }
            }
        }
        let start = at;
        while code.get(at).copied().is_some_and(is_ident) {
            at += 1;
        }
        if start == at {
            out.push(path);
            return at;
        }
        let segment: String = code[start..at].iter().collect();
        if segment != "self" {
            path.push(segment);
        }
        if code.get(at) == Some(&':') && code.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            out.push(path);
            return at;
        }
    }
}

/// The references in one file of module `module`.
fn references(module: &ModPath, text: &str) -> Vec<Reference> {
    let code: Vec<char> = code_only(text).chars().collect();
    let mut refs = Vec::new();
    // Inline modules (`mod tests { … }`): (name, brace depth at which it closes).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut line = 1;
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        match c {
            '\n' => line += 1,
            '{' => {
                depth += 1;
                if let Some(name) = pending_mod.take() {
                    inline.push((name, depth));
                }
            }
            '}' => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            ';' => pending_mod = None,
            _ => {}
        }
        if !is_ident(c) || ident_before(&code, i) {
            i += 1;
            continue;
        }
        let start = i;
        while code.get(i).copied().is_some_and(is_ident) {
            i += 1;
        }
        let word: String = code[start..i].iter().collect();
        let here: ModPath = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        if word == "mod" {
            let mut j = i;
            while code.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            let name_start = j;
            while code.get(j).copied().is_some_and(is_ident) {
                j += 1;
            }
            pending_mod = Some(code[name_start..j].iter().collect());
            i = j;
            continue;
        }
        let preceded_by_path = start >= 2 && code[start - 1] == ':' && code[start - 2] == ':';
        let followed_by_path = code.get(i) == Some(&':') && code.get(i + 1) == Some(&':');
        if preceded_by_path || !followed_by_path {
            continue;
        }
        let base: Option<ModPath> = match word.as_str() {
            "crate" => Some(Vec::new()),
            "self" => Some(here.clone()),
            "super" => {
                let mut base = here.clone();
                base.pop();
                let mut j = i + 2;
                // super::super::…
                while code[j..].starts_with(&['s', 'u', 'p', 'e', 'r', ':', ':']) {
                    base.pop();
                    j += 7;
                }
                i = j - 2;
                Some(base)
            }
            _ => None,
        };
        let Some(base) = base else { continue };
        let mut leaves = Vec::new();
        let from = i;
        i = path_tree(&code, i + 2, &base, &mut leaves);
        let at = line;
        line += code[from..i].iter().filter(|c| **c == '\n').count();
        refs.extend(leaves.into_iter().map(|to| Reference {
            from: here.clone(),
            to,
            line: at,
        }));
    }
    refs
}

/// An edge between sibling modules, with where one reference making it is.
type Edges = BTreeMap<(ModPath, ModPath), String>;

/// The edges between the children of every module that has children: `a → b` when code in
/// `a` (or below it) names `b` (or something in it), `a` and `b` siblings.
fn sibling_edges(files: &[(String, ModPath, String)]) -> Edges {
    let modules: BTreeSet<ModPath> = files.iter().map(|(_, m, _)| m.clone()).collect();
    let mut edges = Edges::new();
    for (name, module, text) in files {
        for r in references(module, text) {
            let common = r.from.iter().zip(&r.to).take_while(|(a, b)| a == b).count();
            // The two sides just below the closest common ancestor.
            if common >= r.from.len() || common >= r.to.len() {
                continue;
            }
            let from: ModPath = r.from[..=common].to_vec();
            let to: ModPath = r.to[..=common].to_vec();
            if !modules.contains(&from) || !modules.contains(&to) {
                // An item of the parent (`super::Reply`), an inline test module, or an
                // external path: not an edge between sibling files.
                continue;
            }
            edges
                .entry((from, to))
                .or_insert_with(|| format!("{name}:{}", r.line));
        }
    }
    edges
}

/// The cycles of the graph, each as its modules in order, the first repeated at the end.
fn cycles(edges: &Edges) -> Vec<Vec<ModPath>> {
    let mut graph: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        graph.entry(a).or_default().push(b);
    }
    let mut found = Vec::new();
    let mut done: BTreeSet<&ModPath> = BTreeSet::new();
    fn visit<'a>(
        node: &'a ModPath,
        graph: &BTreeMap<&'a ModPath, Vec<&'a ModPath>>,
        stack: &mut Vec<&'a ModPath>,
        done: &mut BTreeSet<&'a ModPath>,
        found: &mut Vec<Vec<ModPath>>,
    ) {
        if let Some(pos) = stack.iter().position(|n| *n == node) {
            let mut cycle: Vec<ModPath> = stack[pos..].iter().map(|m| (*m).clone()).collect();
            cycle.push(node.clone());
            found.push(cycle);
            return;
        }
        if done.contains(node) {
            return;
        }
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, stack, done, found);
        }
        stack.pop();
        done.insert(node);
    }
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

fn describe(cycle: &[ModPath], edges: &Edges) -> String {
    let name = |m: &ModPath| m.join("::");
    let steps: Vec<String> = cycle
        .windows(2)
        .map(|w| {
            format!(
                "{} -> {} ({})",
                name(&w[0]),
                name(&w[1]),
                edges[&(w[0].clone(), w[1].clone())]
            )
        })
        .collect();
    steps.join(", ")
}

fn source_files(dir: &Path, root: &Path, out: &mut Vec<(String, ModPath, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src/")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            source_files(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("under src/");
            let text = std::fs::read_to_string(&path).expect("read source");
            out.push((
                format!("src/{}", relative.display()),
                module_of(relative),
                text,
            ));
        }
    }
}

#[test]
fn no_module_imports_the_module_that_imports_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&root, &root, &mut files);
    let edges = sibling_edges(&files);
    let top = |a: &str, b: &str| edges.contains_key(&(vec![a.to_string()], vec![b.to_string()]));
    // The graph is really read: the server composes the layers below it.
    assert!(top("server", "handlers") && top("server", "state") && top("handlers", "state"));
    assert!(edges.len() > 40, "too few edges found: {edges:?}");
    let found = cycles(&edges);
    let report: Vec<String> = found.iter().map(|c| describe(c, &edges)).collect();
    assert!(
        found.is_empty(),
        "module cycles in mni-apiserver:\n  {}",
        report.join("\n  ")
    );
}

#[test]
fn a_planted_cycle_is_found_and_printed() {
    let file = |name: &str, text: &str| {
        let module = module_of(Path::new(name));
        (name.to_string(), module, text.to_string())
    };
    let files = vec![
        file("lib.rs", "mod a; mod b; mod c;"),
        file("a.rs", "use crate::{b::Thing, c};\n"),
        file(
            "b.rs",
            "// crate::c in a comment\nfn f() { let s = \"crate::c\"; super::a::go(); }\n#[cfg(test)]\nmod tests { use super::*; }\n",
        ),
        file("c.rs", "use crate::error::X;\n"),
        file("h.rs", "mod x;\nmod y;\n"),
        file("h/x.rs", "use super::{y, Reply};\n"),
        file("h/y.rs", "fn f() -> super::super::a::A { self::g() }\n"),
    ];
    let edges = sibling_edges(&files);
    let pairs: Vec<String> = edges
        .keys()
        .map(|(a, b)| format!("{}>{}", a.join("::"), b.join("::")))
        .collect();
    assert_eq!(pairs, ["a>b", "a>c", "b>a", "h>a", "h::x>h::y"]);
    let found = cycles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(
        describe(&found[0], &edges),
        "a -> b (a.rs:1), b -> a (b.rs:2)"
    );
}
