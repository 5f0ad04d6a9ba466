//! The `apiVersion` and `kind` of request bodies, decoded as kube-apiserver decodes them.
//!
//! kube-apiserver decodes a create or update body with the group, version and kind of the
//! request path as defaults (`runtime.Decode` with a default GVK, `gvkWithDefaults`), so a
//! built-in object may leave out `apiVersion` and `kind`, as the official clients' models do.
//! A body that names another version of the kind is refused (`the API version in the data …`),
//! one that names another kind cannot be converted (`… cannot be handled as a …`).
//!
//! Custom resources are decoded into `Unstructured`, which ignores the defaults: their bodies
//! must carry `kind`, and a missing `apiVersion` is a version mismatch; a wrong `kind` in the
//! right version is left to validation (`kind: Invalid value`). Server-side apply takes no
//! defaults at all (the field manager's version check). DeleteOptions may be bare. Protobuf
//! bodies follow the same rules: an envelope with an empty `typeMeta` takes the path's
//! (`request::decode_body_as`), one that names another kind is refused here.

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::registry::{Flavor, Registry, ResourceInfo};

/// The group, version and kind a body is decoded as, from the request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BodyKind {
    /// API group, empty for core.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Decoded into a typed struct (built-in kinds), which takes the defaults; custom
    /// resources are decoded as `Unstructured`, which does not.
    pub typed: bool,
}

/// A group and version parsed from `apiVersion` (`schema.ParseGroupVersion`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct GroupVersion {
    group: String,
    version: String,
}

impl GroupVersion {
    /// Parses `apps/v1`, `v1` or the empty string; more than one `/` is an error.
    fn parse(api_version: &str) -> Result<Self, String> {
        let mut parts = api_version.split('/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(v), None, _) => Ok(GroupVersion {
                group: String::new(),
                version: v.to_string(),
            }),
            (Some(g), Some(v), None) => Ok(GroupVersion {
                group: g.to_string(),
                version: v.to_string(),
            }),
            _ => Err(format!("unexpected GroupVersion string: {api_version}")),
        }
    }

    /// `apps/v1`, or `v1` for the core group (`GroupVersion.String`).
    fn spell(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

impl BodyKind {
    /// The kind of the objects of `info`.
    pub(crate) fn of(info: &ResourceInfo) -> Self {
        BodyKind {
            group: info.group.clone(),
            version: info.version.clone(),
            kind: info.kind.clone(),
            typed: matches!(info.flavor, Flavor::Builtin(_)),
        }
    }

    /// `autoscaling/v1` `Scale`, the body of the `scale` subresource (typed, for custom
    /// resources too).
    pub(crate) fn scale() -> Self {
        Self::typed("autoscaling", "v1", "Scale")
    }

    /// A typed kind.
    pub(crate) fn typed(group: &str, version: &str, kind: &str) -> Self {
        BodyKind {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            typed: true,
        }
    }

    fn group_version(&self) -> GroupVersion {
        GroupVersion {
            group: self.group.clone(),
            version: self.version.clone(),
        }
    }

    /// `apps/v1`.
    pub(crate) fn api_version(&self) -> String {
        self.group_version().spell()
    }

    /// The Go package of the internal type a typed body is converted to (`core.ConfigMap`),
    /// for conversion errors.
    fn internal_package(&self) -> &str {
        match self.group.as_str() {
            "" | "events.k8s.io" => "core",
            g => g.split('.').next().unwrap_or(g),
        }
    }
}

/// Sets `apiVersion` and `kind` of a create or update body from `want` where absent, and
/// refuses a body of another kind or version, with kube-apiserver's messages. `registered`
/// tells whether the server knows a group, version and kind (the scheme's `Recognizes`);
/// `raw` is the body as sent, quoted by some messages.
pub(crate) fn decode_kind(
    want: &BodyKind,
    obj: &mut Value,
    raw: &[u8],
    registered: impl Fn(&str, &str, &str) -> bool,
) -> ApiResult<()> {
    let Some(map) = obj.as_object_mut() else {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    };
    let api_version = type_field(map.get("apiVersion"), "apiVersion", want, raw)?;
    let kind = type_field(map.get("kind"), "kind", want, raw)?;
    let parsed = GroupVersion::parse(&api_version).map_err(|e| {
        // The codec's `Interpret` fails before any default is known.
        unrecognized(want, &format!("couldn't get version/kind; {e}"), raw)
    })?;
    if !want.typed {
        return check_unstructured(want, map, &parsed, &kind, raw);
    }
    // `gvkWithDefaults`.
    let mut data = parsed;
    if data.version.is_empty() && (data.group.is_empty() || data.group == want.group) {
        data = want.group_version();
    }
    let kind = if kind.is_empty() {
        want.kind.clone()
    } else {
        kind
    };
    if kind != want.kind || data != want.group_version() {
        if !registered(&data.group, &data.version, &kind) {
            return Err(cannot_handle(
                want,
                &data,
                &kind,
                &format!(
                    "no kind \"{kind}\" is registered for version \"{}\" in scheme \
                     \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\"",
                    data.spell()
                ),
            ));
        }
        if kind != want.kind {
            return Err(cannot_handle(
                want,
                &data,
                &kind,
                &format!(
                    "converting ({}.{kind}) to ({}.{}): unknown conversion",
                    data.version,
                    want.internal_package(),
                    want.kind
                ),
            ));
        }
        // Another version of the kind, which the scheme converts: refused after decoding.
        return Err(version_mismatch(&data, want));
    }
    map.insert("apiVersion".into(), Value::String(data.spell()));
    map.insert("kind".into(), Value::String(kind));
    Ok(())
}

/// The rules for custom resources (decoded as `Unstructured`): `kind` is required, the version
/// must be the path's, and a wrong kind is a validation error (`ValidateTypeMeta`).
fn check_unstructured(
    want: &BodyKind,
    map: &serde_json::Map<String, Value>,
    data: &GroupVersion,
    kind: &str,
    raw: &[u8],
) -> ApiResult<()> {
    if kind.is_empty() {
        let version = if data.version.is_empty() {
            &want.version
        } else {
            &data.version
        };
        return Err(ApiError::bad_request(format!(
            "{k} in version \"{version}\" cannot be handled as a {k}: Object 'Kind' is missing in '{}'",
            String::from_utf8_lossy(raw),
            k = want.kind,
        )));
    }
    if *data != want.group_version() {
        return Err(version_mismatch(data, want));
    }
    if kind != want.kind {
        let name = map
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(ApiError::invalid(
            &want.kind,
            &want.group,
            name,
            &[mni_apimachinery::FieldError::invalid(
                "kind",
                Value::String(kind.into()),
                format!("must be {}", want.kind),
            )],
        ));
    }
    Ok(())
}

/// `transformDecodeError` when the body's kind is known.
fn cannot_handle(want: &BodyKind, data: &GroupVersion, kind: &str, cause: &str) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version \"{}\" cannot be handled as a {}: {cause}",
        data.version, want.kind
    ))
}

/// The kinds the server decodes: those of its resources, and of the bodies of its
/// subresources (`Scale`, `TokenRequest`).
pub(crate) fn known_to(registry: &Registry) -> impl Fn(&str, &str, &str) -> bool + '_ {
    move |group, version, kind| {
        matches!(
            (group, version, kind),
            ("autoscaling", "v1", "Scale") | ("authentication.k8s.io", "v1", "TokenRequest")
        ) || registry.find_kind(group, version, kind).is_some()
    }
}

fn version_mismatch(data: &GroupVersion, want: &BodyKind) -> ApiError {
    ApiError::bad_request(format!(
        "the API version in the data ({}) does not match the expected API version ({})",
        data.spell(),
        want.api_version()
    ))
}

/// `apiVersion` or `kind` as a string: absent and `null` are empty; another JSON type fails
/// as Go's `json.Unmarshal` into a string field does.
fn type_field(
    value: Option<&Value>,
    field: &str,
    want: &BodyKind,
    raw: &[u8],
) -> ApiResult<String> {
    let json_type = match value {
        None | Some(Value::Null) => return Ok(String::new()),
        Some(Value::String(s)) => return Ok(s.clone()),
        Some(Value::Bool(_)) => "bool",
        Some(Value::Number(_)) => "number",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
    };
    Err(unrecognized(
        want,
        &format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {json_type} \
             into Go struct field .{field} of type string"
        ),
        raw,
    ))
}

/// `transformDecodeError` when the body's kind is unknown.
fn unrecognized(want: &BodyKind, cause: &str, raw: &[u8]) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {}): {cause} ({})",
        want.kind,
        summarize(raw)
    ))
}

/// `summarizeData(body, 30)`: the first 30 bytes of a JSON body, hex for anything else.
fn summarize(raw: &[u8]) -> String {
    const MAX: usize = 30;
    let cut = &raw[..raw.len().min(MAX)];
    let more = if raw.len() > MAX { " ..." } else { "" };
    match raw.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(cut)),
        Some(_) => {
            let hex: String = cut.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// Server-side apply takes no defaults: the applied configuration must name the path's group,
/// version and kind (the field manager's `versionCheckManager`).
pub(crate) fn check_applied(want: &BodyKind, applied: &Value) -> ApiResult<()> {
    let s = |k: &str| applied.get(k).and_then(Value::as_str).unwrap_or_default();
    // `Unstructured.GroupVersionKind` is empty when apiVersion does not parse.
    let (data, kind) = match GroupVersion::parse(s("apiVersion")) {
        Ok(gv) => (gv, s("kind")),
        Err(_) => (
            GroupVersion {
                group: String::new(),
                version: String::new(),
            },
            "",
        ),
    };
    if data == want.group_version() && kind == want.kind {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "invalid object type: {}/{}, Kind={kind}",
        data.group, data.version
    )))
}

/// The `apiVersion` and `kind` a DELETE body (DeleteOptions) may carry: none, or
/// `DeleteOptions` of any version (`meta.k8s.io/v1`, the legacy `v1`, or a group's, which
/// kube-apiserver still accepts for old clients).
pub(crate) fn check_delete_options(options: &Value, raw: &[u8]) -> ApiResult<()> {
    let want = BodyKind::typed("meta.k8s.io", "v1", "DeleteOptions");
    let api_version = type_field(options.get("apiVersion"), "apiVersion", &want, raw)?;
    let kind = type_field(options.get("kind"), "kind", &want, raw)?;
    if matches!(kind.as_str(), "" | "DeleteOptions") {
        return Ok(());
    }
    // kube-apiserver answers a plain 500 for what its meta scheme cannot decode; a body of
    // another kind is the client's mistake, so this is a 400 with the scheme's words.
    Err(ApiError::bad_request(format!(
        "no kind \"{kind}\" is registered for version \"{api_version}\" in scheme \
         \"k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:28\""
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn known(g: &str, v: &str, k: &str) -> bool {
        matches!(
            (g, v, k),
            ("", "v1", "ConfigMap" | "Secret" | "Namespace")
                | ("apps", "v1", "Deployment")
                | ("events.k8s.io", "v1", "Event")
                | ("", "v1", "Event")
        )
    }

    fn decode(want: &BodyKind, mut obj: Value) -> ApiResult<Value> {
        let raw = serde_json::to_vec(&obj).expect("json");
        decode_kind(want, &mut obj, &raw, known).map(|()| obj)
    }

    fn configmap() -> BodyKind {
        BodyKind::typed("", "v1", "ConfigMap")
    }

    fn widget() -> BodyKind {
        BodyKind {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            typed: false,
        }
    }

    #[test]
    fn typed_bodies_take_the_path_defaults() {
        let obj = decode(&configmap(), json!({"metadata": {"name": "a"}})).expect("defaulted");
        assert_eq!(obj["apiVersion"], "v1");
        assert_eq!(obj["kind"], "ConfigMap");
        let obj = decode(
            &configmap(),
            json!({"kind": "ConfigMap", "apiVersion": null}),
        )
        .expect("null apiVersion");
        assert_eq!(obj["apiVersion"], "v1");
        let deploy = BodyKind::typed("apps", "v1", "Deployment");
        let obj = decode(&deploy, json!({"apiVersion": "apps/v1"})).expect("kind defaulted");
        assert_eq!(obj["kind"], "Deployment");
        // `apps/` names the group only: the version is the path's.
        let obj = decode(&deploy, json!({"apiVersion": "apps/"})).expect("version defaulted");
        assert_eq!(obj["apiVersion"], "apps/v1");
    }

    #[test]
    fn typed_mismatches_are_refused_as_upstream() {
        let deploy = BodyKind::typed("apps", "v1", "Deployment");
        let err = decode(&deploy, json!({"apiVersion": "v1", "kind": "Deployment"}))
            .expect_err("core Deployment");
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message,
            "Deployment in version \"v1\" cannot be handled as a Deployment: no kind \"Deployment\" \
             is registered for version \"v1\" in scheme \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\""
        );
        let err = decode(&configmap(), json!({"kind": "Secret"})).expect_err("other kind");
        assert_eq!(
            err.message,
            "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to \
             (core.ConfigMap): unknown conversion"
        );
        assert_eq!(err.reason, "BadRequest");
        let err = decode(
            &configmap(),
            json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
        )
        .expect_err("other group");
        assert!(
            err.message.contains("(v1.Deployment) to (core.ConfigMap)"),
            "{}",
            err.message
        );
        // Same kind, another version the scheme converts: the version check.
        let event = BodyKind::typed("", "v1", "Event");
        let err = decode(
            &event,
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event"}),
        )
        .expect_err("events.k8s.io");
        assert_eq!(
            err.message,
            "the API version in the data (events.k8s.io/v1) does not match the expected API version (v1)"
        );
        let err = decode(&configmap(), json!({"apiVersion": 1})).expect_err("number");
        assert_eq!(
            err.message,
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get \
             version/kind; json parse error: json: cannot unmarshal number into Go struct field \
             .apiVersion of type string ({\"apiVersion\":1})"
        );
        let err = decode(&configmap(), json!({"apiVersion": "a/b/c"})).expect_err("slashes");
        assert!(
            err.message
                .ends_with("unexpected GroupVersion string: a/b/c ({\"apiVersion\":\"a/b/c\"})"),
            "{}",
            err.message
        );
        assert!(decode(&configmap(), json!([1])).is_err());
    }

    #[test]
    fn custom_resources_need_their_kind() {
        let raw = br#"{"apiVersion":"example.com/v1","metadata":{"name":"w"}}"#;
        let mut obj: Value = serde_json::from_slice(raw).expect("json");
        let err = decode_kind(&widget(), &mut obj, raw, known).expect_err("no kind");
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message,
            "Widget in version \"v1\" cannot be handled as a Widget: Object 'Kind' is missing in \
             '{\"apiVersion\":\"example.com/v1\",\"metadata\":{\"name\":\"w\"}}'"
        );
        let err = decode(&widget(), json!({"kind": "Widget"})).expect_err("no apiVersion");
        assert_eq!(
            err.message,
            "the API version in the data () does not match the expected API version (example.com/v1)"
        );
        let err = decode(
            &widget(),
            json!({"kind": "Widget", "apiVersion": "example.com/v2"}),
        )
        .expect_err("v2");
        assert!(
            err.message.contains("(example.com/v2) does not match"),
            "{}",
            err.message
        );
        let err = decode(
            &widget(),
            json!({"kind": "Gadget", "apiVersion": "example.com/v1", "metadata": {"name": "w"}}),
        )
        .expect_err("kind");
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            "Widget.example.com \"w\" is invalid: kind: Invalid value: \"Gadget\": must be Widget"
        );
        let obj = decode(
            &widget(),
            json!({"kind": "Widget", "apiVersion": "example.com/v1"}),
        )
        .expect("complete");
        assert_eq!(obj["kind"], "Widget");
    }

    #[test]
    fn apply_takes_no_defaults() {
        let deploy = BodyKind::typed("apps", "v1", "Deployment");
        let err = check_applied(&deploy, &json!({"metadata": {"name": "a"}})).expect_err("bare");
        assert_eq!(err.code, 400);
        assert_eq!(err.message, "invalid object type: /, Kind=");
        let err = check_applied(&configmap(), &json!({"apiVersion": "v1"})).expect_err("no kind");
        assert_eq!(err.message, "invalid object type: /v1, Kind=");
        let err = check_applied(
            &deploy,
            &json!({"apiVersion": "apps/v2", "kind": "Deployment"}),
        )
        .expect_err("v2");
        assert_eq!(err.message, "invalid object type: apps/v2, Kind=Deployment");
        check_applied(
            &deploy,
            &json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
        )
        .expect("exact");
    }

    #[test]
    fn delete_options_may_be_bare_or_meta() {
        for ok in [
            json!({}),
            json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}),
            json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"}),
            json!({"kind": "DeleteOptions", "apiVersion": "apps/v1"}),
        ] {
            check_delete_options(&ok, b"{}").expect("accepted");
        }
        let err = check_delete_options(&json!({"kind": "Pod", "apiVersion": "v1"}), b"{}")
            .expect_err("Pod");
        assert_eq!(err.code, 400);
        let err = check_delete_options(&json!({"kind": 7}), b"{\"kind\":7}").expect_err("7");
        assert!(
            err.message.contains("cannot unmarshal number"),
            "{}",
            err.message
        );
    }

    #[test]
    fn summaries_cut_json_and_hex_the_rest() {
        assert_eq!(summarize(b""), "<empty>");
        assert_eq!(summarize(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(summarize(&[b'{'; 31]), format!("{} ...", "{".repeat(30)));
        assert_eq!(summarize(&[0x6b, 0x38]), "6b38");
    }
}
