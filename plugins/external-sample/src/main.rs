//! `apidocs.mni.dev/v1`, the sample external plugin, written on `mni-plugin-sdk`: the same
//! behaviour and the same files as the Python original beside it (`apidocs.mni.dev`), which a
//! test of `mni-scaffold` (`external::rust_sample_matches_the_python_sample`) proves.
//!
//! - `init` writes `docs/index.md` (if missing);
//! - `create api` writes `docs/<kind>.md`, titled `--doc-title` (a flag this plugin declares),
//!   else the kind, and adds a link line to `README.md` above `<!-- +mni:scaffold:apis -->`
//!   (once: running twice changes nothing);
//! - other subcommands leave the project as it is.

use std::process::ExitCode;

use mni_plugin_sdk::prelude::*;
use mni_plugin_sdk::steps;

/// The Markdown marker the Rust plugin's README carries.
const MARKER: &str = "<!-- +mni:scaffold:apis -->";

/// The plugin: `apidocs.mni.dev/v1`.
struct ApiDocs {
    key: PluginKey,
}

impl Plugin for ApiDocs {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn init(&self) -> Option<&dyn Init> {
        Some(self)
    }

    fn create_api(&self) -> Option<&dyn CreateApi> {
        Some(self)
    }
}

// ANCHOR: init
impl Init for ApiDocs {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Adds docs/index.md, the start of the API reference.".to_owned(),
            examples: "mni-scaffold init --plugins rust-operator,apidocs".to_owned(),
        }
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let name = cx.config.project_name.as_deref().unwrap_or("this project");
        let index = format!("# {name} API reference\n\nOne page per kind.\n");
        cx.universe.write("docs/index.md", index, IfExists::Skip)?;
        Ok(())
    }
}
// ANCHOR_END: init

// ANCHOR: create_api
impl CreateApi for ApiDocs {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Adds docs/<kind>.md and links it from README.md.".to_owned(),
            examples: "mni-scaffold create api --group crew --version v1 --kind Captain".to_owned(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        let string = |name, usage| FlagSpec::new(name, FlagType::String, usage);
        vec![
            string("group", "API group"),
            string("version", "API version"),
            string("kind", "kind, PascalCase"),
            FlagSpec::new("namespaced", FlagType::Bool, "namespaced kind").with_default("true"),
            // Not a flag of `create api` itself: mni-scaffold accepts it because this plugin
            // declares it, and passes it on only to this plugin.
            string("doc-title", "page title (default: the kind)"),
        ]
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let flag = |name: &str| cx.flags.string(name).unwrap_or_default();
        let (kind, group, version) = (flag("kind"), flag("group"), flag("version"));
        if kind.is_empty() {
            return Err(PluginError::InvalidInput("--kind is required".to_owned()));
        }
        let domain = &cx.config.domain;
        let full_group = if domain.is_empty() {
            group
        } else {
            format!("{group}.{domain}")
        };
        let scope = if cx.flags.bool("namespaced") {
            "Namespaced"
        } else {
            "Cluster"
        };
        let page = format!("docs/{}.md", kind.to_lowercase());
        let title = Some(flag("doc-title"))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| kind.clone());
        let text =
            format!("# {title}\n\n- API version: `{full_group}/{version}`\n- Scope: {scope}\n");
        cx.universe.write(&page, text, IfExists::Overwrite)?;
        if cx.universe.contains("README.md") {
            let link = format!("- [{kind}]({page}) (`{full_group}/{version}`)\n");
            steps::insert_before_marker(cx.universe, "README.md", MARKER, &link)?;
        }
        Ok(())
    }
}
// ANCHOR_END: create_api

fn main() -> ExitCode {
    match "apidocs.mni.dev/v1".parse() {
        Ok(key) => mni_plugin_sdk::run(&ApiDocs { key }),
        Err(e) => {
            eprintln!("apidocs.mni.dev/v1: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mni_plugin_sdk::wire::PluginRequest;

    fn call(json: &str) -> mni_plugin_sdk::wire::PluginResponse {
        let plugin = ApiDocs {
            key: "apidocs.mni.dev/v1".parse().unwrap(),
        };
        mni_plugin_sdk::handle(&plugin, &PluginRequest::from_json(json).unwrap())
    }

    #[test]
    fn create_api_writes_the_page_and_links_it_once() {
        let readme = "# crew\n\n<!-- +mni:scaffold:apis -->\n";
        let request = format!(
            r#"{{"apiVersion":"v1alpha1","command":"create api",
            "args":["--group=crew","--version=v1","--kind=Captain","--namespaced=false",
                    "--resource=true","--controller=true","--doc-title=Ship's captain"],
            "universe":{{"README.md":{readme:?}}},"config":{{"domain":"acme.io","version":"3"}}}}"#
        );
        let res = call(&request);
        assert!(!res.error, "{:?}", res.error_msgs);
        assert_eq!(
            res.universe["docs/captain.md"],
            "# Ship's captain\n\n- API version: `crew.acme.io/v1`\n- Scope: Cluster\n"
        );
        let linked = &res.universe["README.md"];
        assert_eq!(
            linked,
            "# crew\n\n- [Captain](docs/captain.md) (`crew.acme.io/v1`)\n<!-- +mni:scaffold:apis -->\n"
        );
        let again = call(&request.replace(&format!("{readme:?}"), &format!("{linked:?}")));
        assert_eq!(&again.universe["README.md"], linked);
    }

    #[test]
    fn init_keeps_an_existing_index_and_refuses_a_missing_kind() {
        let res = call(
            r#"{"apiVersion":"v1alpha1","command":"init","args":["--domain=acme.io"],
            "universe":{"docs/index.md":"mine\n"},"config":{"domain":"acme.io","version":"3"}}"#,
        );
        assert!(!res.error);
        assert!(
            res.universe
                .get("docs/index.md")
                .is_none_or(|t| t == "mine\n")
        );
        let res =
            call(r#"{"apiVersion":"v1alpha1","command":"create api","args":["--group=crew"]}"#);
        assert_eq!(res.error_msgs, ["--kind is required"]);
    }
}
