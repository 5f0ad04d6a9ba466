//! Defaulting and validation of the webhook configurations when they are written, as
//! kube-apiserver's `admissionregistration` defaults and `ValidateWebhookConfiguration`: a
//! configuration that would only fail when a request matches it (a bad URL, a CEL expression
//! that does not compile, an unknown enum value) is refused at once with the field named.

use mni_apimachinery::FieldError;
use serde_json::{Value, json};

/// Upstream's defaults: `failurePolicy: Fail`, `matchPolicy: Equivalent`, empty selectors,
/// `timeoutSeconds: 10`, `scope: "*"`, service `port: 443`, and for mutating webhooks
/// `reinvocationPolicy: Never`.
pub(crate) fn default_configuration(obj: &mut Value, mutating: bool) {
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for w in hooks.iter_mut().filter_map(Value::as_object_mut) {
        let mut set = |k: &str, v: Value| {
            w.entry(k).or_insert(v);
        };
        set("failurePolicy", json!("Fail"));
        set("matchPolicy", json!("Equivalent"));
        set("namespaceSelector", json!({}));
        set("objectSelector", json!({}));
        set("timeoutSeconds", json!(10));
        if mutating {
            set("reinvocationPolicy", json!("Never"));
        }
        for r in w
            .get_mut("rules")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            r.entry("scope").or_insert(json!("*"));
        }
        if let Some(svc) = w
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            svc.entry("port").or_insert(json!(443));
        }
    }
}

/// The field errors of a Validating- or MutatingWebhookConfiguration.
pub(crate) fn validate_configuration(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = Vec::new();
    for (i, w) in obj["webhooks"].as_array().into_iter().flatten().enumerate() {
        let at = format!("webhooks[{i}]");
        let name = w["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errs.push(FieldError::required(format!("{at}.name"), ""));
        } else if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{at}.name"), json!(name)));
        } else {
            let mut msgs = mni_apimachinery::is_dns1123_subdomain(name);
            if msgs.is_empty() && name.split('.').count() < 3 {
                msgs.push(
                    "should be a domain with at least three segments separated by dots".into(),
                );
            }
            for m in msgs {
                errs.push(FieldError::invalid(format!("{at}.name"), json!(name), m));
            }
        }
        names.push(name);
        for (j, r) in w["rules"].as_array().into_iter().flatten().enumerate() {
            rule(r, &format!("{at}.rules[{j}]"), &mut errs);
        }
        one_of(w, &at, "failurePolicy", &["Fail", "Ignore"], &mut errs);
        one_of(w, &at, "matchPolicy", &["Equivalent", "Exact"], &mut errs);
        one_of(
            w,
            &at,
            "reinvocationPolicy",
            &["IfNeeded", "Never"],
            &mut errs,
        );
        // kube-apiserver refuses `Some` and `Unknown` on create in v1; they are accepted
        // here so that configurations written for older clusters keep working and their
        // dry-run refusal can be tested.
        match w["sideEffects"].as_str() {
            None => errs.push(FieldError::required(format!("{at}.sideEffects"), "")),
            Some(_) => one_of(
                w,
                &at,
                "sideEffects",
                &["None", "NoneOnDryRun", "Some", "Unknown"],
                &mut errs,
            ),
        }
        let versions: Vec<&str> = w["admissionReviewVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !versions.iter().any(|v| *v == "v1" || *v == "v1beta1") {
            errs.push(FieldError::invalid(
                format!("{at}.admissionReviewVersions"),
                json!(versions),
                "must include at least one of v1, v1beta1",
            ));
        }
        if let Some(t) = w["timeoutSeconds"].as_i64()
            && !(1..=30).contains(&t)
        {
            errs.push(FieldError::invalid(
                format!("{at}.timeoutSeconds"),
                json!(t),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
        for selector in ["namespaceSelector", "objectSelector"] {
            if let Some(s) = w.get(selector).filter(|s| !s.is_null())
                && let Err(e) = mni_apimachinery::Selector::from_label_selector(s)
            {
                errs.push(FieldError::invalid(
                    format!("{at}.{selector}"),
                    s.clone(),
                    e.to_string(),
                ));
            }
        }
        client_config(&w["clientConfig"], &format!("{at}.clientConfig"), &mut errs);
        match_conditions(
            &w["matchConditions"],
            &format!("{at}.matchConditions"),
            &["object", "oldObject", "request", "authorizer"],
            &mut errs,
        );
    }
    errs
}

/// Validates `matchConditions` at `at`: each named, each expression compiling with
/// `variables`.
pub(crate) fn match_conditions(
    conditions: &Value,
    at: &str,
    variables: &[&str],
    errs: &mut Vec<FieldError>,
) {
    let env = mni_cel::Env::kubernetes();
    for (j, c) in conditions.as_array().into_iter().flatten().enumerate() {
        let path = format!("{at}[{j}]");
        if c["name"].as_str().is_none_or(str::is_empty) {
            errs.push(FieldError::required(format!("{path}.name"), ""));
        }
        expression(
            &env,
            &c["expression"],
            &format!("{path}.expression"),
            variables,
            true,
            errs,
        );
    }
}

/// Validates a required CEL expression at `at`: present and compiling with `variables`.
pub(crate) fn expression(
    env: &mni_cel::Env,
    expr: &Value,
    at: &str,
    variables: &[&str],
    bool_result: bool,
    errs: &mut Vec<FieldError>,
) {
    let expr = expr.as_str().unwrap_or_default();
    if expr.is_empty() {
        errs.push(FieldError::required(at.to_string(), ""));
    } else if let Err(e) = env.compile(expr, variables, bool_result) {
        errs.push(FieldError::invalid(
            at.to_string(),
            json!(expr),
            format!("compilation failed: {e}"),
        ));
    }
}

/// An enum field `field` of `w`: absent, or one of `allowed`.
pub(crate) fn one_of(
    w: &Value,
    at: &str,
    field: &str,
    allowed: &[&str],
    errs: &mut Vec<FieldError>,
) {
    if let Some(v) = w[field].as_str()
        && !allowed.contains(&v)
    {
        errs.push(FieldError::not_supported(
            format!("{at}.{field}"),
            json!(v),
            allowed,
        ));
    }
}

/// One of `rules` (or a policy's `resourceRules`) at `at`.
pub(crate) fn rule(r: &Value, at: &str, errs: &mut Vec<FieldError>) {
    for field in ["operations", "apiGroups", "apiVersions", "resources"] {
        if r[field].as_array().is_none_or(Vec::is_empty) {
            errs.push(FieldError::required(format!("{at}.{field}"), ""));
        }
    }
    const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
    for (k, op) in r["operations"].as_array().into_iter().flatten().enumerate() {
        let op = op.as_str().unwrap_or_default();
        if !OPERATIONS.contains(&op) {
            errs.push(FieldError::not_supported(
                format!("{at}.operations[{k}]"),
                json!(op),
                OPERATIONS,
            ));
        }
    }
    one_of(r, at, "scope", &["*", "Cluster", "Namespaced"], errs);
}

fn client_config(c: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let url = c["url"].as_str();
    let service = c.get("service").filter(|s| !s.is_null());
    match (url, service) {
        (Some(_), Some(_)) | (None, None) => errs.push(FieldError::required(
            at.to_string(),
            "exactly one of url or service is required",
        )),
        (Some(u), None) => match u.parse::<http::Uri>() {
            Ok(uri) if uri.scheme_str() != Some("https") => errs.push(FieldError::invalid(
                format!("{at}.url"),
                json!(u),
                "'https' is the only allowed URL scheme",
            )),
            Ok(uri) if uri.host().is_none_or(str::is_empty) => errs.push(FieldError::invalid(
                format!("{at}.url"),
                json!(u),
                "host must be specified",
            )),
            Ok(_) => {}
            Err(e) => errs.push(FieldError::invalid(
                format!("{at}.url"),
                json!(u),
                format!("url must be a valid URL: {e}"),
            )),
        },
        (None, Some(s)) => {
            for field in ["name", "namespace"] {
                if s[field].as_str().is_none_or(str::is_empty) {
                    errs.push(FieldError::required(format!("{at}.service.{field}"), ""));
                }
            }
            if let Some(p) = s["path"].as_str()
                && !p.starts_with('/')
            {
                errs.push(FieldError::invalid(
                    format!("{at}.service.path"),
                    json!(p),
                    "must start with a '/'",
                ));
            }
            if let Some(p) = s["port"].as_i64()
                && !(1..=65535).contains(&p)
            {
                errs.push(FieldError::invalid(
                    format!("{at}.service.port"),
                    json!(p),
                    "port is not valid: must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(webhook: Value, expected: &[&str]) {
        let mut obj = json!({"webhooks": [webhook]});
        default_configuration(&mut obj, true);
        let got: Vec<String> = validate_configuration(&obj)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(got.len(), expected.len(), "{got:#?}");
        for (g, e) in got.iter().zip(expected) {
            assert!(g.contains(e), "{g} should contain {e}");
        }
    }

    fn good() -> Value {
        json!({
            "name": "a.example.com",
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })
    }

    #[test]
    fn defaults_are_upstreams() {
        let mut obj = json!({"webhooks": [good()]});
        default_configuration(&mut obj, true);
        let w = &obj["webhooks"][0];
        assert_eq!(w["failurePolicy"], "Fail");
        assert_eq!(w["timeoutSeconds"], 10);
        assert_eq!(w["reinvocationPolicy"], "Never");
        assert_eq!(w["rules"][0]["scope"], "*");
        assert_eq!(w["clientConfig"]["service"]["port"], 443);
        check(good(), &[]);
    }

    #[test]
    fn bad_fields_are_named() {
        let mut w = good();
        w["name"] = json!("short.name");
        w["timeoutSeconds"] = json!(31);
        w["clientConfig"] = json!({"url": "http://x/"});
        w["matchConditions"] = json!([{"name": "c", "expression": "object.("}]);
        w["failurePolicy"] = json!("Sometimes");
        check(
            w,
            &[
                "webhooks[0].name: Invalid value: \"short.name\": should be a domain with at least three segments",
                "webhooks[0].failurePolicy: Unsupported value: \"Sometimes\"",
                "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
                "webhooks[0].clientConfig.url: Invalid value: \"http://x/\": 'https' is the only allowed URL scheme",
                "webhooks[0].matchConditions[0].expression: Invalid value: \"object.(\": compilation failed: ERROR: <input>",
            ],
        );
    }
}
