//! The type checking upstream's ValidatingAdmissionPolicy controller writes to
//! `status.typeChecking`: each expression is checked against the schema of every kind the
//! policy's `matchConstraints` name exactly (no wildcards) and of its `paramKind`, and a
//! field selection the schema does not declare (`object.spec.replicsa`) becomes a warning
//! such as `apps/v1, Kind=Deployment: ERROR: <input>:1:13: undefined field 'replicsa'`.
//!
//! cel-rust has no type checker, so only field selections are checked (as for CRD rules in
//! `mni-apimachinery`); type mismatches show up when the expression runs, where the failure
//! policy decides.

use serde_json::{Map, Value};

use super::VARIABLES;
use crate::registry::{Flavor, Registry, ResourceInfo};

/// A schema with the definitions its `$ref`s point into.
struct Schema {
    root: Value,
    definitions: Map<String, Value>,
}

impl Schema {
    /// The OpenAPI schema of a served kind: the generated one of a built-in kind, the
    /// `openAPIV3Schema` of a custom resource.
    fn of(info: &ResourceInfo) -> Option<Self> {
        match &info.flavor {
            Flavor::Builtin(b) => {
                let doc = (b.doc?)();
                let mni_openapi::KindSchema::Builtin(f) = doc.schema else {
                    return None;
                };
                let mut generator = schemars::SchemaGenerator::default();
                let root = f(&mut generator).to_value();
                Some(Schema {
                    root,
                    definitions: generator.take_definitions(false),
                })
            }
            Flavor::Custom(c) => Some(Schema {
                root: c.raw_schema.clone()?,
                definitions: Map::new(),
            }),
        }
    }

    fn resolve<'a>(&'a self, mut s: &'a Value) -> &'a Value {
        while let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or_default();
            match self.definitions.get(name) {
                Some(d) => s = d,
                None => break,
            }
        }
        s
    }

    /// The first selection in `fields` the schema does not declare, with its offset.
    fn undefined(&self, fields: &[(String, usize)]) -> Option<(usize, String)> {
        let mut cur = self.resolve(&self.root);
        for (i, (f, offset)) in fields.iter().enumerate() {
            let props = cur.get("properties").and_then(Value::as_object)?;
            match props.get(f) {
                Some(p) => cur = self.resolve(p),
                None if cur.get("additionalProperties").is_some()
                    || cur.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
                    // Every object has these, whatever its schema lists.
                    || (i == 0 && matches!(f.as_str(), "apiVersion" | "kind" | "metadata")) =>
                {
                    return None;
                }
                None => return Some((*offset, format!("undefined field '{f}'"))),
            }
        }
        None
    }
}

/// `group/version, Kind=kind`, as Go prints a GroupVersionKind.
fn gvk(info: &ResourceInfo) -> String {
    format!("{}/{}, Kind={}", info.group, info.version, info.kind)
}

/// The kinds a policy's `matchConstraints.resourceRules` name exactly.
fn matched_kinds(registry: &Registry, policy: &Value) -> Vec<std::sync::Arc<ResourceInfo>> {
    let mut out: Vec<std::sync::Arc<ResourceInfo>> = Vec::new();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    for r in policy
        .pointer("/spec/matchConstraints/resourceRules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for g in strings(&r["apiGroups"]) {
            for v in strings(&r["apiVersions"]) {
                for res in strings(&r["resources"]) {
                    if [&g, &v, &res].iter().any(|s| s.contains('*')) || res.contains('/') {
                        continue;
                    }
                    if let Some(info) = registry.get(&g, &v, &res)
                        && !out
                            .iter()
                            .any(|o| o.kind == info.kind && o.group == info.group)
                    {
                        out.push(info);
                    }
                }
            }
        }
    }
    out
}

/// The `paramKind`'s resource, when it is served.
fn param_kind(registry: &Registry, policy: &Value) -> Option<std::sync::Arc<ResourceInfo>> {
    let kind = policy.pointer("/spec/paramKind")?;
    let api_version = kind["apiVersion"].as_str()?;
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    registry.find_kind(group, version, kind["kind"].as_str()?)
}

/// The expressions of a policy with their field paths.
fn expressions(policy: &Value) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    let spec = &policy["spec"];
    for (i, v) in spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(e) = v["expression"].as_str() {
            out.push((format!("spec.validations[{i}].expression"), e.into(), true));
        }
        if let Some(e) = v["messageExpression"].as_str() {
            out.push((
                format!("spec.validations[{i}].messageExpression"),
                e.into(),
                false,
            ));
        }
    }
    for (i, v) in spec["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(e) = v["expression"].as_str() {
            out.push((format!("spec.variables[{i}].expression"), e.into(), false));
        }
    }
    out
}

/// `(fieldRef, warning)` for each expression that selects an undeclared field.
pub(super) fn warnings(registry: &Registry, policy: &Value) -> Vec<(String, String)> {
    let env = mni_cel::Env::kubernetes();
    let targets: Vec<(String, Schema)> = matched_kinds(registry, policy)
        .iter()
        .filter_map(|info| Some((gvk(info), Schema::of(info)?)))
        .collect();
    let params = param_kind(registry, policy).and_then(|info| Schema::of(&info));
    let mut out = Vec::new();
    for (field_ref, expr, bool_result) in expressions(policy) {
        let Ok(program) = env.compile(&expr, VARIABLES, bool_result) else {
            continue;
        };
        let selections = program.selections(&["object", "oldObject", "params"]);
        let issue = |schema: &Schema, variables: &[&str]| {
            selections
                .iter()
                .filter(|s| variables.contains(&s.variable.as_str()))
                .find_map(|s| schema.undefined(&s.fields))
                .map(|(offset, msg)| program.issue(offset, &msg).to_string())
        };
        let mut issues: Vec<String> = targets
            .iter()
            .filter_map(|(gvk, schema)| {
                let found = issue(schema, &["object", "oldObject"])
                    .or_else(|| params.as_ref().and_then(|p| issue(p, &["params"])))?;
                Some(format!("{gvk}: {found}"))
            })
            .collect();
        if targets.is_empty()
            && let Some(found) = params.as_ref().and_then(|p| issue(p, &["params"]))
        {
            issues.push(found);
        }
        if !issues.is_empty() {
            out.push((field_ref, issues.join("\n")));
        }
    }
    out
}
