//! Computed, create-only endpoints: access reviews (`kubectl auth can-i`), rules reviews,
//! token reviews, `kubectl auth whoami`, and the ServiceAccount TokenRequest subresource
//! (`kubectl create token`). Nothing here is stored. Bodies are decoded as for create: their
//! `apiVersion` and `kind` default to the path's (`TokenRequest` for the token subresource).

use http::{HeaderMap, Method};
use mni_rbac::{Attributes, UserInfo};
use serde_json::{Value, json};

use super::{Reply, decode_object};
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::request::Target;
use crate::state::State;
use crate::typemeta::BodyKind;

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn user_json(u: &UserInfo) -> Value {
    let mut v = json!({"username": u.name, "groups": u.groups});
    if !u.uid.is_empty() {
        v["uid"] = json!(u.uid);
    }
    if !u.extra.is_empty() {
        v["extra"] = json!(u.extra);
    }
    v
}

/// The attributes a review's `spec` asks about, for `user`.
fn review_attributes(
    user: UserInfo,
    spec: &Value,
    namespace: Option<&str>,
) -> ApiResult<Attributes> {
    if let Some(r) = spec.get("resourceAttributes").filter(|r| r.is_object()) {
        let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        let mut a =
            Attributes::resource(user, s("verb"), s("group"), s("resource")).version(s("version"));
        let ns = namespace
            .map(str::to_string)
            .unwrap_or_else(|| s("namespace"));
        if !ns.is_empty() {
            a = a.in_namespace(ns);
        }
        if !s("subresource").is_empty() {
            a = a.subresource(s("subresource"));
        }
        if !s("name").is_empty() {
            a = a.named(s("name"));
        }
        return Ok(a);
    }
    if let Some(n) = spec.get("nonResourceAttributes").filter(|r| r.is_object()) {
        return Ok(Attributes::non_resource(
            user,
            n["verb"].as_str().unwrap_or_default(),
            n["path"].as_str().unwrap_or_default(),
        ));
    }
    Err(ApiError::new(
        422,
        "Invalid",
        "spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
    ))
}

/// Answers the request when it targets a computed endpoint; `None` otherwise.
pub(crate) async fn handle(
    state: &State,
    target: &Target,
    method: &Method,
    user: &UserInfo,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiResult<Option<Reply>> {
    let info = &target.info;
    let token_request = info.group.is_empty()
        && info.plural == "serviceaccounts"
        && target.subresource.as_deref() == Some("token");
    let review = info.verbs == ["create"];
    if !token_request && !review {
        return Ok(None);
    }
    if method != Method::POST {
        return Err(ApiError::method_not_allowed(method.as_str(), &info.plural));
    }
    let want = if token_request {
        BodyKind::typed("authentication.k8s.io", "v1", "TokenRequest")
    } else {
        BodyKind::of(info)
    };
    let mut obj = decode_object(state, &want, headers, body)?;
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = if token_request {
        let ns = target.namespace.as_deref().unwrap_or_default();
        let name = target.name.as_deref().unwrap_or_default();
        let sa = state
            .stored(&format!("/registry/core/serviceaccounts/{ns}/{name}"))
            .ok_or_else(|| ApiError::not_found(info.group_resource(), name))
            .and_then(|kv| object::from_stored(&kv))?;
        let seconds = spec["expirationSeconds"].as_i64().unwrap_or(3600);
        if seconds < 600 {
            return Err(ApiError::new(
                422,
                "Invalid",
                "spec.expirationSeconds: Invalid value: may not specify a duration less than 10 minutes",
            ));
        }
        let uid = object::meta_str(&sa, "uid").unwrap_or_default();
        let (token, exp) =
            state
                .authn()
                .issue(ns, name, uid, seconds, &strings(&spec["audiences"]));
        let when = jiff::Timestamp::from_second(exp)
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_default();
        obj["apiVersion"] = json!("authentication.k8s.io/v1");
        obj["kind"] = json!("TokenRequest");
        obj["metadata"] =
            json!({"name": name, "namespace": ns, "creationTimestamp": object::now()});
        obj["spec"]["expirationSeconds"] = json!(seconds);
        if obj["spec"].get("audiences").is_none() {
            obj["spec"]["audiences"] = json!(["https://kubernetes.default.svc"]);
        }
        json!({"token": token, "expirationTimestamp": when})
    } else {
        match info.kind.as_str() {
            "SelfSubjectAccessReview" => {
                let attrs = review_attributes(user.clone(), &spec, None)?;
                access(state, &attrs)?
            }
            "SubjectAccessReview" | "LocalSubjectAccessReview" => {
                let mut u = UserInfo::new(
                    spec["user"].as_str().unwrap_or_default(),
                    strings(&spec["groups"]),
                );
                u.uid = spec["uid"].as_str().unwrap_or_default().to_string();
                let attrs = review_attributes(u, &spec, target.namespace.as_deref())?;
                access(state, &attrs)?
            }
            "SelfSubjectRulesReview" => {
                let ns = spec["namespace"].as_str().unwrap_or_default();
                if mni_rbac::is_superuser(user) {
                    json!({"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": false})
                } else {
                    state.authorizer()?.rules_for(user, ns).to_status()
                }
            }
            "TokenReview" => {
                let token = spec["token"].as_str().unwrap_or_default();
                let mut h = HeaderMap::new();
                let authenticated = http::HeaderValue::from_str(&format!("Bearer {token}"))
                    .ok()
                    .and_then(|v| {
                        h.insert(http::header::AUTHORIZATION, v);
                        state.authenticate(&h, "/apis").ok()
                    });
                match authenticated {
                    Some(u) => {
                        json!({"authenticated": true, "user": user_json(&u), "audiences": ["https://kubernetes.default.svc"]})
                    }
                    None => json!({"authenticated": false, "error": "invalid bearer token"}),
                }
            }
            "SelfSubjectReview" => json!({"userInfo": user_json(user)}),
            other => return Err(ApiError::method_not_allowed("POST", other)),
        }
    };
    obj["status"] = status;
    if obj.get("metadata").is_none() {
        obj["metadata"] = json!({"creationTimestamp": null});
    }
    Ok(Some(Reply {
        code: 201,
        body: obj,
        warnings: Vec::new(),
    }))
}

fn access(state: &State, attrs: &Attributes) -> ApiResult<Value> {
    if mni_rbac::is_superuser(&attrs.user) {
        return Ok(json!({"allowed": true}));
    }
    let decision = state.authorizer()?.authorize(attrs);
    Ok(mni_rbac::access_review_status(&decision))
}
