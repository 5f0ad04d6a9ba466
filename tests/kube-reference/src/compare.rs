//! Comparing two answers: [`normalize`] replaces what legitimately differs between two servers
//! (uids, resourceVersions, timestamps, generated names, allocated ClusterIPs and node ports,
//! continue tokens, the server's address) with placeholders, and [`diff`] lists what still
//! differs, one line per JSON path.

use serde_json::{Map, Value};

/// Keys whose string values are volatile, and their placeholders.
const VOLATILE: &[(&str, &str)] = &[
    ("uid", "<uid>"),
    ("resourceVersion", "<rv>"),
    ("continue", "<continue>"),
    ("creationTimestamp", "<time>"),
    ("deletionTimestamp", "<time>"),
    ("clusterIP", "<ip>"),
];

/// Replaces the volatile parts of `value` with placeholders, in place.
pub fn normalize(value: &mut Value) {
    let mut uids = Vec::new();
    collect_uids(value, &mut uids);
    walk(value, &uids);
}

fn collect_uids(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "uid"
                    && let Some(s) = v.as_str()
                    && s.len() >= 8
                {
                    into.push(s.to_owned());
                }
                collect_uids(v, into);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_uids(v, into)),
        _ => {}
    }
}

fn is_time_key(key: &str) -> bool {
    key == "time" || key.ends_with("Time") || key.ends_with("Timestamp")
}

fn walk(value: &mut Value, uids: &[String]) {
    match value {
        Value::Object(map) => {
            generated_name(map);
            for (key, v) in map.iter_mut() {
                if let Some((_, placeholder)) = VOLATILE.iter().find(|(k, _)| k == key) {
                    if v.as_str().is_some_and(|s| !s.is_empty() && s != "None") {
                        *v = Value::String((*placeholder).to_owned());
                    }
                    continue;
                }
                if is_time_key(key) && v.is_string() {
                    *v = Value::String("<time>".to_owned());
                    continue;
                }
                match key.as_str() {
                    "clusterIPs" => {
                        if let Some(items) = v.as_array_mut() {
                            for item in items {
                                *item = Value::String("<ip>".to_owned());
                            }
                        }
                        continue;
                    }
                    "nodePort" if v.is_number() => {
                        *v = Value::String("<port>".to_owned());
                        continue;
                    }
                    _ => {}
                }
                walk(v, uids);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, uids)),
        Value::String(s) => {
            for uid in uids {
                if s.contains(uid.as_str()) {
                    *s = s.replace(uid.as_str(), "<uid>");
                }
            }
        }
        _ => {}
    }
}

/// `metadata.name` of an object named by `generateName` becomes `PREFIX<generated>`.
fn generated_name(map: &mut Map<String, Value>) {
    let Some(prefix) = map
        .get("generateName")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    if let Some(name) = map.get_mut("name")
        && name.as_str().is_some_and(|n| n.starts_with(&prefix))
    {
        *name = Value::String(format!("{prefix}<generated>"));
    }
}

/// Normalises free text (kubectl's output, error messages): the servers' addresses, ages,
/// uids and resourceVersions.
pub fn normalize_text(text: &str, urls: &[&str]) -> String {
    let mut out = text.to_owned();
    for url in urls.iter().filter(|u| !u.is_empty()) {
        out = out.replace(url, "<server>");
        if let Some(host) = url.strip_prefix("https://") {
            out = out.replace(host, "<server>");
        }
    }
    let uid = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("a valid regex");
    let out = uid.replace_all(&out, "<uid>");
    let age = regex::Regex::new(r"\b\d+(\.\d+)?(s|m|h|d|ms)(\d+s)?\b").expect("a valid regex");
    let out = age.replace_all(&out, "<age>");
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?( \+0000|Z)")
        .expect("a valid regex");
    let out = time.replace_all(&out, "<time>");
    // `kubectl diff`'s temporary directories.
    let tmp = regex::Regex::new(r"/tmp/(LIVE|MERGED)-\d+").expect("a valid regex");
    let out = tmp.replace_all(&out, "/tmp/$1-<n>");
    let rv = regex::Regex::new(r#"(resourceVersion[":= ]+)"?\d+"?"#).expect("a valid regex");
    let out = rv.replace_all(&out, "${1}<rv>");
    let ip = regex::Regex::new(r"\b10\.(9[6-9]|1[01][0-9])\.\d+\.\d+\b").expect("a valid regex");
    // Columns of tables are padded to their widest cell: placeholders change the widths.
    let out = ip.replace_all(&out, "<ip>");
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The differences between the reference's `a` and mni-dev's `b`, one line per JSON path
/// (`/metadata/labels/x: kube-apiserver "1", mni-dev absent`).
pub fn diff(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_at("", a, b, &mut out);
    out
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 600 {
        let cut: String = text.chars().take(597).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn diff_at(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                match y.get(k) {
                    Some(vb) => diff_at(&p, va, vb, out),
                    None => out.push(format!("{p}: kube-apiserver {}, mni-dev absent", short(va))),
                }
            }
            for (k, vb) in y {
                if !x.contains_key(k) {
                    let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                    out.push(format!("{p}: kube-apiserver absent, mni-dev {}", short(vb)));
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff_at(&format!("{path}/{i}"), va, vb, out);
            }
        }
        _ if a == b => {}
        _ => out.push(format!(
            "{}: kube-apiserver {}, mni-dev {}",
            if path.is_empty() { "/" } else { path },
            short(a),
            short(b)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn volatile_fields_become_placeholders() {
        let mut v = json!({
            "metadata": {
                "name": "gen-x7k2p", "generateName": "gen-",
                "uid": "0c7d1f2e-aaaa-bbbb-cccc-123456789abc", "resourceVersion": "42",
                "creationTimestamp": "2026-12-03T10:00:00Z",
                "labels": {"controller-uid": "0c7d1f2e-aaaa-bbbb-cccc-123456789abc"},
                "managedFields": [{"manager": "m", "time": "2026-12-03T10:00:00Z"}]
            },
            "spec": {"clusterIP": "10.96.0.12", "clusterIPs": ["10.96.0.12"],
                     "ports": [{"port": 80, "nodePort": 30001}]},
            "status": {"conditions": [{"lastTransitionTime": "2026-12-03T10:00:00Z"}]}
        });
        normalize(&mut v);
        assert_eq!(v["metadata"]["name"], "gen-<generated>");
        assert_eq!(v["metadata"]["uid"], "<uid>");
        assert_eq!(v["metadata"]["labels"]["controller-uid"], "<uid>");
        assert_eq!(v["metadata"]["resourceVersion"], "<rv>");
        assert_eq!(v["metadata"]["managedFields"][0]["time"], "<time>");
        assert_eq!(v["spec"]["clusterIP"], "<ip>");
        assert_eq!(v["spec"]["clusterIPs"][0], "<ip>");
        assert_eq!(v["spec"]["ports"][0]["nodePort"], "<port>");
        assert_eq!(v["spec"]["ports"][0]["port"], 80);
        assert_eq!(v["status"]["conditions"][0]["lastTransitionTime"], "<time>");
    }

    #[test]
    fn headless_services_keep_none() {
        let mut v = json!({"spec": {"clusterIP": "None"}});
        normalize(&mut v);
        assert_eq!(v["spec"]["clusterIP"], "None");
    }

    #[test]
    fn diff_names_each_path() {
        let a = json!({"a": 1, "b": {"c": [1, 2]}, "d": "x"});
        let b = json!({"a": 1, "b": {"c": [1, 3]}, "e": true});
        let d = diff(&a, &b);
        assert_eq!(
            d,
            vec![
                "/b/c/1: kube-apiserver 2, mni-dev 3",
                "/d: kube-apiserver \"x\", mni-dev absent",
                "/e: kube-apiserver absent, mni-dev true",
            ]
        );
        assert!(diff(&a, &a).is_empty());
    }

    #[test]
    fn text_loses_addresses_and_ages() {
        let t = normalize_text(
            "NAME   DATA   AGE\ncm1    1      5s\nat https://127.0.0.1:4431/api",
            &["https://127.0.0.1:4431"],
        );
        assert_eq!(t, "NAME DATA AGE\ncm1 1 <age>\nat <server>/api");
        let d = normalize_text(
            "--- /tmp/LIVE-123/v1.ConfigMap.ns.x 2026-12-03 15:26:37.477871433 +0000",
            &[],
        );
        assert_eq!(d, "--- /tmp/LIVE-<n>/v1.ConfigMap.ns.x <time>");
    }
}
