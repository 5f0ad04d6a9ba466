//! Defaulting and validation of ValidatingAdmissionPolicies and their bindings when they are
//! written, as kube-apiserver's `admissionregistration` defaults and validation: an
//! expression that does not compile, an unknown enum value or a missing field is refused at
//! once with the field named. A policy that passes gets its `status` here too (see
//! `typecheck`), since this server has no separate type-checking controller.

use mni_apimachinery::FieldError;
use serde_json::{Value, json};

use super::{CONDITION_VARIABLES, VARIABLES, typecheck};
use crate::registry::Registry;
use crate::webhooks::{expression, match_conditions, one_of, rule};

/// Upstream's defaults for `matchConstraints` and a binding's `matchResources`:
/// `matchPolicy: Equivalent`, empty selectors, `scope: "*"` on every rule.
fn default_match(m: Option<&mut Value>) {
    let Some(m) = m.and_then(Value::as_object_mut) else {
        return;
    };
    m.entry("matchPolicy").or_insert(json!("Equivalent"));
    m.entry("namespaceSelector").or_insert(json!({}));
    m.entry("objectSelector").or_insert(json!({}));
    for list in ["resourceRules", "excludeResourceRules"] {
        for r in m
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            r.entry("scope").or_insert(json!("*"));
        }
    }
}

/// Defaults a ValidatingAdmissionPolicy: `failurePolicy: Fail` and `matchConstraints`.
pub(crate) fn default_policy(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.entry("failurePolicy").or_insert(json!("Fail"));
    default_match(spec.get_mut("matchConstraints"));
}

/// Defaults a ValidatingAdmissionPolicyBinding's `matchResources`.
pub(crate) fn default_binding(obj: &mut Value) {
    default_match(obj.pointer_mut("/spec/matchResources"));
}

fn match_resources(m: &Value, at: &str, errs: &mut Vec<FieldError>) {
    for list in ["resourceRules", "excludeResourceRules"] {
        for (i, r) in m[list].as_array().into_iter().flatten().enumerate() {
            rule(r, &format!("{at}.{list}[{i}]"), errs);
        }
    }
    one_of(m, at, "matchPolicy", &["Equivalent", "Exact"], errs);
    for selector in ["namespaceSelector", "objectSelector"] {
        if let Some(s) = m.get(selector).filter(|s| !s.is_null())
            && let Err(e) = mni_apimachinery::Selector::from_label_selector(s)
        {
            errs.push(FieldError::invalid(
                format!("{at}.{selector}"),
                s.clone(),
                e.to_string(),
            ));
        }
    }
}

/// The field errors of a ValidatingAdmissionPolicy.
pub(crate) fn validate_policy(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let env = mni_cel::Env::kubernetes();
    let spec = &obj["spec"];
    let constraints = &spec["matchConstraints"];
    if constraints.is_null() {
        errs.push(FieldError::required("spec.matchConstraints", ""));
    } else {
        if constraints["resourceRules"]
            .as_array()
            .is_none_or(Vec::is_empty)
        {
            errs.push(FieldError::required(
                "spec.matchConstraints.resourceRules",
                "",
            ));
        }
        match_resources(constraints, "spec.matchConstraints", &mut errs);
    }
    one_of(
        spec,
        "spec",
        "failurePolicy",
        &["Fail", "Ignore"],
        &mut errs,
    );
    if let Some(kind) = spec.get("paramKind").filter(|k| !k.is_null()) {
        for field in ["apiVersion", "kind"] {
            if kind[field].as_str().is_none_or(str::is_empty) {
                errs.push(FieldError::required(format!("spec.paramKind.{field}"), ""));
            }
        }
    }
    let validations = spec["validations"].as_array();
    let audits = spec["auditAnnotations"].as_array();
    if validations.is_none_or(Vec::is_empty) && audits.is_none_or(Vec::is_empty) {
        errs.push(FieldError::required(
            "spec.validations",
            "validations or auditAnnotations must contain at least one item",
        ));
    }
    for (i, v) in validations.into_iter().flatten().enumerate() {
        let at = format!("spec.validations[{i}]");
        expression(
            &env,
            &v["expression"],
            &format!("{at}.expression"),
            VARIABLES,
            true,
            &mut errs,
        );
        if let Some(m) = v.get("messageExpression").filter(|m| !m.is_null()) {
            expression(
                &env,
                m,
                &format!("{at}.messageExpression"),
                VARIABLES,
                false,
                &mut errs,
            );
        }
        one_of(
            v,
            &at,
            "reason",
            &[
                "Unauthorized",
                "Forbidden",
                "Invalid",
                "RequestEntityTooLarge",
            ],
            &mut errs,
        );
    }
    for (i, a) in audits.into_iter().flatten().enumerate() {
        let at = format!("spec.auditAnnotations[{i}]");
        if a["key"].as_str().is_none_or(str::is_empty) {
            errs.push(FieldError::required(format!("{at}.key"), ""));
        }
        expression(
            &env,
            &a["valueExpression"],
            &format!("{at}.valueExpression"),
            VARIABLES,
            false,
            &mut errs,
        );
    }
    let mut names = Vec::new();
    for (i, v) in spec["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("spec.variables[{i}]");
        let name = v["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        } else if !is_identifier(name) {
            errs.push(FieldError::invalid(
                format!("{at}.name"),
                json!(name),
                "name is not a valid CEL identifier",
            ));
        } else if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{at}.name"), json!(name)));
        }
        names.push(name);
        expression(
            &env,
            &v["expression"],
            &format!("{at}.expression"),
            VARIABLES,
            false,
            &mut errs,
        );
    }
    match_conditions(
        &spec["matchConditions"],
        "spec.matchConditions",
        CONDITION_VARIABLES,
        &mut errs,
    );
    errs
}

/// A CEL identifier: a letter or `_`, then letters, digits or `_`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The field errors of a ValidatingAdmissionPolicyBinding.
pub(crate) fn validate_binding(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj["spec"];
    if spec["policyName"].as_str().is_none_or(str::is_empty) {
        errs.push(FieldError::required("spec.policyName", ""));
    }
    const ACTIONS: &[&str] = &["Deny", "Warn", "Audit"];
    let actions: Vec<&str> = spec["validationActions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if actions.is_empty() {
        errs.push(FieldError::required("spec.validationActions", ""));
    }
    for (i, a) in actions.iter().enumerate() {
        let at = format!("spec.validationActions[{i}]");
        if !ACTIONS.contains(a) {
            errs.push(FieldError::not_supported(at, json!(a), ACTIONS));
        } else if actions[..i].contains(a) {
            errs.push(FieldError::duplicate(at, json!(a)));
        }
    }
    if actions.contains(&"Deny") && actions.contains(&"Warn") {
        errs.push(FieldError::invalid(
            "spec.validationActions",
            json!(actions),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if let Some(r) = spec.get("paramRef").filter(|r| !r.is_null()) {
        let named = r["name"].as_str().is_some_and(|n| !n.is_empty());
        let selected = r.get("selector").is_some_and(|s| !s.is_null());
        match (named, selected) {
            (true, true) => errs.push(FieldError::forbidden(
                "spec.paramRef.name",
                "name and selector are mutually exclusive",
            )),
            (false, false) => errs.push(FieldError::required(
                "spec.paramRef",
                "one of name or selector must be specified",
            )),
            _ => {}
        }
        if r["parameterNotFoundAction"].is_null() {
            errs.push(FieldError::required(
                "spec.paramRef.parameterNotFoundAction",
                "",
            ));
        }
        one_of(
            r,
            "spec.paramRef",
            "parameterNotFoundAction",
            &["Allow", "Deny"],
            &mut errs,
        );
    }
    if let Some(m) = spec.get("matchResources").filter(|m| !m.is_null()) {
        match_resources(m, "spec.matchResources", &mut errs);
    }
    errs
}

/// Sets a policy's `status` as upstream's type-checking controller writes it:
/// `observedGeneration` and `typeChecking.expressionWarnings` (one per expression that
/// selects a field the matched kinds or the `paramKind` do not have).
pub(crate) fn write_status(registry: &Registry, obj: &mut Value) {
    let warnings = typecheck::warnings(registry, obj);
    let mut type_checking = json!({});
    if !warnings.is_empty() {
        type_checking["expressionWarnings"] = Value::Array(
            warnings
                .into_iter()
                .map(|(field_ref, warning)| json!({"fieldRef": field_ref, "warning": warning}))
                .collect(),
        );
    }
    let generation = obj.pointer("/metadata/generation").cloned();
    if let Some(o) = obj.as_object_mut() {
        let mut status = json!({"typeChecking": type_checking});
        if let Some(g) = generation {
            status["observedGeneration"] = g;
        }
        o.insert("status".into(), status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(errs: Vec<FieldError>, expected: &[&str]) {
        let got: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(got.len(), expected.len(), "{got:#?}");
        for (g, e) in got.iter().zip(expected) {
            assert!(g.contains(e), "{g} should contain {e}");
        }
    }

    #[test]
    fn policies_are_defaulted_and_bad_fields_named() {
        let mut p = json!({"spec": {
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "object.x =="}, {"expression": "true", "reason": "Nope"}],
            "variables": [{"name": "1x", "expression": "1"}],
            "auditAnnotations": [{"key": "k", "valueExpression": "object.("}],
        }});
        default_policy(&mut p);
        assert_eq!(p["spec"]["failurePolicy"], "Fail");
        assert_eq!(
            p["spec"]["matchConstraints"]["resourceRules"][0]["scope"],
            "*"
        );
        check(
            validate_policy(&p),
            &[
                "spec.validations[0].expression: Invalid value: \"object.x ==\": compilation failed: ERROR: <input>",
                "spec.validations[1].reason: Unsupported value: \"Nope\"",
                "spec.auditAnnotations[0].valueExpression: Invalid value: \"object.(\": compilation failed",
                "spec.variables[0].name: Invalid value: \"1x\": name is not a valid CEL identifier",
            ],
        );
        check(
            validate_policy(&json!({"spec": {}})),
            &[
                "spec.matchConstraints: Required value",
                "spec.validations: Required value",
            ],
        );
    }

    #[test]
    fn bindings_need_a_policy_actions_and_a_complete_param_ref() {
        check(
            validate_binding(&json!({"spec": {
                "policyName": "p",
                "validationActions": ["Deny", "Warn"],
                "paramRef": {"name": "a", "selector": {}},
            }})),
            &[
                "spec.validationActions: Invalid value",
                "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.parameterNotFoundAction: Required value",
            ],
        );
        check(
            validate_binding(&json!({"spec": {"validationActions": ["Block"]}})),
            &[
                "spec.policyName: Required value",
                "spec.validationActions[0]: Unsupported value: \"Block\"",
            ],
        );
    }
}
