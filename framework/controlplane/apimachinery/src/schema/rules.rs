//! CRD validation rules (`x-kubernetes-validations`): CEL expressions evaluated at their schema
//! node with `self` bound to the value there, as apiextensions-apiserver's `cel.Validator` does.
//!
//! Rules are compiled once, when the schema is parsed ([`Structural::from_value`]), and kept
//! in the schema node ([`ValidationRule`]). [`validate_rules`] walks an object and its old
//! version together: a transition rule (one that uses `oldSelf`) only runs where the old value
//! correlates — object properties, `granular`/`atomic` maps by key, `map` lists by their keys —
//! unless it sets `optionalOldSelf`. A failing rule whose value did not change since the old
//! object is reported as a warning rather than an error (validation ratcheting, on by default
//! since Kubernetes 1.30). [`rule_errors`] checks the rules of a CRD schema when it is written.

mod compile;
mod value;

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{AdditionalProperties, MAX_VALUE_DEPTH, SchemaError, Structural};
use crate::field::{self, FieldError, FieldErrorKind};

pub use compile::rule_errors;

/// One `x-kubernetes-validations` entry with its compiled programs.
#[derive(Debug, Clone)]
pub struct ValidationRule {
    /// `rule`: the CEL expression.
    pub rule: String,
    /// `message`.
    pub message: String,
    /// `messageExpression`.
    pub message_expression: String,
    /// `reason`: `FieldValueInvalid` (the default), `FieldValueForbidden`,
    /// `FieldValueRequired` or `FieldValueDuplicate`.
    pub reason: Option<String>,
    /// `fieldPath`, relative to the node, e.g. `.spec.cidr`.
    pub field_path: String,
    /// `optionalOldSelf`.
    pub optional_old_self: Option<bool>,
    compiled: Arc<Compiled>,
}

#[derive(Debug)]
struct Compiled {
    rule: Result<mni_cel::Program, mni_cel::Error>,
    message: Option<Result<mni_cel::Program, mni_cel::Error>>,
}

impl PartialEq for ValidationRule {
    fn eq(&self, other: &Self) -> bool {
        (
            &self.rule,
            &self.message,
            &self.message_expression,
            &self.reason,
            &self.field_path,
            self.optional_old_self,
        ) == (
            &other.rule,
            &other.message,
            &other.message_expression,
            &other.reason,
            &other.field_path,
            other.optional_old_self,
        )
    }
}

/// The variables a rule and its message expression may use.
const VARIABLES: &[&str] = &["self", "oldSelf"];

fn env() -> &'static mni_cel::Env {
    static ENV: std::sync::OnceLock<mni_cel::Env> = std::sync::OnceLock::new();
    ENV.get_or_init(mni_cel::Env::kubernetes)
}

impl ValidationRule {
    /// Parses and compiles one entry; `path` names it in errors.
    pub(crate) fn parse(v: &Value, path: &str) -> Result<Self, SchemaError> {
        let bad = |keyword: &str, expected: &'static str| SchemaError::InvalidKeyword {
            path: path.to_string(),
            keyword: keyword.to_string(),
            expected,
        };
        let Value::Object(obj) = v else {
            return Err(bad("x-kubernetes-validations", "an array of rules"));
        };
        let text = |k: &str| -> Result<String, SchemaError> {
            match obj.get(k) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(bad(k, "a string")),
            }
        };
        let rule = text("rule")?;
        let message_expression = text("messageExpression")?;
        let compiled = Compiled {
            rule: if rule.trim().is_empty() {
                Err(mni_cel::Error::Compile("rule is not specified".into()))
            } else {
                env().compile(&rule, VARIABLES, true)
            },
            message: (!message_expression.trim().is_empty())
                .then(|| env().compile(&message_expression, VARIABLES, false)),
        };
        Ok(Self {
            rule,
            message: text("message")?,
            message_expression,
            reason: Some(text("reason")?).filter(|r| !r.is_empty()),
            field_path: text("fieldPath")?,
            optional_old_self: match obj.get("optionalOldSelf") {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => return Err(bad("optionalOldSelf", "a boolean")),
            },
            compiled: Arc::new(compiled),
        })
    }

    /// Whether this is a transition rule (it uses `oldSelf`).
    pub fn is_transition_rule(&self) -> bool {
        matches!(&self.compiled.rule, Ok(p) if p.uses("oldSelf"))
    }

    /// `message`, else `failed rule: <rule>` (`ruleMessageOrDefault`).
    fn default_message(&self) -> String {
        if self.message.trim().is_empty() {
            format!("failed rule: {}", self.rule.trim())
        } else {
            self.message.trim().to_string()
        }
    }

    /// `message`, else the rule (`ruleErrorString`).
    fn error_string(&self) -> String {
        if self.message.trim().is_empty() {
            self.rule.trim().to_string()
        } else {
            self.message.trim().to_string()
        }
    }
}

impl Structural {
    /// Checks the field selections of this node's rules against the schema, as cel-go's type
    /// checker does: `self.gatway` on an object without a `gatway` property does not compile
    /// (`undefined field 'gatway'`). Called once the node's children are parsed; `resource`
    /// marks the root and embedded resources (where only `apiVersion`, `kind`,
    /// `metadata.name` and `metadata.generateName` are visible besides the properties).
    pub(crate) fn check_rule_fields(&mut self, resource: bool) {
        let mut checked = Vec::with_capacity(self.validations.len());
        for rule in &self.validations {
            let mut rule = rule.clone();
            if let Ok(p) = &rule.compiled.rule {
                let variables: &[&str] = if rule.optional_old_self == Some(true) {
                    &["self"]
                } else {
                    VARIABLES
                };
                let issue = p
                    .selections(variables)
                    .iter()
                    .find_map(|sel| undefined_field(self, resource, &sel.fields));
                if let Some((offset, msg)) = issue {
                    rule.compiled = Arc::new(Compiled {
                        rule: Err(p.issue(offset, &msg)),
                        message: rule.compiled.message.as_ref().map(|m| match m {
                            Ok(_) => env().compile(&rule.message_expression, VARIABLES, false),
                            Err(e) => Err(e.clone()),
                        }),
                    });
                }
            }
            checked.push(rule);
        }
        self.validations = checked;
    }
}

/// The first selection in `fields` that the schema at `node` does not declare.
fn undefined_field(
    node: &Structural,
    resource: bool,
    fields: &[(String, usize)],
) -> Option<(usize, String)> {
    let (mut cur, mut resource) = (node, resource);
    let mut rest = fields.iter();
    while let Some((f, offset)) = rest.next() {
        let undefined = || Some((*offset, format!("undefined field '{f}'")));
        if let Some((_, prop)) = cur
            .properties
            .iter()
            .find(|(k, _)| value::escape(k).as_deref() == Some(f.as_str()))
        {
            if resource && f == "metadata" {
                return metadata_field(rest.next());
            }
            cur = prop;
            resource = prop.embedded_resource;
            continue;
        }
        if resource {
            return match f.as_str() {
                "apiVersion" | "kind" => None,
                "metadata" => metadata_field(rest.next()),
                _ if cur.properties.is_empty() && cur.preserves_unknown_fields() => None,
                _ => undefined(),
            };
        }
        match &cur.additional_properties {
            Some(AdditionalProperties::Schema(a)) => {
                cur = a;
                resource = a.embedded_resource;
            }
            _ if !cur.properties.is_empty() => return undefined(),
            _ => return None,
        }
    }
    None
}

/// `metadata.<f>` of a resource: only `name` and `generateName` are visible.
fn metadata_field(next: Option<&(String, usize)>) -> Option<(usize, String)> {
    match next {
        Some((f, offset)) if f != "name" && f != "generateName" => {
            Some((*offset, format!("undefined field '{f}'")))
        }
        _ => None,
    }
}

/// The errors and warnings of evaluating validation rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleOutcome {
    /// Failed rules, as kube-apiserver reports them.
    pub errors: Vec<FieldError>,
    /// Failed rules on values unchanged since the old object (ratcheted), as warning texts.
    pub warnings: Vec<String>,
}

/// Evaluates every validation rule of `schema` on `object`; `old` is the stored object on
/// update.
pub fn validate_rules(schema: &Structural, object: &Value, old: Option<&Value>) -> RuleOutcome {
    let mut out = RuleOutcome::default();
    walk(schema, object, old, "", true, &mut out, 0);
    out
}

/// `spec.x` + `.a.b` → `spec.x.a.b` (`fieldPath` relative to the node).
fn with_field_path(path: &str, field_path: &str) -> String {
    let rel = field_path.trim_start_matches('.');
    let rel = rel.replace("['", "[").replace("']", "]");
    if rel.is_empty() {
        path.to_string()
    } else if path.is_empty() || rel.starts_with('[') {
        format!("{path}{rel}")
    } else {
        format!("{path}.{rel}")
    }
}

fn error_path(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_string()
    } else {
        path.to_string()
    }
}

/// `fieldErrorForReason`.
fn for_reason(reason: Option<&str>, path: &str, ty: &str, detail: String) -> FieldError {
    let path = error_path(path);
    match reason {
        Some("FieldValueForbidden") => FieldError::forbidden(path, detail),
        Some("FieldValueRequired") => FieldError::required(path, detail),
        Some("FieldValueDuplicate") => FieldError::duplicate(path, json!(ty)),
        _ => FieldError::invalid(path, json!(ty), detail),
    }
}

fn walk(
    s: &Structural,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    resource: bool,
    out: &mut RuleOutcome,
    depth: usize,
) {
    if v.is_null() || depth > MAX_VALUE_DEPTH {
        return;
    }
    if !s.validations.is_empty() {
        node_rules(s, v, old, path, resource, out);
    }
    match v {
        Value::Array(items) => {
            let Some(is) = s.items.as_deref() else {
                return;
            };
            let olds = old.and_then(Value::as_array);
            for (i, item) in items.iter().enumerate() {
                let old_item = olds.and_then(|o| correlate(s, item, o));
                let p = field::index(path, i);
                walk(is, item, old_item, &p, is.embedded_resource, out, depth + 1);
            }
        }
        Value::Object(obj) => {
            let olds = old
                .and_then(Value::as_object)
                .filter(|_| matches!(s.map_type.as_deref(), None | Some("granular" | "atomic")));
            for (k, child) in obj {
                let (sub, p) = match s.properties.get(k) {
                    Some(p) => (p, field::child(path, k)),
                    None => match &s.additional_properties {
                        Some(AdditionalProperties::Schema(a)) => (&**a, field::key(path, k)),
                        _ => continue,
                    },
                };
                if resource && k == "metadata" {
                    continue;
                }
                let old_child = olds.and_then(|o| o.get(k));
                walk(
                    sub,
                    child,
                    old_child,
                    &p,
                    sub.embedded_resource,
                    out,
                    depth + 1,
                );
            }
        }
        _ => {}
    }
}

/// The old item a new list item correlates with: by key in a `map` list, none otherwise.
fn correlate<'a>(s: &Structural, item: &Value, olds: &'a [Value]) -> Option<&'a Value> {
    if s.list_type.as_deref() != Some("map") || s.list_map_keys.is_empty() {
        return None;
    }
    let key = |v: &Value| -> Option<Vec<Value>> {
        let obj: &Map<String, Value> = v.as_object()?;
        Some(
            s.list_map_keys
                .iter()
                .map(|k| obj.get(k).cloned().unwrap_or(Value::Null))
                .collect(),
        )
    };
    let wanted = key(item)?;
    olds.iter().find(|o| key(o).as_ref() == Some(&wanted))
}

fn node_rules(
    s: &Structural,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    resource: bool,
    out: &mut RuleOutcome,
) {
    let ty = s.type_.as_deref().unwrap_or("");
    let this = value::to_cel(Some(s), v, resource);
    let old_cel = old.map(|o| value::to_cel(Some(s), o, resource));
    let unchanged = old.is_some_and(|o| o == v);
    for rule in &s.validations {
        let program = match &rule.compiled.rule {
            Ok(p) => p,
            Err(e) => {
                out.errors.push(FieldError::invalid(
                    error_path(path),
                    json!(ty),
                    format!("rule compile error: compilation failed: {e}"),
                ));
                continue;
            }
        };
        let transition = program.uses("oldSelf");
        let optional = rule.optional_old_self == Some(true);
        if transition && old_cel.is_none() && !optional {
            continue;
        }
        let old_binding = if optional {
            mni_cel::optional(old_cel.clone())
        } else {
            old_cel.clone().unwrap_or(mni_cel::Value::Null)
        };
        let vars = [("self", &this), ("oldSelf", &old_binding)];
        let error = match program.evaluate(&vars) {
            Ok(mni_cel::Value::Bool(true)) => continue,
            Ok(_) => {
                let at = with_field_path(path, &rule.field_path);
                message_error(rule, &vars, &at, path, ty)
            }
            Err(e) => {
                let detail = if e.to_string().starts_with("no such overload") {
                    format!(
                        "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule.error_string()
                    )
                } else {
                    format!("{e} evaluating rule: {}", rule.error_string())
                };
                FieldError::invalid(error_path(path), json!(ty), detail)
            }
        };
        if !transition && unchanged {
            out.warnings.push(error.to_string());
        } else {
            out.errors.push(error);
        }
    }
}

/// The error of a failed rule: its `messageExpression`, else `message`, else the rule.
fn message_error(
    rule: &ValidationRule,
    vars: &[(&str, &mni_cel::Value)],
    at: &str,
    node_path: &str,
    ty: &str,
) -> FieldError {
    let reason = rule.reason.as_deref();
    let Some(compiled) = &rule.compiled.message else {
        return for_reason(reason, at, ty, rule.default_message());
    };
    match compiled.as_ref().map(|p| p.evaluate(vars)) {
        Ok(Ok(mni_cel::Value::String(m))) => {
            if m.trim().is_empty() || m.contains('\n') || m.len() > 5000 {
                for_reason(reason, at, ty, rule.default_message())
            } else {
                for_reason(reason, at, ty, m.to_string())
            }
        }
        Ok(Ok(_)) => FieldError::invalid(
            error_path(node_path),
            json!(ty),
            "messageExpression must evaluate to a string",
        ),
        _ => for_reason(reason, at, ty, rule.default_message()),
    }
}

/// Validation errors that stop rules from running (`hasBlockingErr`): a wrong type, a
/// missing required field, an unsupported enum value, too long or too many. Returns the error
/// kube-apiserver reports instead of the rules' results.
pub fn blocking_error(errors: &[FieldError]) -> Option<FieldError> {
    use FieldErrorKind as K;
    errors
        .iter()
        .any(|e| {
            matches!(
                e.kind,
                K::NotSupported | K::Required | K::TooLong | K::TooMany | K::TypeInvalid
            )
        })
        .then(|| {
            FieldError::invalid(
                "<nil>",
                json!("null"),
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            )
        })
}

#[cfg(test)]
mod tests;
