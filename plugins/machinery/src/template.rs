//! Handlebars templates in strict mode, with name helpers.
//!
//! Start with [`Templates`]: register one template per generated file, then
//! [`Templates::scaffold`] a list of [`TemplateFile`]s into the Universe, each with its own
//! [`IfExists`] policy (the Universe's `--force` applies on top). Strict mode makes a missing
//! variable an error naming the template, line and variable instead of an empty string. Output
//! is not HTML-escaped. Helpers: `snake`, `kebab`, `pascal`, `camel`, `upper_snake`, `lower` and
//! `plural` (Kubernetes pluralisation from `mni_plugin::names`), e.g. `{{plural kind}}`.

use handlebars::{
    Context, Handlebars, Helper, HelperDef, RenderContext, RenderError, RenderErrorReason,
    ScopedJson,
};
use mni_plugin::names;
use mni_plugin::{IfExists, PluginError, PluginKey, Universe, UniverseError, WriteOutcome};
use serde::Serialize;

/// Why a template could not be registered or rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template source does not parse.
    #[error("template {template}:{line}: {message}")]
    Syntax {
        /// The template name.
        template: String,
        /// 1-based line, 0 when unknown.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// Strict mode: a variable the template uses is missing from the data.
    #[error("template {template}:{line}: missing variable `{variable}`")]
    MissingVariable {
        /// The template name.
        template: String,
        /// 1-based line, 0 when unknown.
        line: usize,
        /// The variable path.
        variable: String,
    },
    /// Any other render failure (unknown template or helper, bad helper argument).
    #[error("template {template}:{line}: {message}")]
    Render {
        /// The template name.
        template: String,
        /// 1-based line, 0 when unknown.
        line: usize,
        /// What went wrong.
        message: String,
    },
    /// Writing the rendered file into the Universe failed (e.g. it exists and the policy is
    /// [`IfExists::Error`]).
    #[error(transparent)]
    Universe(#[from] UniverseError),
}

impl TemplateError {
    /// The [`PluginError`] a plugin `key` returns for this error. A Universe error stays one
    /// (so a file that exists without `--force` is still bad input, exit code 2, with its
    /// message naming the path and `--force`); anything else is the plugin's failure.
    #[must_use]
    pub fn into_plugin_error(self, key: &PluginKey) -> PluginError {
        match self {
            Self::Universe(e) => PluginError::Universe(e),
            e => PluginError::Failed {
                key: key.to_string(),
                message: e.to_string(),
                source: Some(Box::new(e)),
            },
        }
    }
}

/// One generated file: which template renders it, where it goes and what to do if it exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateFile {
    /// The registered template name.
    pub template: String,
    /// The output path; itself a template (e.g. `services/{{kebab name}}/Cargo.toml`).
    pub path: String,
    /// The policy when the path is taken.
    pub if_exists: IfExists,
}

impl TemplateFile {
    /// Renders `template` to `path`, failing if the file exists ([`IfExists::Error`]).
    #[must_use]
    pub fn new(template: &str, path: &str) -> Self {
        Self {
            template: template.to_owned(),
            path: path.to_owned(),
            if_exists: IfExists::Error,
        }
    }

    /// Sets the if-exists policy.
    #[must_use]
    pub fn if_exists(mut self, policy: IfExists) -> Self {
        self.if_exists = policy;
        self
    }
}

/// A registry of templates. See the [module docs](self).
#[derive(Debug)]
pub struct Templates {
    registry: Handlebars<'static>,
    /// Templates registered with [`Templates::register_deferred`]: parsed when rendered, since
    /// parsing is most of a plugin's start-up cost and a command renders only some of them.
    deferred: std::collections::HashMap<String, &'static str>,
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

/// A name conversion behind a helper.
type Convert = fn(&str) -> String;

struct NameHelper(&'static str, Convert);

impl HelperDef for NameHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        let param = h
            .param(0)
            .ok_or(RenderErrorReason::ParamNotFoundForIndex(self.0, 0))?;
        if param.is_value_missing() {
            let path = param.relative_path().cloned().unwrap_or_default();
            return Err(RenderErrorReason::MissingVariable(Some(path)).into());
        }
        let value = param.value();
        let text = match value.as_str() {
            Some(s) => s.to_owned(),
            None if value.is_number() || value.is_boolean() => value.to_string(),
            None => {
                return Err(RenderErrorReason::ParamTypeMismatchForName(
                    self.0,
                    param.relative_path().cloned().unwrap_or_default(),
                    "string".to_owned(),
                )
                .into());
            }
        };
        Ok(ScopedJson::Derived(serde_json::Value::String((self.1)(
            &text,
        ))))
    }
}

impl Templates {
    /// An empty registry in strict mode, without HTML escaping, with the name helpers.
    #[must_use]
    pub fn new() -> Self {
        let mut registry = Handlebars::new();
        registry.set_strict_mode(true);
        registry.register_escape_fn(handlebars::no_escape);
        let helpers: [(&'static str, Convert); 7] = [
            ("snake", names::to_snake_case),
            ("kebab", names::to_kebab_case),
            ("pascal", names::to_pascal_case),
            ("camel", names::to_camel_case),
            ("upper_snake", names::to_upper_snake_case),
            ("lower", str::to_lowercase),
            ("plural", names::pluralize),
        ];
        for (name, f) in helpers {
            registry.register_helper(name, Box::new(NameHelper(name, f)));
        }
        Self {
            registry,
            deferred: std::collections::HashMap::new(),
        }
    }

    /// Registers `source` under `name` (by convention the template's path under `templates/`).
    pub fn register(&mut self, name: &str, source: &str) -> Result<(), TemplateError> {
        self.registry
            .register_template_string(name, source)
            .map_err(|e| syntax(name, &e))
    }

    /// Registers `source` under `name` without parsing it: it is parsed each time it is
    /// rendered (once per command in practice). Built-in plugins register their embedded
    /// templates this way so that starting `mni-scaffold` does not parse every template of
    /// every plugin; [`Templates::check_all`] parses them all, for tests.
    pub fn register_deferred(&mut self, name: &str, source: &'static str) {
        self.deferred.insert(name.to_owned(), source);
    }

    /// Templates from `sources` (name, source) registered with
    /// [`register_deferred`](Self::register_deferred): how a built-in plugin loads its
    /// embedded templates (`Templates::deferred(mni_templates::files("service", "v1"))`).
    #[must_use]
    pub fn deferred(sources: impl IntoIterator<Item = (&'static str, &'static str)>) -> Self {
        let mut templates = Self::new();
        for (name, source) in sources {
            templates.register_deferred(name, source);
        }
        templates
    }

    /// Parses every deferred template; the first syntax error names its template and line.
    pub fn check_all(&self) -> Result<(), TemplateError> {
        let mut names: Vec<&String> = self.deferred.keys().collect();
        names.sort();
        for name in names {
            handlebars::Template::compile(self.deferred[name]).map_err(|e| syntax(name, &e))?;
        }
        Ok(())
    }

    /// Whether a template is registered under `name`.
    #[must_use]
    pub fn has(&self, name: &str) -> bool {
        self.registry.has_template(name) || self.deferred.contains_key(name)
    }

    /// Renders the template `name` with `data`.
    pub fn render(&self, name: &str, data: &impl Serialize) -> Result<String, TemplateError> {
        if let Some(source) = self.deferred.get(name) {
            return self.render_str(name, source, data);
        }
        self.registry
            .render(name, data)
            .map_err(|e| convert(name, &e))
    }

    /// Renders an unregistered template string; `name` is used in errors.
    pub fn render_str(
        &self,
        name: &str,
        source: &str,
        data: &impl Serialize,
    ) -> Result<String, TemplateError> {
        let template = handlebars::Template::compile(source).map_err(|e| syntax(name, &e))?;
        let context = Context::wraps(data).map_err(|e| convert(name, &e))?;
        let owned_name = name.to_owned();
        let mut rc = RenderContext::new(Some(&owned_name));
        let mut out = handlebars::StringOutput::new();
        handlebars::Renderable::render(&template, &self.registry, &context, &mut rc, &mut out)
            .map_err(|e| convert(name, &e))?;
        out.into_string().map_err(|e| TemplateError::Render {
            template: name.to_owned(),
            line: 0,
            message: e.to_string(),
        })
    }

    /// Renders every file and writes it into the Universe with its policy. Returns each output
    /// path with what the write did. Stops at the first error; the Universe may then hold the
    /// files written before it, so callers discard it (nothing reaches the disk).
    pub fn scaffold(
        &self,
        universe: &mut Universe,
        files: &[TemplateFile],
        data: &impl Serialize,
    ) -> Result<Vec<(String, WriteOutcome)>, TemplateError> {
        let mut outcomes = Vec::with_capacity(files.len());
        for file in files {
            let path = self.render_str(&format!("path of {}", file.template), &file.path, data)?;
            let contents = self.render(&file.template, data)?;
            let outcome = universe.write(&path, contents, file.if_exists)?;
            outcomes.push((path, outcome));
        }
        Ok(outcomes)
    }
}

fn syntax(template: &str, e: &handlebars::TemplateError) -> TemplateError {
    TemplateError::Syntax {
        template: template.to_owned(),
        line: e.pos().map_or(0, |(l, _)| l),
        message: e.reason().to_string(),
    }
}

fn convert(template: &str, e: &RenderError) -> TemplateError {
    let template = e
        .template_name
        .clone()
        .unwrap_or_else(|| template.to_owned());
    let line = e.line_no.unwrap_or(0);
    match e.reason() {
        RenderErrorReason::MissingVariable(Some(variable)) => TemplateError::MissingVariable {
            template,
            line,
            variable: variable.clone(),
        },
        reason => TemplateError::Render {
            template,
            line,
            message: reason.to_string(),
        },
    }
}

/// Merges template data objects left to right (later keys win); what is not an object is
/// skipped. Plugins that extend another plugin's output render with its data plus their own.
#[must_use]
pub fn merge_data(parts: &[serde_json::Value]) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for part in parts {
        if let Some(map) = part.as_object() {
            out.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    serde_json::Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(source: &str, data: serde_json::Value, expected: Result<&str, &str>) {
        let got = Templates::new()
            .render_str("t.hbs", source, &data)
            .map_err(|e| e.to_string());
        match (got, expected) {
            (Ok(g), Ok(e)) => assert_eq!(g, e),
            (Err(g), Err(e)) => assert_eq!(g, e),
            (g, e) => panic!("{source}: got {g:?}, expected {e:?}"),
        }
    }

    #[test]
    fn data_merges_left_to_right_and_skips_what_is_not_an_object() {
        let merged = merge_data(&[
            json!({"a": 1, "b": 1}),
            json!(null),
            json!({"b": 2, "c": 3}),
        ]);
        assert_eq!(merged, json!({"a": 1, "b": 2, "c": 3}));
    }

    #[test]
    fn deferred_templates_are_parsed_when_checked() {
        let good = Templates::deferred([("a.hbs", "{{x}}")]);
        assert!(good.check_all().is_ok());
        let bad = Templates::deferred([("a.hbs", "{{x}}"), ("b.hbs", "{{#if}}")]);
        let err = bad
            .check_all()
            .expect_err("b.hbs does not parse")
            .to_string();
        assert!(err.contains("b.hbs"), "{err}");
    }

    #[test]
    fn helpers_and_strict_mode() {
        let kind = json!({"kind": "NetworkPolicy", "name": "bare-metal"});
        check(
            "{{snake kind}} {{kebab kind}} {{pascal name}} {{camel name}}",
            kind.clone(),
            Ok("network_policy network-policy BareMetal bareMetal"),
        );
        check(
            "{{upper_snake name}} {{lower kind}} {{plural kind}}",
            kind.clone(),
            Ok("BARE_METAL networkpolicy networkpolicies"),
        );
        check(
            "<{{name}}> & \"q\"",
            kind.clone(),
            Ok("<bare-metal> & \"q\""),
        );
        check(
            "a\n{{missing}}",
            kind.clone(),
            Err("template t.hbs:2: missing variable `missing`"),
        );
        check(
            "{{snake nope}}",
            kind.clone(),
            Err("template t.hbs:1: missing variable `nope`"),
        );
        check(
            "{{#if",
            kind,
            Err(
                "template t.hbs:1: invalid handlebars syntax: expected identifier, helper_parameter, block_param, or trailing_tilde_to_omit_whitespace",
            ),
        );
    }

    #[test]
    fn deferred_templates_parse_when_rendered() {
        let mut t = Templates::new();
        t.register_deferred("ok", "name = {{kebab name}}\n");
        t.register_deferred("broken", "{{#if x}}");
        assert!(t.has("ok") && t.has("broken"));
        assert_eq!(
            t.render("ok", &json!({"name": "BareMetal"})).unwrap(),
            "name = bare-metal\n"
        );
        let err = t.render("broken", &json!({"x": true})).unwrap_err();
        assert!(err.to_string().starts_with("template broken:1:"), "{err}");
        assert!(
            t.check_all()
                .unwrap_err()
                .to_string()
                .starts_with("template broken:1:")
        );
        let err = t.render("ok", &json!({})).unwrap_err();
        assert_eq!(err.to_string(), "template ok:1: missing variable `name`");
    }

    #[test]
    fn scaffold_applies_policies() {
        let mut t = Templates::new();
        t.register("svc/Cargo.toml", "[package]\nname = \"{{kebab name}}\"\n")
            .unwrap();
        let mut u = Universe::new();
        u.insert_existing("services/billing/Cargo.toml", "old")
            .unwrap();
        let files = [TemplateFile::new(
            "svc/Cargo.toml",
            "services/{{kebab name}}/Cargo.toml",
        )];
        let err = t
            .scaffold(&mut u, &files, &json!({"name": "Billing"}))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "services/billing/Cargo.toml already exists; pass --force to overwrite it"
        );
        let key: PluginKey = "rust.mni.dev/v1".parse().unwrap();
        let err = err.into_plugin_error(&key);
        assert!(err.is_invalid_input(), "{err:?}");
        assert_eq!(
            err.to_string(),
            "services/billing/Cargo.toml already exists; pass --force to overwrite it"
        );
        let broken = t.render("nope", &json!({})).unwrap_err();
        assert!(!broken.into_plugin_error(&key).is_invalid_input());
        let files = [files[0].clone().if_exists(IfExists::Overwrite)];
        let out = t
            .scaffold(&mut u, &files, &json!({"name": "Billing"}))
            .unwrap();
        assert_eq!(
            out,
            [(
                "services/billing/Cargo.toml".to_owned(),
                WriteOutcome::Overwritten
            )]
        );
        assert!(!t.has("nope"));
    }
}
