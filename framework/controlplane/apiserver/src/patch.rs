//! Patch documents: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and strategic merge
//! patch for built-in kinds.
//!
//! Strategic merge patch follows the patch strategies of Kubernetes' Go types, read from the
//! generated table of `mni-builtin-schema` (the same one `/openapi/v2` and `/openapi/v3`
//! publish to kubectl): the walk starts at the definition of the object's `apiVersion`/`kind`
//! and follows each field's type, so a list merges by the key of *its* type (a container's
//! `ports` by `containerPort`, a service's by `port`), lists without a `merge` strategy
//! (`tolerations`, `args`) are replaced, scalar lists with one (`finalizers`) are unioned, and
//! the `$patch`, `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…`
//! directives are honoured. Custom resources have no patch strategy, so a strategic patch on
//! them is a 415, as upstream.

use mni_builtin_schema::{Definition, Field, Shape};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::request::PatchType;

/// A parsed patch document.
#[derive(Debug)]
pub(crate) enum Patch {
    /// RFC 6902 operations.
    Json(json_patch::Patch),
    /// RFC 7386 merge patch.
    Merge(Value),
    /// Strategic merge patch.
    Strategic(Value),
}

impl Patch {
    /// Parses a PATCH body of the given type.
    pub(crate) fn parse(kind: PatchType, body: &[u8], custom: bool) -> ApiResult<Patch> {
        let parse_json = || {
            serde_json::from_slice::<Value>(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
        };
        match kind {
            PatchType::Json => {
                let ops = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
                Ok(Patch::Json(ops))
            }
            PatchType::Merge => Ok(Patch::Merge(parse_json()?)),
            PatchType::Strategic if custom => Err(ApiError::unsupported_media_type(
                "application/strategic-merge-patch+json",
                &[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/apply-patch+yaml",
                ],
            )),
            PatchType::Strategic => {
                let v = parse_json()?;
                if !v.is_object() {
                    return Err(ApiError::bad_request(
                        "strategic merge patch must be a JSON object",
                    ));
                }
                Ok(Patch::Strategic(v))
            }
            PatchType::Apply => Err(ApiError::unsupported_media_type(
                "application/apply-patch+yaml",
                &[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                ],
            )),
        }
    }

    /// Applies the patch to a copy of `doc`.
    pub(crate) fn apply(&self, doc: &Value) -> ApiResult<Value> {
        let mut out = doc.clone();
        match self {
            Patch::Json(ops) => apply_json_patch(&mut out, &null_tests_of_missing_paths(ops, doc))?,
            Patch::Merge(p) => json_patch::merge(&mut out, p),
            Patch::Strategic(p) => strategic_merge(&mut out, p, Schema::of_object(doc)),
        }
        Ok(out)
    }
}

/// The most operations a JSON patch may have, as kube-apiserver limits it.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;
/// The most bytes `copy` operations may add up to (kube-apiserver bounds this too), so a patch
/// of doubling copies cannot exhaust memory.
const MAX_ACCUMULATED_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Applies JSON-patch operations one by one to a document the caller throws away on error (so
/// no rollback is needed), bounding the operation count and the bytes copies add.
fn apply_json_patch(doc: &mut Value, ops: &json_patch::Patch) -> ApiResult<()> {
    if ops.0.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::new(
            413,
            "RequestEntityTooLarge",
            format!(
                "The allowed count of operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, but the patch contains {}",
                ops.0.len()
            ),
        ));
    }
    let mut copied = 0usize;
    for op in &ops.0 {
        if let json_patch::PatchOperation::Copy(c) = op
            && let Some(v) = doc.pointer(c.from.as_str())
        {
            copied += serde_json::to_vec(v).map(|b| b.len()).unwrap_or(0);
            if copied > MAX_ACCUMULATED_COPY_BYTES {
                return Err(ApiError::new(
                    422,
                    "Invalid",
                    format!(
                        "the allowed accumulated copy size of {MAX_ACCUMULATED_COPY_BYTES} bytes was exceeded by the JSON patch's copy operations"
                    ),
                ));
            }
        }
        json_patch::patch_unsafe(doc, std::slice::from_ref(op))
            .map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?;
    }
    Ok(())
}

/// Drops `test` operations that expect `null` at a path that does not exist: kube-apiserver's
/// JSON patch treats a missing value as null there (kube-rs's finalizer helper relies on it).
fn null_tests_of_missing_paths(ops: &json_patch::Patch, doc: &Value) -> json_patch::Patch {
    let Ok(Value::Array(list)) = serde_json::to_value(ops) else {
        return ops.clone();
    };
    let kept: Vec<Value> = list
        .into_iter()
        .filter(|op| {
            !(op["op"] == "test"
                && op["value"].is_null()
                && op["path"]
                    .as_str()
                    .is_some_and(|p| doc.pointer(p).is_none()))
        })
        .collect();
    serde_json::from_value(Value::Array(kept)).unwrap_or_else(|_| ops.clone())
}

/// Where a value sits in the built-in schema table, which says how its lists merge.
#[derive(Debug, Clone, Copy)]
enum Schema {
    /// Not in the table: lists are replaced.
    Unknown,
    /// An object of this definition.
    Struct(&'static Definition),
    /// A map (`additionalProperties`) whose values are of this definition (or scalars).
    Entries(Option<&'static Definition>),
}

impl Schema {
    /// The root definition of the object's kind, from its `apiVersion` and `kind`.
    fn of_object(doc: &Value) -> Schema {
        let api_version = doc.get("apiVersion").and_then(Value::as_str);
        let kind = doc.get("kind").and_then(Value::as_str);
        match api_version.zip(kind) {
            Some((av, kind)) => mni_builtin_schema::kind_of_api_version(av, kind)
                .map_or(Schema::Unknown, Schema::Struct),
            None => Schema::Unknown,
        }
    }

    fn of_definition(def: Option<&'static Definition>) -> Schema {
        def.map_or(Schema::Unknown, Schema::Struct)
    }

    /// The table's field for `key`, if this is a struct that has it.
    fn field(self, key: &str) -> Option<&'static Field> {
        match self {
            Schema::Struct(def) => def.field(key),
            _ => None,
        }
    }

    /// The schema of the value under `key`.
    fn child(self, key: &str) -> Schema {
        match self {
            Schema::Struct(def) => match def.field(key) {
                Some(f) if f.shape == Shape::Map => Schema::Entries(f.ty),
                Some(f) => Schema::of_definition(f.ty),
                None => Schema::Unknown,
            },
            Schema::Entries(ty) => Schema::of_definition(ty),
            Schema::Unknown => Schema::Unknown,
        }
    }
}

/// Merges a strategic patch into `target`, whose place in the schema table is `schema`.
fn strategic_merge(target: &mut Value, patch: &Value, schema: Schema) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replaced = p.clone();
        replaced.remove("$patch");
        *target = Value::Object(replaced);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else {
        return;
    };
    if let Some(keep) = p.get("$retainKeys").and_then(Value::as_array) {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        t.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (key, value) in p {
        if key.starts_with('$') {
            if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/")
                && let (Some(Value::Array(list)), Some(remove)) =
                    (t.get_mut(field), value.as_array())
            {
                list.retain(|v| !remove.contains(v));
            }
            continue;
        }
        match value {
            Value::Null => {
                t.remove(key);
            }
            Value::Object(o) if o.get("$patch").and_then(Value::as_str) == Some("delete") => {
                t.remove(key);
            }
            Value::Array(items) => {
                let field = schema.field(key).filter(|f| f.merges());
                let merged = match (field, t.get(key)) {
                    (Some(f), Some(Value::Array(existing))) => match f.patch_merge_key {
                        Some(mk) => {
                            merge_list(existing.clone(), items, mk, Schema::of_definition(f.ty))
                        }
                        None => merge_primitive_list(existing.clone(), items),
                    },
                    _ => Value::Array(items.iter().filter(|i| !is_directive(i)).cloned().collect()),
                };
                t.insert(key.clone(), merged);
            }
            Value::Object(_) => {
                let entry = t.entry(key.clone()).or_insert(Value::Null);
                strategic_merge(entry, value, schema.child(key));
            }
            other => {
                t.insert(key.clone(), other.clone());
            }
        }
    }
}

fn is_directive(v: &Value) -> bool {
    v.get("$patch").is_some()
}

/// A list merged by `mk`: patch items replace-merge into the existing item with the same key,
/// are appended when new, or delete it with `$patch: delete`.
fn merge_list(mut existing: Vec<Value>, patch: &[Value], mk: &str, items: Schema) -> Value {
    if patch
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        return Value::Array(patch.iter().filter(|i| !is_directive(i)).cloned().collect());
    }
    for item in patch {
        let Some(k) = item.get(mk) else {
            existing.push(item.clone());
            continue;
        };
        let pos = existing.iter().position(|e| e.get(mk) == Some(k));
        if item.get("$patch").and_then(Value::as_str) == Some("delete") {
            if let Some(i) = pos {
                existing.remove(i);
            }
            continue;
        }
        match pos {
            Some(i) => strategic_merge(&mut existing[i], item, items),
            None => existing.push(item.clone()),
        }
    }
    Value::Array(existing)
}

/// A list of scalars with the `merge` strategy (`finalizers`): the union, existing order
/// first (removals go through `$deleteFromPrimitiveList`).
fn merge_primitive_list(mut existing: Vec<Value>, patch: &[Value]) -> Value {
    for item in patch.iter().filter(|i| !is_directive(i)) {
        if !existing.contains(item) {
            existing.push(item.clone());
        }
    }
    Value::Array(existing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(doc: Value, patch: Value) -> Value {
        Patch::Strategic(patch).apply(&doc).expect("apply")
    }

    fn pod(spec: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    }

    #[test]
    fn containers_merge_by_name() {
        let doc =
            pod(json!({"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}));
        let out = smp(
            doc,
            json!({"spec": {"containers": [{"name": "b", "image": "z"}]}}),
        );
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "a", "image": "x"}, {"name": "b", "image": "z"}])
        );
    }

    #[test]
    fn directives_delete_and_replace() {
        let mut doc = pod(json!({"containers": [{"name": "a"}, {"name": "b"}]}));
        doc["metadata"]["labels"] = json!({"a": "1", "b": "2"});
        let out = smp(
            doc,
            json!({"metadata": {"labels": {"a": null}}, "spec": {"containers": [{"name": "a", "$patch": "delete"}]}}),
        );
        assert_eq!(out["metadata"]["labels"], json!({"b": "2"}));
        assert_eq!(out["spec"]["containers"], json!([{"name": "b"}]));
    }

    #[test]
    fn merge_keys_follow_the_type_not_the_field_name() {
        // One field name, two merge keys: ContainerPort by `containerPort`, ServicePort by
        // `port`; env by `name`, volumeMounts by `mountPath`.
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": {
            "containers": [{"name": "c", "ports": [{"containerPort": 80, "name": "http"}],
                "env": [{"name": "A", "value": "1"}],
                "volumeMounts": [{"name": "v", "mountPath": "/a"}]}]}}}});
        let out = smp(
            deployment,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c",
                "ports": [{"containerPort": 80, "name": "web"}, {"containerPort": 443}],
                "env": [{"name": "B", "value": "2"}],
                "volumeMounts": [{"name": "w", "mountPath": "/a"}]}]}}}}),
        );
        let c = &out["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            c["ports"],
            json!([{"containerPort": 80, "name": "web"}, {"containerPort": 443}])
        );
        assert_eq!(
            c["env"],
            json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
        );
        // volumeMounts merge by mountPath: same path, the patch's volume name wins.
        assert_eq!(c["volumeMounts"], json!([{"name": "w", "mountPath": "/a"}]));

        let service = json!({"apiVersion": "v1", "kind": "Service", "spec": {
            "ports": [{"port": 80, "targetPort": 8080, "name": "http"}]}});
        let out = smp(
            service,
            json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}, {"port": 443}]}}),
        );
        assert_eq!(
            out["spec"]["ports"],
            json!([{"port": 80, "targetPort": 9090, "name": "http"}, {"port": 443}])
        );
    }

    #[test]
    fn the_same_field_name_merges_per_parent_type() {
        // `imagePullSecrets` merges by `name` in a PodSpec but is atomic in a ServiceAccount,
        // whose `secrets` merge by `name`: guessing by field name got both wrong.
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "s"},
            "imagePullSecrets": [{"name": "a"}], "secrets": [{"name": "x"}]});
        let out = smp(
            sa,
            json!({"imagePullSecrets": [{"name": "b"}], "secrets": [{"name": "y"}]}),
        );
        assert_eq!(out["imagePullSecrets"], json!([{"name": "b"}]));
        assert_eq!(out["secrets"], json!([{"name": "x"}, {"name": "y"}]));
        let out = smp(
            pod(json!({"imagePullSecrets": [{"name": "a"}]})),
            json!({"spec": {"imagePullSecrets": [{"name": "b"}]}}),
        );
        assert_eq!(
            out["spec"]["imagePullSecrets"],
            json!([{"name": "a"}, {"name": "b"}])
        );
    }

    #[test]
    fn lists_without_a_merge_strategy_are_replaced() {
        // `tolerations` and a container's `args` are atomic upstream.
        let doc = pod(json!({
            "tolerations": [{"key": "a", "operator": "Exists"}],
            "containers": [{"name": "c", "args": ["x", "y"]}]}));
        let out = smp(
            doc,
            json!({"spec": {"tolerations": [{"key": "b", "operator": "Exists"}],
                "containers": [{"name": "c", "args": ["z"]}]}}),
        );
        assert_eq!(
            out["spec"]["tolerations"],
            json!([{"key": "b", "operator": "Exists"}])
        );
        assert_eq!(out["spec"]["containers"][0]["args"], json!(["z"]));
    }

    #[test]
    fn scalar_lists_with_merge_are_unioned() {
        let mut doc = pod(json!({}));
        doc["metadata"]["finalizers"] = json!(["a", "b"]);
        let out = smp(doc.clone(), json!({"metadata": {"finalizers": ["b", "c"]}}));
        assert_eq!(out["metadata"]["finalizers"], json!(["a", "b", "c"]));
        let out = smp(
            doc,
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["b"]));
    }

    #[test]
    fn maps_of_structs_and_unknown_kinds() {
        // A kind outside the table (or without apiVersion/kind) has no merge keys.
        let doc = json!({"spec": {"containers": [{"name": "a"}]}});
        let out = smp(doc, json!({"spec": {"containers": [{"name": "b"}]}}));
        assert_eq!(out["spec"]["containers"], json!([{"name": "b"}]));
        // ConfigMap data is a map: keys merge, null deletes.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1", "b": "2"}});
        let out = smp(cm, json!({"data": {"a": null, "c": "3"}}));
        assert_eq!(out["data"], json!({"b": "2", "c": "3"}));
    }

    #[test]
    fn merge_and_json_patch() {
        let doc = json!({"metadata": {"finalizers": ["x"]}});
        let jp: json_patch::Patch = serde_json::from_value(json!([
            {"op": "test", "path": "/metadata/finalizers/0", "value": "x"},
            {"op": "remove", "path": "/metadata/finalizers/0"}
        ]))
        .expect("ops");
        let out = Patch::Json(jp).apply(&doc).expect("apply");
        assert_eq!(out["metadata"]["finalizers"], json!([]));
        let failing: json_patch::Patch = serde_json::from_value(
            json!([{"op": "test", "path": "/metadata/finalizers/0", "value": "y"}]),
        )
        .expect("ops");
        assert_eq!(
            Patch::Json(failing).apply(&doc).expect_err("test op").code,
            422
        );
    }

    #[test]
    fn testing_null_at_a_missing_path_succeeds() {
        let ops: json_patch::Patch = serde_json::from_value(json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["f"]}
        ]))
        .expect("ops");
        let out = Patch::Json(ops.clone())
            .apply(&json!({"metadata": {}}))
            .expect("apply");
        assert_eq!(out["metadata"]["finalizers"], json!(["f"]));
        let err = Patch::Json(ops).apply(&json!({"metadata": {"finalizers": ["g"]}}));
        assert_eq!(err.expect_err("not null").code, 422);
    }

    #[test]
    fn move_to_root_then_failure_is_an_error_not_a_panic() {
        let ops: json_patch::Patch = serde_json::from_value(json!([
            {"op": "move", "from": "/metadata", "path": ""},
            {"op": "remove", "path": "/x"}
        ]))
        .expect("ops");
        let err = Patch::Json(ops).apply(&json!({"metadata": {"uid": "u"}}));
        assert_eq!(err.expect_err("fails").code, 422);
    }

    #[test]
    fn doubling_copies_are_bounded() {
        let mut ops = Vec::new();
        for i in 0..40 {
            ops.push(json!({"op": "copy", "from": "/metadata", "path": format!("/metadata/c{i}")}));
        }
        let ops: json_patch::Patch = serde_json::from_value(json!(ops)).expect("ops");
        let err = Patch::Json(ops).apply(&json!({"metadata": {"name": "x".repeat(100)}}));
        assert_eq!(err.expect_err("bounded").code, 422);
    }

    #[test]
    fn strategic_on_custom_resources_is_415() {
        let e = Patch::parse(PatchType::Strategic, b"{}", true).expect_err("415");
        assert_eq!(e.code, 415);
    }
}
