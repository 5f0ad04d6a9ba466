//! The `ServiceAccount` admission plugin, on pod create, as kube-apiserver's: a pod that
//! names no ServiceAccount gets `default`; a named ServiceAccount must exist; and unless the
//! pod or its ServiceAccount opts out (`automountServiceAccountToken: false`), the pod gets
//! the `kube-api-access-<random>` projected volume — a bound token (`token`), the cluster's CA
//! (`ca.crt`, from the `kube-root-ca.crt` ConfigMap every namespace has) and the namespace
//! (`namespace`) — mounted read-only in every container at
//! `/var/run/secrets/kubernetes.io/serviceaccount`, where in-cluster clients look for them.
//!
//! The `default` ServiceAccount of a namespace is created by the namespace controller a moment
//! after the namespace; a pod created in that moment is admitted as if it existed (upstream
//! refuses it and its controller retries).

use serde_json::{Value, json};

/// Where in-cluster clients find the token, the CA and the namespace.
pub(crate) const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The prefix of the projected volume's name.
pub(crate) const VOLUME_PREFIX: &str = "kube-api-access-";
/// The ConfigMap with the cluster's CA bundle that every namespace has.
pub(crate) const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";
/// The ServiceAccount a pod that names none runs as.
pub(crate) const DEFAULT: &str = "default";
/// The token lifetime kube-apiserver asks the kubelet for (an hour and 7 seconds).
const EXPIRATION_SECONDS: i64 = 3607;

/// The ServiceAccount `pod` runs as, defaulted to [`DEFAULT`] (both fields, as the v1 API
/// writes them).
pub(crate) fn default_name(pod: &mut Value) -> String {
    let named = pod
        .pointer("/spec/serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or_else(|| {
            pod.pointer("/spec/serviceAccount")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        })
        .unwrap_or(DEFAULT)
        .to_string();
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("serviceAccountName".into(), json!(named));
        spec.insert("serviceAccount".into(), json!(named));
    }
    named
}

/// Adds the token volume and its mounts to `pod` unless the pod or `account` (the
/// ServiceAccount, when it exists) opts out, or every container already mounts something at
/// [`MOUNT_PATH`].
pub(crate) fn mount_token(pod: &mut Value, account: Option<&Value>) {
    let opted = pod
        .pointer("/spec/automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| account.and_then(|a| a["automountServiceAccountToken"].as_bool()));
    if opted == Some(false) {
        return;
    }
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let mounted = |c: &Value| {
        c["volumeMounts"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["mountPath"] == MOUNT_PATH))
    };
    let needs: bool = ["initContainers", "containers"]
        .iter()
        .filter_map(|k| spec.get(*k).and_then(Value::as_array))
        .flatten()
        .any(|c| !mounted(c));
    if !needs {
        return;
    }
    let volumes = spec
        .entry("volumes")
        .or_insert_with(|| json!([]))
        .as_array_mut();
    let Some(volumes) = volumes else { return };
    let existing = volumes
        .iter()
        .filter_map(|v| v["name"].as_str())
        .find(|n| n.starts_with(VOLUME_PREFIX))
        .map(str::to_string);
    let name = match existing {
        Some(name) => name,
        None => {
            let name = format!("{VOLUME_PREFIX}{}", suffix());
            volumes.push(volume(&name));
            name
        }
    };
    for key in ["initContainers", "containers"] {
        for c in spec
            .get_mut(key)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if mounted(c) {
                continue;
            }
            if let Some(obj) = c.as_object_mut() {
                let mounts = obj.entry("volumeMounts").or_insert_with(|| json!([]));
                if let Some(mounts) = mounts.as_array_mut() {
                    mounts.push(json!({"name": name, "readOnly": true, "mountPath": MOUNT_PATH}));
                }
            }
        }
    }
}

/// The projected volume, as kube-apiserver writes it.
fn volume(name: &str) -> Value {
    json!({
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    })
}

/// Five characters of the alphabet Kubernetes' name generator uses (no vowels, no look-alikes).
fn suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4().as_bytes()[..5]
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "a"}, {"name": "b", "volumeMounts": [{"name": "own", "mountPath": MOUNT_PATH}]}],
        }})
    }

    #[test]
    fn a_pod_runs_as_default_unless_it_names_another() {
        let mut p = pod();
        assert_eq!(default_name(&mut p), "default");
        assert_eq!(p["spec"]["serviceAccount"], "default");
        let mut p = json!({"spec": {"serviceAccount": "old"}});
        assert_eq!(default_name(&mut p), "old");
        assert_eq!(p["spec"]["serviceAccountName"], "old");
    }

    #[test]
    fn the_token_volume_is_mounted_where_missing() {
        let mut p = pod();
        mount_token(&mut p, None);
        let volumes = p["spec"]["volumes"].as_array().expect("volumes");
        assert_eq!(volumes.len(), 1);
        let name = volumes[0]["name"].as_str().expect("name");
        assert!(name.starts_with(VOLUME_PREFIX) && name.len() == VOLUME_PREFIX.len() + 5);
        let sources = &volumes[0]["projected"]["sources"];
        assert_eq!(sources[0]["serviceAccountToken"]["path"], "token");
        assert_eq!(sources[1]["configMap"]["name"], ROOT_CA_CONFIGMAP);
        assert_eq!(
            p["spec"]["initContainers"][0]["volumeMounts"][0]["name"],
            name
        );
        assert_eq!(
            p["spec"]["containers"][0]["volumeMounts"][0]["readOnly"],
            true
        );
        // A container that mounts its own volume there keeps it.
        assert_eq!(
            p["spec"]["containers"][1]["volumeMounts"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        // Admitting again adds nothing.
        let before = p.clone();
        mount_token(&mut p, None);
        assert_eq!(p, before);
    }

    #[test]
    fn the_pod_or_its_account_can_opt_out() {
        let mut p = pod();
        mount_token(
            &mut p,
            Some(&json!({"automountServiceAccountToken": false})),
        );
        assert!(p["spec"].get("volumes").is_none());
        let mut p = pod();
        p["spec"]["automountServiceAccountToken"] = json!(true);
        mount_token(
            &mut p,
            Some(&json!({"automountServiceAccountToken": false})),
        );
        assert!(p["spec"]["volumes"].is_array(), "the pod's word wins");
        let mut p = pod();
        p["spec"]["automountServiceAccountToken"] = json!(false);
        mount_token(&mut p, None);
        assert!(p["spec"].get("volumes").is_none());
    }
}
