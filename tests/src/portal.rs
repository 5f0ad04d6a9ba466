//! The developer portal's static site (`scripts/book.sh`): the internal links of every HTML
//! page in it.
//!
//! [`broken_links`] reads every `.html` file of a built site, takes each `href` and `src`
//! attribute that is not an external URL, resolves it as a browser would (relative to the page,
//! or to its `<base href>`; `/` is the site's root) and reports every one that names no file of
//! the site. A `#fragment` must also name an `id` (or `name`) of the target page, except in the
//! rustdoc pages under `api/`, whose fragments include line ranges (`#10-20`) their scripts
//! resolve.

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

/// The site's directory of the rustdoc API reference, whose fragments are not checked.
pub const API_DIR: &str = "api";

/// What can go wrong reading a site.
#[derive(Debug, thiserror::Error)]
pub enum PortalError {
    /// A file of the site could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The site's directory could not be walked.
    #[error("walking the site {site}: {source}")]
    Walk {
        /// The site's directory.
        site: PathBuf,
        /// Why.
        #[source]
        source: walkdir::Error,
    },
}

/// One link that leads nowhere.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BrokenLink {
    /// The page it is on, relative to the site.
    pub page: String,
    /// The link, as written.
    pub link: String,
    /// What is missing.
    pub reason: String,
}

impl std::fmt::Display for BrokenLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.page, self.link, self.reason)
    }
}

/// The outcome of checking a site: how many links were followed, and the broken ones.
#[derive(Debug, Default)]
pub struct LinkReport {
    /// HTML pages read.
    pub pages: usize,
    /// Internal links checked.
    pub links: usize,
    /// The links that lead nowhere, sorted.
    pub broken: Vec<BrokenLink>,
}

/// Checks every internal link of every HTML page under `site`.
///
/// # Errors
///
/// When the site cannot be walked or a page cannot be read.
pub fn broken_links(site: &Path) -> Result<LinkReport, PortalError> {
    let mut report = LinkReport::default();
    let mut ids: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    for entry in walkdir::WalkDir::new(site) {
        let entry = entry.map_err(|source| PortalError::Walk {
            site: site.to_path_buf(),
            source,
        })?;
        if entry.path().extension().is_none_or(|e| e != "html") {
            continue;
        }
        let page = entry.path().strip_prefix(site).expect("under the site");
        let html = read(entry.path())?;
        report.pages += 1;
        let html = without_script_bodies(&html);
        let base = base_dir(&html, page);
        for link in attribute_values(&html, &["href", "src"]) {
            if is_external(&link) || is_optional(page, &link) {
                continue;
            }
            report.links += 1;
            let broken = |reason: String| BrokenLink {
                page: page.display().to_string(),
                link: link.clone(),
                reason,
            };
            let (path, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let path = path.split_once('?').map_or(path, |(p, _)| p);
            let target = if path.is_empty() {
                Some(page.to_path_buf())
            } else {
                resolve(&base, &percent_decode(path))
            };
            let Some(mut target) = target else {
                report.broken.push(broken("leaves the site".to_owned()));
                continue;
            };
            if site.join(&target).is_dir() {
                target.push("index.html");
            }
            if !site.join(&target).is_file() {
                report
                    .broken
                    .push(broken(format!("no file {}", target.display())));
                continue;
            }
            let check_fragment = !fragment.is_empty()
                && target.extension().is_some_and(|e| e == "html")
                && !target.starts_with(API_DIR);
            if check_fragment {
                let fragment = percent_decode(fragment);
                if !ids.contains_key(&target) {
                    let html = read(&site.join(&target))?;
                    let found = attribute_values(&html, &["id", "name"]).collect();
                    ids.insert(target.clone(), found);
                }
                if !ids[&target].contains(&fragment) {
                    report.broken.push(broken(format!(
                        "no id {fragment:?} in {}",
                        target.display()
                    )));
                }
            }
        }
    }
    report.broken.sort();
    Ok(report)
}

fn read(path: &Path) -> Result<String, PortalError> {
    std::fs::read_to_string(path).map_err(|source| PortalError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The directory, relative to the site, that `page`'s relative links start from: the page's
/// own, or its `<base href>` when that is a path.
fn base_dir(html: &str, page: &Path) -> PathBuf {
    let own = page.parent().unwrap_or(Path::new("")).to_path_buf();
    let Some(start) = html.find("<base ") else {
        return own;
    };
    let tag = &html[start
        ..html[start..]
            .find('>')
            .map_or(html.len(), |end| start + end)];
    match attribute_values(tag, &["href"]).next() {
        Some(href) if href.starts_with('/') => {
            PathBuf::from(href.trim_start_matches('/').trim_end_matches('/'))
        }
        Some(href) if !is_external(&href) => resolve(&own, &href).unwrap_or(own),
        _ => own,
    }
}

/// `html` without what is between `<script …>` and `</script>`: code, whose strings may look
/// like attributes (rustdoc builds `<link href="./static.files/${f}">` in a script). The
/// opening tag, with its `src`, stays.
fn without_script_bodies(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        let Some(open_end) = rest[start..].find('>').map(|i| start + i + 1) else {
            break;
        };
        out.push_str(&rest[..open_end]);
        rest = &rest[open_end..];
        match rest.find("</script>") {
            Some(close) => rest = &rest[close..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// Whether `link` on `page` is not checked: one of the [`THIRD_PARTY_LINKS`] in the API
/// reference, or a file rustdoc loads only if it exists: the implementors of a trait, or impls
/// of a type, in other documented crates (`trait.impl/…`, `type.impl/…`), which it writes only
/// when there are some.
fn is_optional(page: &Path, link: &str) -> bool {
    let implementors = link.ends_with(".js")
        && ["trait.impl/", "type.impl/"]
            .iter()
            .any(|dir| link.contains(dir));
    page.starts_with(API_DIR) && (implementors || THIRD_PARTY_LINKS.contains(&link))
}

/// Links written in the docs of third-party crates (tracing's blanket `Instrument` and
/// `WithSubscriber` impls shown on every type, kube's `Resource` re-exported in
/// `mni_operator::prelude`), which rustdoc copies into the API reference as they are: relative
/// to their own crate's pages, which the site (built with `--no-deps`) does not have. Not
/// reported under `api/`; any other unresolved link there is.
pub const THIRD_PARTY_LINKS: &[&str] = &[
    "crate::Span",
    "super::Subscriber",
    "super::Span::current()",
    "dispatcher#setting-the-default-subscriber",
    "crate::dynamic::DynamicObject",
    "crate::metadata::PartialObjectMeta",
];

/// The URL schemes a link may leave the site with; any other "scheme" is a mistake, such as an
/// intra-doc link rustdoc could not resolve (`crate::Client`), and is checked as a path.
const SCHEMES: &[&str] = &["http", "https", "mailto", "data", "javascript", "ftp"];

/// Whether `link` leaves the site: it has one of the [`SCHEMES`] or is protocol-relative.
fn is_external(link: &str) -> bool {
    if link.starts_with("//") {
        return true;
    }
    link.split_once(':')
        .is_some_and(|(scheme, _)| SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
}

/// `link` resolved against `dir`, both relative to the site; `None` when it climbs out of it.
fn resolve(dir: &Path, link: &str) -> Option<PathBuf> {
    let start = if link.starts_with('/') {
        PathBuf::new()
    } else {
        dir.to_path_buf()
    };
    let mut parts: Vec<String> = start
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    for part in link.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part.to_owned()),
        }
    }
    Some(parts.iter().collect())
}

/// The values of the attributes `names` in `html`, in order, with `&amp;` and friends decoded.
fn attribute_values<'a>(html: &'a str, names: &'a [&'a str]) -> impl Iterator<Item = String> + 'a {
    let bytes = html.as_bytes();
    (0..bytes.len()).filter_map(move |i| {
        if i == 0 || !bytes[i - 1].is_ascii_whitespace() {
            return None;
        }
        let rest = &html[i..];
        let name = names
            .iter()
            .find(|name| rest.starts_with(**name) && rest[name.len()..].starts_with('='))?;
        let value = &rest[name.len() + 1..];
        let raw = match value.chars().next()? {
            quote @ ('"' | '\'') => value[1..].split(quote).next()?,
            _ => value
                .split(|c: char| c.is_ascii_whitespace() || c == '>')
                .next()?,
        };
        Some(
            raw.replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&"),
        )
    })
}

/// `text` with its `%XX` escapes decoded (as UTF-8, lossily).
#[must_use]
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        dir
    }

    #[test]
    fn finds_missing_files_fragments_and_escapes() {
        let dir = site(&[
            (
                "index.html",
                r##"<a href="a/b.html#there">ok</a> <a href="missing.html">no</a>
                <a href="a/b.html#nowhere">no id</a> <a href="../out.html">out</a>
                <img src="img/x%20y.png"> <a href="https://example.com/">ext</a>
                <a href="#top">self</a> <div id="top"></div> <a href="a/">dir</a>
                <a href='mailto:x@example.com'>mail</a> <a href="/api/c/index.html#10-20">api</a>
                <a href="kube::Client">unresolved</a>
                <script src="a/index.html">const x = `<a href="${nowhere}">`;</script>"##,
            ),
            ("a/b.html", r#"<h2 id="there">x</h2>"#),
            ("a/index.html", ""),
            ("img/x y.png", ""),
            ("api/c/index.html", ""),
        ]);
        let report = broken_links(dir.path()).expect("checked");
        let broken: Vec<String> = report.broken.iter().map(|b| b.link.clone()).collect();
        assert_eq!(
            broken,
            [
                "../out.html",
                "a/b.html#nowhere",
                "kube::Client",
                "missing.html"
            ],
            "{:?}",
            report.broken
        );
        assert_eq!(report.pages, 4);
        assert_eq!(report.links, 10);
    }

    #[test]
    fn base_href_is_where_relative_links_start() {
        let dir = site(&[
            (
                "sub/404.html",
                r#"<base href="/"><a href="index.html">home</a>"#,
            ),
            ("index.html", ""),
        ]);
        assert!(broken_links(dir.path()).expect("checked").broken.is_empty());
    }

    #[test]
    fn third_party_doc_links_pass_only_in_the_api_reference() {
        let dir = site(&[
            ("api/c/struct.S.html", r#"<a href="crate::Span">Span</a>"#),
            ("guide.html", r#"<a href="crate::Span">Span</a>"#),
        ]);
        let report = broken_links(dir.path()).expect("checked");
        let pages: Vec<&str> = report.broken.iter().map(|b| b.page.as_str()).collect();
        assert_eq!(pages, ["guide.html"]);
    }

    #[test]
    fn attributes_need_whitespace_before_them_and_are_decoded() {
        let html = r#"<a data-href="x" href="a?b=1&amp;c=2" src=plain.js>"#;
        let values: Vec<String> = attribute_values(html, &["href", "src"]).collect();
        assert_eq!(values, ["a?b=1&c=2", "plain.js"]);
        assert_eq!(percent_decode("a%20b%zz"), "a b%zz");
    }
}
