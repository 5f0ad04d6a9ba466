//! `metadata.managedFields` entries: their JSON, decoding from and encoding into objects.
//!
//! [`ManagedFieldsEntry`] serializes exactly like `metav1.ManagedFieldsEntry`. Entries are keyed
//! as kube keys them (`BuildManagerIdentifier`): by manager, operation and subresource, plus the
//! API version for `Update` entries, so one manager can hold an `Apply` entry and `Update`
//! entries side by side. [`managed_fields_for_update`] picks the entries a PUT/PATCH starts
//! from (kube's `decodeLiveOrNew`, including the `managedFields: []` reset).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::set::FieldSet;

/// Errors from decoding managedFields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManagedFieldsError {
    /// `metadata.managedFields` is not a list of valid entries.
    #[error("failed to decode managed fields: {0}")]
    Decode(String),
    /// An entry's operation is neither `Apply` nor `Update`.
    #[error("operation must be `Apply` or `Update`")]
    Operation,
    /// An entry has no `apiVersion`.
    #[error("apiVersion must not be empty")]
    ApiVersion,
    /// An entry has no `fieldsType`.
    #[error("missing fieldsType in managed fields entry {0}")]
    MissingFieldsType(usize),
    /// An entry's `fieldsType` is not `FieldsV1`.
    #[error("invalid fieldsType {1:?} in managed fields entry {0}")]
    InvalidFieldsType(usize, String),
}

/// The operation that recorded an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update or a non-apply patch.
    Update,
}

impl Operation {
    /// `Apply` or `Update`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "Apply",
            Self::Update => "Update",
        }
    }
}

/// One entry of `metadata.managedFields`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedFieldsEntry {
    /// The field manager (`fieldManager` query parameter or user agent).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: Operation,
    /// The API version the fields are expressed in.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// When the entry last changed (RFC 3339, seconds); kube omits it in rare cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Always `FieldsV1`.
    #[serde(default)]
    pub fields_type: String,
    /// The owned fields.
    #[serde(default, rename = "fieldsV1")]
    pub fields_v1: FieldSet,
    /// The subresource written through (`status`, `scale`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
}

impl Serialize for FieldSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_fields_v1().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FieldSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        FieldSet::from_fields_v1(&value).map_err(serde::de::Error::custom)
    }
}

/// Reads and validates `metadata.managedFields` of an object (absent or null: none).
pub fn decode_managed_fields(obj: &Value) -> Result<Vec<ManagedFieldsEntry>, ManagedFieldsError> {
    let Some(raw) = obj.get("metadata").and_then(|m| m.get("managedFields")) else {
        return Ok(Vec::new());
    };
    if raw.is_null() {
        return Ok(Vec::new());
    }
    if let Value::Array(items) = raw {
        let valid =
            |op: Option<&Value>| matches!(op.and_then(Value::as_str), Some("Apply" | "Update"));
        if items
            .iter()
            .any(|e| e.is_object() && !valid(e.get("operation")))
        {
            return Err(ManagedFieldsError::Operation);
        }
    }
    let entries = match decode_entries(raw) {
        Some(entries) => entries,
        // Something is off: let serde say what.
        None => Vec::<ManagedFieldsEntry>::deserialize(raw)
            .map_err(|e| ManagedFieldsError::Decode(e.to_string()))?,
    };
    for (i, e) in entries.iter().enumerate() {
        if e.api_version.is_empty() {
            return Err(ManagedFieldsError::ApiVersion);
        }
        match e.fields_type.as_str() {
            "FieldsV1" => {}
            "" => return Err(ManagedFieldsError::MissingFieldsType(i)),
            other => return Err(ManagedFieldsError::InvalidFieldsType(i, other.to_string())),
        }
    }
    Ok(entries)
}

/// Decodes well-formed entries straight from the JSON (serde would copy each `fieldsV1` into a
/// new document before reading it); `None` for anything serde must judge.
fn decode_entries(raw: &Value) -> Option<Vec<ManagedFieldsEntry>> {
    let string = |entry: &Map<String, Value>, key: &str| -> Option<Option<String>> {
        match entry.get(key) {
            None => Some(None),
            Some(Value::String(s)) => Some(Some(s.clone())),
            Some(_) => None,
        }
    };
    raw.as_array()?
        .iter()
        .map(|e| {
            let e = e.as_object()?;
            const KNOWN: [&str; 7] = [
                "manager",
                "operation",
                "apiVersion",
                "time",
                "fieldsType",
                "fieldsV1",
                "subresource",
            ];
            if e.keys().any(|k| !KNOWN.contains(&k.as_str())) {
                return None;
            }
            let operation = match e.get("operation")?.as_str()? {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                _ => return None,
            };
            let fields_v1 = match e.get("fieldsV1") {
                None => FieldSet::new(),
                Some(v) => FieldSet::from_fields_v1(v).ok()?,
            };
            Some(ManagedFieldsEntry {
                manager: string(e, "manager")?.unwrap_or_default(),
                operation,
                api_version: string(e, "apiVersion")?.unwrap_or_default(),
                time: string(e, "time")?,
                fields_type: string(e, "fieldsType")?.unwrap_or_default(),
                fields_v1,
                subresource: string(e, "subresource")?,
            })
        })
        .collect()
}

/// The JSON of `entry`, as its `Serialize` writes it (without building the `fieldsV1`
/// document twice).
fn entry_json(entry: &ManagedFieldsEntry) -> Value {
    let mut out = Map::new();
    if !entry.manager.is_empty() {
        out.insert("manager".into(), Value::String(entry.manager.clone()));
    }
    out.insert(
        "operation".into(),
        Value::String(entry.operation.as_str().into()),
    );
    if !entry.api_version.is_empty() {
        out.insert(
            "apiVersion".into(),
            Value::String(entry.api_version.clone()),
        );
    }
    if let Some(time) = &entry.time {
        out.insert("time".into(), Value::String(time.clone()));
    }
    out.insert(
        "fieldsType".into(),
        Value::String(entry.fields_type.clone()),
    );
    out.insert("fieldsV1".into(), entry.fields_v1.to_fields_v1());
    if let Some(sub) = &entry.subresource {
        out.insert("subresource".into(), Value::String(sub.clone()));
    }
    Value::Object(out)
}

/// Whether an object asks to reset its managed fields: `managedFields: []` or `[{}]`.
pub fn is_reset_managed_fields(obj: &Value) -> bool {
    match obj.get("metadata").and_then(|m| m.get("managedFields")) {
        Some(Value::Array(items)) => match items.as_slice() {
            [] => true,
            [only] => only.as_object().is_some_and(Map::is_empty),
            _ => false,
        },
        _ => false,
    }
}

/// The entries a create/update/non-apply patch starts from, like kube's `decodeLiveOrNew`:
/// through a subresource always the live object's; a reset (`[]` or `[{}]`) gives none; the
/// new object's when it carries valid, non-empty ones; otherwise the live object's.
pub fn managed_fields_for_update(
    live: Option<&Value>,
    new: &Value,
    subresource: Option<&str>,
) -> Vec<ManagedFieldsEntry> {
    let from_live = || {
        live.map(|l| decode_managed_fields(l).unwrap_or_default())
            .unwrap_or_default()
    };
    if subresource.is_some() {
        return from_live();
    }
    if is_reset_managed_fields(new) {
        return Vec::new();
    }
    match decode_managed_fields(new) {
        Ok(entries) if !entries.is_empty() => entries,
        _ => from_live(),
    }
}

/// Writes entries into `metadata.managedFields`, or removes the field when there are none.
pub fn set_managed_fields(obj: &mut Value, entries: &[ManagedFieldsEntry]) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    if entries.is_empty() {
        if let Some(Value::Object(meta)) = root.get_mut("metadata") {
            meta.remove("managedFields");
        }
        return;
    }
    let encoded = Value::Array(entries.iter().map(entry_json).collect());
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert("managedFields".to_string(), encoded);
    }
}

/// Removes `metadata.managedFields` from an object.
pub fn strip_managed_fields(obj: &mut Value) {
    set_managed_fields(obj, &[]);
}

/// How kube identifies a manager: name, operation, subresource, and version for updates.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ManagerKey {
    /// `BuildManagerIdentifier`'s JSON, which kube sorts by.
    id: String,
    pub(crate) manager: String,
    pub(crate) operation: Operation,
    pub(crate) api_version: String,
    pub(crate) subresource: String,
}

impl ManagerKey {
    pub(crate) fn new(
        manager: &str,
        operation: Operation,
        api_version: &str,
        subresource: Option<&str>,
    ) -> Self {
        let api_version = match operation {
            Operation::Apply => String::new(),
            Operation::Update => api_version.to_string(),
        };
        let subresource = subresource.unwrap_or("").to_string();
        let mut id = Map::new();
        id.insert("manager".into(), Value::String(manager.to_string()));
        id.insert("operation".into(), Value::String(operation.as_str().into()));
        if !api_version.is_empty() {
            id.insert("apiVersion".into(), Value::String(api_version.clone()));
        }
        if !subresource.is_empty() {
            id.insert("subresource".into(), Value::String(subresource.clone()));
        }
        Self {
            id: Value::Object(id).to_string(),
            manager: manager.to_string(),
            operation,
            api_version,
            subresource,
        }
    }

    /// kube's `printManager`: `"m"`, `"m" with subresource "status"`, `... using apps/v1`.
    pub(crate) fn display(&self) -> String {
        let quote = |s: &str| Value::String(s.to_string()).to_string();
        let mut out = quote(&self.manager);
        if !self.subresource.is_empty() {
            out = format!("{out} with subresource {}", quote(&self.subresource));
        }
        if self.operation == Operation::Update {
            out = format!("{out} using {}", self.api_version);
        }
        out
    }
}

/// What one manager owns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Owned {
    pub(crate) set: FieldSet,
    pub(crate) api_version: String,
    pub(crate) time: Option<String>,
}

pub(crate) type Managers = BTreeMap<ManagerKey, Owned>;

pub(crate) fn decode(entries: &[ManagedFieldsEntry]) -> Managers {
    let mut out = Managers::new();
    for e in entries {
        let key = ManagerKey::new(
            &e.manager,
            e.operation,
            &e.api_version,
            e.subresource.as_deref(),
        );
        out.insert(
            key,
            Owned {
                set: e.fields_v1.clone(),
                api_version: e.api_version.clone(),
                time: e.time.clone(),
            },
        );
    }
    out
}

/// Encodes, sorted like kube's `sortEncodedManagedFields`.
pub(crate) fn encode(managers: &Managers) -> Vec<ManagedFieldsEntry> {
    let mut out: Vec<ManagedFieldsEntry> = managers
        .iter()
        .filter(|(_, owned)| !owned.set.is_empty())
        .map(|(key, owned)| ManagedFieldsEntry {
            manager: key.manager.clone(),
            operation: key.operation,
            api_version: owned.api_version.clone(),
            time: owned.time.clone(),
            fields_type: "FieldsV1".to_string(),
            fields_v1: owned.set.clone(),
            subresource: (!key.subresource.is_empty()).then(|| key.subresource.clone()),
        })
        .collect();
    out.sort_by(|p, q| {
        p.operation
            .cmp(&q.operation)
            .then_with(|| p.time.cmp(&q.time))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    out
}

/// kube's `DefaultMaxUpdateManagers`.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The manager oldest updates are merged into when there are too many.
pub const ANCIENT_CHANGES: &str = "ancient-changes";

/// kube's `capManagersManager`: beyond [`MAX_UPDATE_MANAGERS`] Update entries, the oldest are
/// merged into an `ancient-changes` entry per API version.
pub(crate) fn cap_update_managers(managers: &mut Managers) {
    let mut updaters: Vec<ManagerKey> = managers
        .keys()
        .filter(|k| k.operation == Operation::Update)
        .cloned()
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|a, b| {
        let ta = managers.get(a).and_then(|o| o.time.clone());
        let tb = managers.get(b).and_then(|o| o.time.clone());
        ta.cmp(&tb).then_with(|| a.cmp(b))
    });
    let mut first_of_version: BTreeMap<String, ManagerKey> = BTreeMap::new();
    let mut length = updaters.len();
    for key in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(owned) = managers.get(&key).cloned() else {
            continue;
        };
        let version = owned.api_version.clone();
        let bucket = ManagerKey::new(ANCIENT_CHANGES, Operation::Update, &version, None);
        match first_of_version.get(&version) {
            Some(first) => {
                if !managers.contains_key(&bucket)
                    && let Some(first_owned) = managers.remove(first)
                {
                    managers.insert(bucket.clone(), first_owned);
                }
                let merged = managers
                    .get(&bucket)
                    .map(|b| owned.set.union(&b.set))
                    .unwrap_or_else(|| owned.set.clone());
                managers.remove(&key);
                managers.insert(
                    bucket,
                    Owned {
                        set: merged,
                        api_version: version,
                        time: owned.time,
                    },
                );
                length -= 1;
            }
            None => {
                first_of_version.insert(version, key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn real_entry() -> Value {
        json!({
            "manager": "kube-controller-manager",
            "operation": "Update",
            "apiVersion": "apps/v1",
            "time": "2024-05-01T10:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:conditions": {".": {}, "k:{\"type\":\"Available\"}": {
                ".": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}}}},
            "subresource": "status"
        })
    }

    #[test]
    fn entry_json_round_trip() {
        let raw = real_entry();
        let entry: Result<ManagedFieldsEntry, _> = serde_json::from_value(raw.clone());
        assert!(entry.is_ok());
        let back = entry.ok().and_then(|e| serde_json::to_string(&e).ok());
        assert_eq!(back, serde_json::to_string(&raw).ok());
    }

    #[test]
    fn direct_decoding_and_encoding_agree_with_serde() {
        let mut apply = real_entry();
        apply["operation"] = json!("Apply");
        apply.as_object_mut().map(|e| e.remove("subresource"));
        let minimal = json!({"operation": "Update", "fieldsType": "FieldsV1"});
        let entries = Value::Array(vec![real_entry(), apply, minimal]);
        let direct = decode_entries(&entries).expect("well-formed");
        let serde: Vec<ManagedFieldsEntry> =
            serde_json::from_value(entries.clone()).expect("serde");
        assert_eq!(direct, serde);
        for e in &direct {
            assert_eq!(Some(entry_json(e)), serde_json::to_value(e).ok());
        }
        // What the direct path leaves to serde: unknown keys, nulls, wrong types, bad sets.
        for odd in [
            json!([{"operation": "Update", "extra": 1}]),
            json!([{"operation": "Update", "time": null}]),
            json!([{"operation": "Update", "manager": 7}]),
            json!([{"operation": "Update", "fieldsV1": {"f:a": 1}}]),
            json!([{"manager": "m"}]),
            json!(["entry"]),
        ] {
            assert_eq!(decode_entries(&odd), None, "{odd}");
        }
        let tolerated = json!({"metadata": {"managedFields": [
            {"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "time": null,
             "extra": true}]}});
        assert_eq!(decode_managed_fields(&tolerated).map(|v| v.len()), Ok(1));
        let wrong = json!({"metadata": {"managedFields": [
            {"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "manager": 7}]}});
        assert!(matches!(
            decode_managed_fields(&wrong),
            Err(ManagedFieldsError::Decode(_))
        ));
    }

    #[test]
    fn decode_and_reset() {
        let obj = json!({"metadata": {"managedFields": [real_entry()]}});
        assert_eq!(decode_managed_fields(&obj).map(|v| v.len()), Ok(1));
        let bad_op = json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Patch",
            "apiVersion": "v1", "fieldsType": "FieldsV1"}]}});
        assert_eq!(
            decode_managed_fields(&bad_op),
            Err(ManagedFieldsError::Operation)
        );
        let bad = json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Update",
            "apiVersion": "v1", "fieldsType": "FieldsV2"}]}});
        assert_eq!(
            decode_managed_fields(&bad),
            Err(ManagedFieldsError::InvalidFieldsType(0, "FieldsV2".into()))
        );
        assert!(is_reset_managed_fields(
            &json!({"metadata": {"managedFields": []}})
        ));
        assert!(is_reset_managed_fields(
            &json!({"metadata": {"managedFields": [{}]}})
        ));
        assert!(!is_reset_managed_fields(&json!({"metadata": {}})));
        let live = obj.clone();
        assert_eq!(
            managed_fields_for_update(Some(&live), &json!({}), None).len(),
            1
        );
        let reset = json!({"metadata": {"managedFields": []}});
        assert!(managed_fields_for_update(Some(&live), &reset, None).is_empty());
        assert_eq!(
            managed_fields_for_update(Some(&live), &reset, Some("status")).len(),
            1
        );
        let mut o = json!({"metadata": {"name": "x", "managedFields": []}});
        strip_managed_fields(&mut o);
        assert_eq!(o, json!({"metadata": {"name": "x"}}));
    }

    #[test]
    fn keys_and_display() {
        let a = ManagerKey::new("m", Operation::Apply, "v1", None);
        assert_eq!(a.display(), "\"m\"");
        assert_eq!(a.id, r#"{"manager":"m","operation":"Apply"}"#);
        let u = ManagerKey::new("m", Operation::Update, "apps/v1", Some("status"));
        assert_eq!(
            u.display(),
            "\"m\" with subresource \"status\" using apps/v1"
        );
        assert_eq!(
            u.id,
            r#"{"manager":"m","operation":"Update","apiVersion":"apps/v1","subresource":"status"}"#
        );
    }

    #[test]
    fn caps_update_managers() {
        let mut m = Managers::new();
        for i in 0..12 {
            let mut set = FieldSet::new();
            set.insert(&crate::types::field_path(&format!("data.k{i}")));
            m.insert(
                ManagerKey::new(&format!("m{i:02}"), Operation::Update, "v1", None),
                Owned {
                    set,
                    api_version: "v1".into(),
                    time: Some(format!("2024-01-01T00:00:{i:02}Z")),
                },
            );
        }
        cap_update_managers(&mut m);
        assert_eq!(m.len(), MAX_UPDATE_MANAGERS);
        let bucket = ManagerKey::new(ANCIENT_CHANGES, Operation::Update, "v1", None);
        assert_eq!(m.get(&bucket).map(|o| o.set.len()), Some(3));
    }
}
