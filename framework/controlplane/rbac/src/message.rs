//! The messages of 403 Forbidden responses, word for word as kube-apiserver writes them.
//!
//! [`forbidden_message`] is the error text of the authorization filter:
//!
//! ```text
//! User "system:serviceaccount:ns:sa" cannot list resource "secrets" in API group "" in the namespace "ns"
//! User "alice" cannot get resource "nodes" in API group "" at the cluster scope
//! User "alice" cannot update resource "deployments/status" in API group "apps" in the namespace "ns"
//! User "alice" cannot get path "/metrics"
//! ```
//!
//! followed by `: <reason>` when the authorizer gave one. [`forbidden_status_message`] wraps it
//! the way `apierrors.NewForbidden` does for the `Status.message` of the response
//! (`secrets is forbidden: User …`), and [`forbidden_status`] builds that whole `Status`.

use serde_json::{Value, json};

use crate::attributes::Attributes;

pub use mni_apimachinery::go_quote;

/// Replaces `&`, `<` and `>` with HTML entities, as kube does to Forbidden messages so that
/// they never look like HTML.
fn sanitize(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The Forbidden error text for `attrs`, with `: <reason>` appended when `reason` is not empty.
pub fn forbidden_message(attrs: &Attributes, reason: &str) -> String {
    let user = go_quote(&attrs.user.name);
    let verb = &attrs.verb;
    let msg = if !attrs.resource_request {
        format!("User {user} cannot {verb} path {}", go_quote(&attrs.path))
    } else {
        let resource = if attrs.subresource.is_empty() {
            attrs.resource.clone()
        } else {
            format!("{}/{}", attrs.resource, attrs.subresource)
        };
        let scope = if attrs.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace {}", go_quote(&attrs.namespace))
        };
        format!(
            "User {user} cannot {verb} resource {} in API group {} {scope}",
            go_quote(&resource),
            go_quote(&attrs.api_group)
        )
    };
    let msg = sanitize(&msg);
    if reason.is_empty() {
        msg
    } else {
        format!("{msg}: {reason}")
    }
}

/// The `Status.message` of the 403 response, as `apierrors.NewForbidden` words it:
/// `<resource>[.<group>] ["<name>" ]is forbidden: <forbidden_message>`, or
/// `forbidden: <forbidden_message>` for non-resource requests.
pub fn forbidden_status_message(attrs: &Attributes, reason: &str) -> String {
    let err = forbidden_message(attrs, reason);
    let qualified = qualified_resource(attrs);
    if qualified.is_empty() {
        format!("forbidden: {err}")
    } else if attrs.name.is_empty() {
        format!("{qualified} is forbidden: {err}")
    } else {
        format!("{qualified} {} is forbidden: {err}", go_quote(&attrs.name))
    }
}

/// The whole `v1.Status` object of the 403 response.
pub fn forbidden_status(attrs: &Attributes, reason: &str) -> Value {
    let mut details = serde_json::Map::new();
    if !attrs.name.is_empty() {
        details.insert("name".into(), Value::String(attrs.name.clone()));
    }
    if !attrs.api_group.is_empty() {
        details.insert("group".into(), Value::String(attrs.api_group.clone()));
    }
    if !attrs.resource.is_empty() {
        details.insert("kind".into(), Value::String(attrs.resource.clone()));
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": forbidden_status_message(attrs, reason),
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    })
}

/// `resource.group`, `resource` for the core group, empty for non-resource requests.
fn qualified_resource(attrs: &Attributes) -> String {
    if !attrs.resource_request {
        return String::new();
    }
    if attrs.api_group.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}.{}", attrs.resource, attrs.api_group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attributes::UserInfo;

    #[test]
    fn go_quote_escapes_like_strconv_quote() {
        assert_eq!(go_quote("plain"), "\"plain\"");
        assert_eq!(go_quote(""), "\"\"");
        assert_eq!(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(go_quote("tab\there\n"), "\"tab\\there\\n\"");
        assert_eq!(go_quote("\u{1}\u{7f}"), "\"\\x01\\x7f\"");
        assert_eq!(go_quote("é\u{85}\u{2028}"), "\"é\\u0085\\u2028\"");
    }

    #[test]
    fn html_is_sanitised_but_the_reason_is_not() {
        let a = Attributes::non_resource(UserInfo::new("<b>&", Vec::<String>::new()), "get", "/x");
        assert_eq!(
            forbidden_message(&a, "<r>"),
            "User \"&lt;b&gt;&amp;\" cannot get path \"/x\": <r>"
        );
    }

    #[test]
    fn status_message_qualifies_the_resource() {
        let u = UserInfo::new("u", Vec::<String>::new());
        let a = Attributes::resource(u.clone(), "get", "apps", "deployments")
            .in_namespace("ns")
            .named("d");
        assert_eq!(
            forbidden_status_message(&a, ""),
            "deployments.apps \"d\" is forbidden: User \"u\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"ns\""
        );
        let s = forbidden_status(&a, "");
        assert_eq!(s["code"], 403);
        assert_eq!(
            s["details"],
            json!({"name": "d", "group": "apps", "kind": "deployments"})
        );
        let n = Attributes::non_resource(u, "get", "/metrics");
        assert_eq!(
            forbidden_status_message(&n, ""),
            "forbidden: User \"u\" cannot get path \"/metrics\""
        );
    }
}
