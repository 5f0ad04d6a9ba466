//! A plugin's templates, embedded in its binary and rendered with Handlebars in strict mode.
//!
//! Start with [`Templates`]: add one template per generated file, named by its output path
//! (`docs/{{lower kind}}.md`; the name is itself a template), with
//! [`Templates::with_template`] and `include_str!`, or all at once from a directory embedded
//! with `include_dir!` ([`Templates::from_dir`], which strips the `.hbs` suffix). Then
//! [`Templates::scaffold`] renders every one of them into the [`Universe`], or
//! [`Templates::render`] renders one.
//!
//! The dialect is the one of `mni-scaffold`'s built-in plugins (`mni-machinery`): strict mode (a
//! missing variable is an error naming the template, line and variable), no HTML escaping, and
//! the name helpers `snake`, `kebab`, `pascal`, `camel`, `upper_snake`, `lower` and `plural`
//! (Kubernetes' pluralisation), e.g. `{{plural (lower kind)}}`. It is implemented here rather
//! than taken from `mni-machinery` so that a plugin build does not compile the whole engine.

use handlebars::{
    Context, Handlebars, Helper, HelperDef, RenderContext, RenderError, RenderErrorReason,
    ScopedJson,
};
use include_dir::Dir;
use mni_plugin::names;
use mni_plugin::{IfExists, PluginError, PluginKey, Universe, UniverseError, WriteOutcome};
use serde::Serialize;

/// The suffix template files carry in a template directory.
pub const SUFFIX: &str = ".hbs";

/// Why a template could not be added or rendered.
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
    /// A variable the template uses is missing from the data (strict mode).
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
    /// A file of an embedded directory is not UTF-8.
    #[error("template {path}: not UTF-8 text")]
    NotText {
        /// The file in the directory.
        path: String,
    },
    /// Writing the rendered file failed (e.g. it exists and the policy is [`IfExists::Error`]).
    #[error(transparent)]
    Universe(#[from] UniverseError),
}

impl TemplateError {
    /// The [`PluginError`] plugin `key` returns for this error: a Universe error stays one (a
    /// file that already exists is the user's input), anything else is the plugin's failure.
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

/// A plugin's templates, by output path. See the [module docs](self).
#[derive(Debug)]
pub struct Templates {
    registry: Handlebars<'static>,
    names: Vec<String>,
    if_exists: IfExists,
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

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
            None => value.to_string(),
        };
        Ok(ScopedJson::Derived(serde_json::Value::String((self.1)(
            &text,
        ))))
    }
}

impl Templates {
    /// No templates; strict mode, no escaping, the name helpers; files that already exist are
    /// an error ([`IfExists::Error`]).
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
            names: Vec::new(),
            if_exists: IfExists::Error,
        }
    }

    /// Adds a template whose output path is `path` (itself a template).
    pub fn add(&mut self, path: &str, source: &str) -> Result<(), TemplateError> {
        self.registry
            .register_template_string(path, source)
            .map_err(|e| TemplateError::Syntax {
                template: path.to_owned(),
                line: e.pos().map_or(0, |(l, _)| l),
                message: e.reason().to_string(),
            })?;
        if !self.names.iter().any(|n| n == path) {
            self.names.push(path.to_owned());
            self.names.sort();
        }
        Ok(())
    }

    /// [`add`](Self::add), as a builder.
    pub fn with_template(mut self, path: &str, source: &str) -> Result<Self, TemplateError> {
        self.add(path, source)?;
        Ok(self)
    }

    /// What [`scaffold`](Self::scaffold) does with a file that is already there.
    #[must_use]
    pub fn with_if_exists(mut self, policy: IfExists) -> Self {
        self.if_exists = policy;
        self
    }

    /// Every `*.hbs` file of an embedded directory, by its path inside `dir` without the suffix
    /// (`include_dir!("$CARGO_MANIFEST_DIR/templates")`: `templates/docs/index.md.hbs` renders
    /// to `docs/index.md`). Other files are left out.
    pub fn from_dir(dir: &Dir<'_>) -> Result<Self, TemplateError> {
        let mut templates = Self::new();
        templates.add_dir(dir, dir)?;
        Ok(templates)
    }

    fn add_dir(&mut self, root: &Dir<'_>, dir: &Dir<'_>) -> Result<(), TemplateError> {
        for file in dir.files() {
            let rel = file
                .path()
                .strip_prefix(root.path())
                .unwrap_or(file.path())
                .to_string_lossy()
                .into_owned();
            let Some(path) = rel.strip_suffix(SUFFIX) else {
                continue;
            };
            let source = file
                .contents_utf8()
                .ok_or_else(|| TemplateError::NotText { path: rel.clone() })?;
            self.add(path, source)?;
        }
        for sub in dir.dirs() {
            self.add_dir(root, sub)?;
        }
        Ok(())
    }

    /// The output paths of the templates (unrendered), sorted.
    #[must_use]
    pub fn paths(&self) -> &[String] {
        &self.names
    }

    /// Renders the template `path` with `data`.
    pub fn render(&self, path: &str, data: &impl Serialize) -> Result<String, TemplateError> {
        self.registry
            .render(path, data)
            .map_err(|e| convert(path, &e))
    }

    /// Renders a template string; `name` is used in errors.
    pub fn render_str(
        &self,
        name: &str,
        source: &str,
        data: &impl Serialize,
    ) -> Result<String, TemplateError> {
        self.registry
            .render_template(source, data)
            .map_err(|e| convert(name, &e))
    }

    /// Renders every template to its rendered path in the Universe with the
    /// [`with_if_exists`](Self::with_if_exists) policy; returns each path with what the write
    /// did. Stops at the first error.
    pub fn scaffold(
        &self,
        universe: &mut Universe,
        data: &impl Serialize,
    ) -> Result<Vec<(String, WriteOutcome)>, TemplateError> {
        let mut outcomes = Vec::with_capacity(self.names.len());
        for name in &self.names {
            let path = self.render_str(&format!("path {name}"), name, data)?;
            let contents = self.render(name, data)?;
            let outcome = universe.write(&path, contents, self.if_exists)?;
            outcomes.push((path, outcome));
        }
        Ok(outcomes)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    static DIR: Dir<'static> = include_dir::include_dir!("$CARGO_MANIFEST_DIR/src/testdata");

    #[test]
    fn renders_paths_and_contents_with_name_helpers() {
        let templates = Templates::new()
            .with_template(
                "docs/{{lower kind}}.md",
                "# {{kind}} ({{plural (lower kind)}}, {{snake kind}})\n",
            )
            .unwrap();
        let mut universe = Universe::new();
        let out = templates
            .scaffold(&mut universe, &json!({"kind": "BareMetalHost"}))
            .unwrap();
        assert_eq!(
            out,
            [("docs/baremetalhost.md".to_owned(), WriteOutcome::Created)]
        );
        assert_eq!(
            universe.get("docs/baremetalhost.md"),
            Some("# BareMetalHost (baremetalhosts, bare_metal_host)\n")
        );
        // A second run with the same data changes nothing; other contents are refused.
        templates
            .scaffold(&mut universe, &json!({"kind": "BareMetalHost"}))
            .unwrap();
        let mut universe2 = Universe::new();
        universe2
            .insert_existing("docs/baremetalhost.md", "mine")
            .unwrap();
        let err = templates
            .scaffold(&mut universe2, &json!({"kind": "BareMetalHost"}))
            .unwrap_err();
        assert!(err.to_string().contains("docs/baremetalhost.md"), "{err}");
    }

    #[test]
    fn strict_mode_names_the_missing_variable() {
        let templates = Templates::new()
            .with_template("a.md", "line one\n{{title}}\n")
            .unwrap();
        let err = templates.render("a.md", &json!({})).unwrap_err();
        assert_eq!(err.to_string(), "template a.md:2: missing variable `title`");
        let err = Templates::new()
            .with_template("b.md", "{{#if}}")
            .unwrap_err();
        assert!(err.to_string().starts_with("template b.md:"), "{err}");
    }

    #[test]
    fn loads_an_embedded_directory_without_the_suffix() {
        let templates = Templates::from_dir(&DIR).unwrap();
        assert_eq!(templates.paths(), ["docs/index.md"]);
        assert_eq!(
            templates
                .render("docs/index.md", &json!({"projectName": "crew"}))
                .unwrap(),
            "# crew\n"
        );
    }
}
