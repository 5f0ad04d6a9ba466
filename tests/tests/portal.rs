//! The developer portal as a site: `scripts/book.sh` builds the book with mdBook, the rustdoc
//! API reference of the public crates under `api/` and the generated plugin catalog; every
//! internal link of every page resolves, and in headless Chromium a reader searches for
//! "plugin" and follows a result to the plugin tutorial.
//!
//! mdBook is installed by `scripts/mdbook.sh` (which `scripts/test.sh` runs first; `book.sh`
//! runs it too). Chromium must be installed (`apt-get install -y chromium`): without it the
//! browser test fails, saying so. Each test builds its own copy of the site (the `cargo doc`
//! step is shared through the target directory), so they may run at once.

#[allow(
    unused_imports,
    reason = "the browser tests share the module; this one uses part of it"
)]
mod service_support;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use service_support::chromium::{self, Chromium};
use service_support::{eventually, eventually_value, run_ok};

/// How long building the site may take: `cargo doc` of six crates (their dependencies checked)
/// on a cold target directory, and mdBook.
const BUILD: Duration = Duration::from_secs(30 * 60);
/// How long the page may take to show what a step waits for.
const SHOW: Duration = Duration::from_secs(30);

/// Builds the site with `scripts/book.sh` into `name` under the test's temporary directory and
/// returns that directory.
fn build_site(name: &str) -> PathBuf {
    let site = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let target = mni_tests::book::bin_dir()
        .parent()
        .expect("target/<profile> has a parent")
        .to_path_buf();
    let mut command = Command::new(mni_tests::repo_root().join("scripts/book.sh"));
    mni_tests::clean_cargo_env(&mut command);
    command
        .arg("build")
        .env("CARGO_TARGET_DIR", &target)
        .env("MNI_BOOK_DIR", &site);
    let printed = run_ok(command, BUILD);
    assert_eq!(
        printed.trim(),
        site.display().to_string(),
        "book.sh prints the site"
    );
    site
}

#[test]
fn every_internal_link_of_the_portal_resolves() {
    let site = build_site("portal-links");
    for page in [
        "index.html",
        "first-operator.html",
        "plugin-catalog.html",
        "api.html",
        "api/mni_operator/index.html",
        "api/mni_core/index.html",
        "api/mni_web/index.html",
        "api/mni_testkit/index.html",
        "api/mni_plugin/index.html",
        "api/mni_plugin_sdk/index.html",
        "api/mni_redfish/index.html",
        // The harnesses behind the crates' `testing` features.
        "api/mni_redfish/testing/index.html",
        "api/mni_web/testing/index.html",
    ] {
        assert!(site.join(page).is_file(), "the site has no {page}");
    }
    // The catalog's table is generated: every plugin crate of the repository is in it.
    let catalog = std::fs::read_to_string(site.join("plugin-catalog.html")).expect("catalog");
    assert!(
        !catalog.contains("{{#plugin-catalog}}"),
        "the marker was replaced"
    );
    for key in [
        "rust.mni.dev/v1",
        "kustomize.mni.dev/v1",
        "service.mni.dev/v1",
        "vpc.mni.dev/v1",
        "vm.mni.dev/v1",
        "baremetal.mni.dev/v1",
        "apidocs.mni.dev/v1",
    ] {
        assert!(
            catalog.contains(&format!("<code>{key}</code>")),
            "the plugin catalog lists {key}"
        );
    }
    let report = mni_tests::portal::broken_links(&site).expect("the site is readable");
    println!(
        "checked {} internal links on {} pages",
        report.links, report.pages
    );
    assert!(report.pages > 50 && report.links > 1000, "a whole site");
    let broken: Vec<String> = report.broken.iter().map(ToString::to_string).collect();
    assert!(
        broken.is_empty(),
        "{} broken internal links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn search_for_plugin_and_follow_a_tutorial_in_chromium() {
    // Before building anything: without Chromium there is nothing to test.
    chromium::executable();
    let site = build_site("portal-browser");
    let url = serve(site);

    let mut browser = Chromium::launch();
    let mut page = browser.open(&format!("{url}index.html"));
    assert_eq!(
        page.eval("document.querySelector('main h1').textContent"),
        json!("Introduction")
    );

    // The search icon loads the search index and shows the search bar.
    page.click("#mdbook-search-toggle");
    eventually("the search bar to show", SHOW, || {
        let shown = page
            .eval("!document.getElementById('mdbook-search-wrapper').classList.contains('hidden')");
        if shown == json!(true) {
            Ok(())
        } else {
            Err("hidden".to_owned())
        }
    });
    // Typed key by key (the search runs on keyup); the index loads in the background, so the
    // typing is repeated until results show.
    let results = eventually_value("search results for \"plugin\"", SHOW, || {
        page.eval("document.getElementById('mdbook-searchbar').value = ''");
        page.focus("#mdbook-searchbar");
        page.press_keys("plugin");
        std::thread::sleep(Duration::from_millis(300));
        let links = page.eval(
            "[...document.querySelectorAll('#mdbook-searchresults li a')]\
             .map(a => a.getAttribute('href'))",
        );
        match links.as_array() {
            Some(links) if !links.is_empty() => Ok(links.clone()),
            _ => Err(format!(
                "{}",
                page.eval("document.getElementById('mdbook-searchresults-header').innerText")
            )),
        }
    });
    println!("{} results, first: {}", results.len(), results[0]);
    assert!(
        results.iter().any(|href| href
            .as_str()
            .is_some_and(|h| h.starts_with("writing-plugins.html"))),
        "the plugin tutorial is among the results: {results:?}"
    );

    // Follow the tutorial's result.
    page.click("#mdbook-searchresults li a[href^='writing-plugins.html']");
    eventually("the plugin tutorial to open", SHOW, || {
        let at = page.eval(
            "[location.pathname, document.readyState, \
              (document.querySelector('main h1') || {}).textContent]",
        );
        if at == json!(["/writing-plugins.html", "complete", "Writing plugins"]) {
            Ok(())
        } else {
            Err(at.to_string())
        }
    });
    // The search term is marked in the chapter.
    assert_ne!(
        page.eval("document.querySelectorAll('main mark').length"),
        json!(0)
    );

    // From there, the sidebar leads to the first tutorial.
    page.click("#mdbook-sidebar a[href$='first-operator.html']");
    eventually("the first-operator tutorial to open", SHOW, || {
        let at = page.eval(
            "[location.pathname, document.readyState, \
              (document.querySelector('main h1') || {}).textContent]",
        );
        if at == json!(["/first-operator.html", "complete", "Your first operator"]) {
            Ok(())
        } else {
            Err(at.to_string())
        }
    });
    drop(page);
    browser.close();
}

/// Serves the files under `root` over HTTP on a free local port, from a thread, for as long as
/// the test runs; returns the base URL (ending in `/`).
fn serve(root: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    let url = format!(
        "http://{}/",
        listener.local_addr().expect("a bound address")
    );
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || {
                let _ = respond(&root, stream);
            });
        }
    });
    url
}

/// Answers one GET with the file it names (a directory's `index.html`), or 404.
fn respond(root: &Path, mut stream: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers, up to the empty line.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
    }
    let target = request.split_whitespace().nth(1).unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let path = mni_tests::portal::percent_decode(path);
    let mut file = root.to_path_buf();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        if part == ".." {
            file = root.join("..denied");
            break;
        }
        file.push(part);
    }
    if file.is_dir() {
        file.push("index.html");
    }
    let (status, body, kind) = match std::fs::read(&file) {
        Ok(body) => ("200 OK", body, content_type(&file)),
        Err(_) => ("404 Not Found", b"not found".to_vec(), "text/plain"),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript",
        "css" => "text/css",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        _ => "application/octet-stream",
    }
}
