//! A deterministic fuzz/property test of the HTTP layer: request bodies, patch documents and
//! query strings that clients get wrong, sent to a fixed set of objects.
//!
//! The server holds a few seeded objects: three ConfigMaps (one `immutable`), a Deployment, a
//! CRD with a structural schema and status/scale subresources, and one of its custom resources.
//! Each case sends one generated request, sequentially, to one of their item, collection,
//! `status` or `scale` paths (or to a path that does not exist), with one of:
//! - random JSON values: deep, wide, wrong types in known fields (`metadata.name` as a number,
//!   labels as arrays), huge strings, unicode, nulls, duplicate keys and near-duplicate keys;
//! - structure-aware mutations of the seeded objects (fields dropped, replaced, retyped, given
//!   values known to be invalid), in JSON, YAML (and invalid YAML) and Kubernetes protobuf
//!   (valid encodings with flipped, truncated or inserted bytes, and random bytes after `k8s\0`);
//! - JSON patches (valid and invalid paths, `test` ops, move/copy into own children, growth),
//!   merge patches with nulls and nested objects, strategic merge patches with `$patch`,
//!   `$retainKeys`, `$setElementOrder` and `$deleteFromPrimitiveList` directives, and
//!   server-side apply YAML with and without `fieldManager`/`force`;
//! - random bytes under right and wrong content types, and random `Accept` headers;
//! - random query strings: `labelSelector`, `fieldSelector`, `limit`, `continue`,
//!   `resourceVersion(Match)`, `watch` with `timeoutSeconds=0/1`, `dryRun`, `fieldValidation`,
//!   `fieldManager`, `force`, `propagationPolicy`, `gracePeriodSeconds`.
//!
//! Every response must arrive within a few seconds and be no 5xx (except kube-apiserver's 504
//! for a resourceVersion from the future); an error must be a `Status` with `kind: Status`,
//! `code` equal to the HTTP status and a non-empty `reason`. A 4xx (but for deletecollection,
//! which like upstream may fail part way), a GET and a `dryRun=All` request must leave the store
//! revision unchanged; `status` and `scale` must refuse DELETE and POST. After a write that
//! succeeded the written object must read back as a valid object of its kind, and a dry-run
//! `PUT` of what was read must be accepted (the server stored nothing it would reject); the
//! seeded objects are then restored, so every case starts from the same state. At the end the
//! seeded objects must still read back with their kind and apiVersion.
//!
//! The seed is fixed, so runs are reproducible; failures print the case number and the request
//! (method, path, headers, body; bodies are also saved under the temp directory). Run more cases
//! or another seed with:
//!
//! ```text
//! MNI_FUZZ_CASES=50000 MNI_FUZZ_SEED=7 cargo test -p mni-apiserver --test integration fuzz:: -- --nocapture
//! ```
//!
//! Every case starts from the seeded state, so one case replays alone: add `MNI_FUZZ_ONLY=N`
//! (with the same seed, and `MNI_FUZZ_CASES` above `N`).

use crate::support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, header};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value, json};

type Http = Client<HttpConnector, Full<Bytes>>;

/// Cases run by default: about 15 s in a debug build on two cores.
const DEFAULT_CASES: u64 = 2500;
const DEFAULT_SEED: u64 = 0x6d4e_6946_757a_7a31;
/// Longest a request may take before it counts as a hang.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(8);
/// How long a watch that started streaming is read before it is dropped.
const WATCH_READ: Duration = Duration::from_millis(200);
/// A request slower than this is reported (not failed).
const SLOW: Duration = Duration::from_secs(1);
/// Distinct failures printed per signature (method, resource, status, reason).
const PRINT_PER_SIGNATURE: usize = 3;

/// The server's request body limit (kube-apiserver's 3 MiB).
const OVER_LIMIT: usize = 3 * 1024 * 1024;

const NS: &str = "default";
const GROUP: &str = "fuzz.mni.dev";
const CRD_NAME: &str = "widgets.fuzz.mni.dev";

// ---------------------------------------------------------------------------------------------
// A small deterministic PRNG (splitmix64).

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent`%.
    fn pct(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

// ---------------------------------------------------------------------------------------------
// The seeded objects.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    ConfigMap,
    Deployment,
    Crd,
    Widget,
}

impl Kind {
    fn collection(self) -> String {
        match self {
            Kind::ConfigMap => format!("/api/v1/namespaces/{NS}/configmaps"),
            Kind::Deployment => format!("/apis/apps/v1/namespaces/{NS}/deployments"),
            Kind::Crd => "/apis/apiextensions.k8s.io/v1/customresourcedefinitions".to_string(),
            Kind::Widget => format!("/apis/{GROUP}/v1/namespaces/{NS}/widgets"),
        }
    }

    fn item(self, name: &str) -> String {
        format!("{}/{name}", self.collection())
    }

    fn api_version(self) -> &'static str {
        match self {
            Kind::ConfigMap => "v1",
            Kind::Deployment => "apps/v1",
            Kind::Crd => "apiextensions.k8s.io/v1",
            Kind::Widget => "fuzz.mni.dev/v1",
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Kind::ConfigMap => "ConfigMap",
            Kind::Deployment => "Deployment",
            Kind::Crd => "CustomResourceDefinition",
            Kind::Widget => "Widget",
        }
    }

    fn subresources(self) -> &'static [&'static str] {
        match self {
            Kind::ConfigMap => &[],
            Kind::Deployment | Kind::Widget => &["status", "scale"],
            Kind::Crd => &["status"],
        }
    }
}

const ALL_KINDS: [Kind; 4] = [Kind::Crd, Kind::ConfigMap, Kind::Deployment, Kind::Widget];

struct Seed {
    kind: Kind,
    name: &'static str,
    pristine: Value,
}

fn seeds() -> Vec<Seed> {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                      "listKind": "WidgetList", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {
                    "status": {},
                    "scale": {"specReplicasPath": ".spec.replicas",
                              "statusReplicasPath": ".status.replicas"}
                },
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["size"],
                            "properties": {
                                "size": {"type": "integer", "minimum": 0, "maximum": 100},
                                "replicas": {"type": "integer"},
                                "color": {"type": "string", "enum": ["red", "green", "blue"]},
                                "tags": {"type": "array", "items": {"type": "string"},
                                         "x-kubernetes-list-type": "set"},
                                "ports": {
                                    "type": "array",
                                    "x-kubernetes-list-type": "map",
                                    "x-kubernetes-list-map-keys": ["name"],
                                    "items": {"type": "object", "required": ["name"],
                                              "properties": {"name": {"type": "string"},
                                                             "port": {"type": "integer"}}}
                                },
                                "extra": {"type": "object",
                                          "x-kubernetes-preserve-unknown-fields": true},
                                "pattern": {"type": "string", "pattern": "^[a-z]+$",
                                            "maxLength": 16}
                            }
                        },
                        "status": {"type": "object", "properties": {
                            "replicas": {"type": "integer"},
                            "phase": {"type": "string"}
                        }}
                    }
                }}
            }]
        }
    });
    let cm = |name: &str, extra: Value| {
        let mut v = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app": name, "tier": "fuzz"},
                         "annotations": {"note": "seeded"}},
            "data": {"k": "v", "config.yaml": "a: 1\nb: [x, y]\n"}
        });
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            v.extend(extra.clone());
        }
        v
    };
    vec![
        Seed {
            kind: Kind::Crd,
            name: CRD_NAME,
            pristine: crd,
        },
        Seed {
            kind: Kind::ConfigMap,
            name: "fuzz-a",
            pristine: cm("fuzz-a", json!({})),
        },
        Seed {
            kind: Kind::ConfigMap,
            name: "fuzz-b",
            pristine: cm("fuzz-b", json!({"binaryData": {"bin": "AAEC/w=="}})),
        },
        Seed {
            kind: Kind::ConfigMap,
            name: "fuzz-frozen",
            pristine: cm("fuzz-frozen", json!({"immutable": true})),
        },
        Seed {
            kind: Kind::Deployment,
            name: "fuzz-web",
            pristine: json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "fuzz-web", "labels": {"app": "web"}},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "web"}},
                    "strategy": {"type": "RollingUpdate",
                                 "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {
                            "containers": [
                                {"name": "web", "image": "nginx:1.25",
                                 "ports": [{"containerPort": 80, "name": "http"}],
                                 "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                                 "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}},
                                {"name": "sidecar", "image": "busybox", "args": ["sleep", "3600"]}
                            ],
                            "volumes": [{"name": "cfg", "configMap": {"name": "fuzz-a"}}]
                        }
                    }
                }
            }),
        },
        Seed {
            kind: Kind::Widget,
            name: "fuzz-widget",
            pristine: json!({
                "apiVersion": "fuzz.mni.dev/v1", "kind": "Widget",
                "metadata": {"name": "fuzz-widget", "labels": {"app": "widget"}},
                "spec": {"size": 3, "replicas": 1, "color": "red", "tags": ["a", "b"],
                         "ports": [{"name": "http", "port": 80}],
                         "extra": {"anything": [1, {"x": null}], "deep": {"er": true}},
                         "pattern": "abc"}
            }),
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// Requests and responses.

#[derive(Clone, Debug)]
struct Case {
    method: Method,
    path: String,
    query: String,
    content_type: Option<String>,
    accept: Option<String>,
    body: Vec<u8>,
    /// A `watch=true` GET on a collection: its body streams.
    watch: bool,
    /// `dryRun=All` was given (once): nothing may be stored.
    dry_run: bool,
    /// The resource the path names (for signatures and checks).
    kind: Option<Kind>,
}

impl Case {
    fn uri(&self) -> String {
        if self.query.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{}", self.path, self.query)
        }
    }
}

struct Resp {
    status: u16,
    body: Vec<u8>,
}

async fn send(http: &Http, base: &str, token: &str, case: &Case) -> Result<Resp, String> {
    let mut b = Request::builder()
        .method(case.method.clone())
        .uri(format!("{base}{}", case.uri()))
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(ct) = &case.content_type {
        b = b.header(header::CONTENT_TYPE, ct);
    }
    if let Some(a) = &case.accept {
        b = b.header(header::ACCEPT, a);
    }
    let req = b
        .body(Full::new(Bytes::from(case.body.clone())))
        .map_err(|e| format!("test bug: request does not build: {e}"))?;
    let exchange = async {
        let resp = http
            .request(req)
            .await
            .map_err(|e| format!("no response (transport error): {e:?}"))?;
        let status = resp.status().as_u16();
        let mut body = resp.into_body();
        let mut buf = Vec::new();
        let watch_until = (case.watch && status == 200).then(|| Instant::now() + WATCH_READ);
        loop {
            let frame = match watch_until {
                Some(t) => {
                    match tokio::time::timeout_at(t.into(), body.frame()).await {
                        Ok(f) => f,
                        // A watch that is still streaming: drop it (closes the connection).
                        Err(_) => break,
                    }
                }
                None => body.frame().await,
            };
            match frame {
                None => break,
                Some(Ok(f)) => {
                    if let Ok(d) = f.into_data() {
                        buf.extend_from_slice(&d);
                    }
                }
                Some(Err(e)) => return Err(format!("response body broken off: {e:?}")),
            }
        }
        Ok(Resp { status, body: buf })
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no response within {REQUEST_TIMEOUT:?} (hang)"))?
}

fn show_body(body: &[u8]) -> String {
    const MAX: usize = 1500;
    let head = &body[..body.len().min(MAX)];
    let text = match std::str::from_utf8(head) {
        Ok(s) => serde_json::to_string(s).unwrap_or_default(),
        Err(_) => format!("bytes {head:02x?}"),
    };
    if body.len() > MAX {
        format!("{text} … ({} bytes in all)", body.len())
    } else {
        text
    }
}

fn describe(case: &Case, index: u64, seed: u64) -> String {
    let path = std::env::temp_dir().join(format!("mni-fuzz-{seed:x}-{index}.body"));
    let saved = std::fs::write(&path, &case.body)
        .map(|()| format!(", saved to {}", path.display()))
        .unwrap_or_default();
    let mut s = format!(
        "case {index} (seed {seed:#x}):\n  {} {}\n",
        case.method,
        case.uri()
    );
    if let Some(ct) = &case.content_type {
        let _ = writeln!(s, "  Content-Type: {ct}");
    }
    if let Some(a) = &case.accept {
        let _ = writeln!(s, "  Accept: {a}");
    }
    let _ = write!(
        s,
        "  body ({} bytes{saved}): {}",
        case.body.len(),
        show_body(&case.body)
    );
    s
}

// ---------------------------------------------------------------------------------------------
// Generators.

const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "spec",
    "status",
    "data",
    "binaryData",
    "items",
    "containers",
    "replicas",
    "selector",
    "matchLabels",
    "template",
    "image",
    "value",
    "op",
    "path",
    "from",
    "$patch",
    "$retainKeys",
    "Name",
    "name ",
    "n\u{0430}me",
    "",
    "\u{0}",
    "🦀",
    "a.b/c",
    "~1",
    "x",
];

fn random_string(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => String::new(),
        1 => "x".repeat(rng.below(300) + 1),
        2 => "\u{202e}ünï©ødé 🦀 日本語 \u{0}\u{1f}\"\\".to_string(),
        3 => rng.pick(KEYS).to_string(),
        4 if rng.pct(20) => "a".repeat(if rng.pct(20) { 300_000 } else { 70_000 }),
        5 => rng
            .pick(&["-1", "1e400", "0x10", "true", "null", "NaN", "1.5"])
            .to_string(),
        6 => rng
            .pick(&[
                "2020-01-01T00:00:00Z",
                "yesterday",
                "100m",
                "64Mi",
                "25%",
                "-1Ki",
            ])
            .to_string(),
        7 => rng
            .pick(&["app=a", "a in (b", "/", "../..", "%00", "$patch"])
            .to_string(),
        _ => {
            let n = rng.below(12) + 1;
            (0..n)
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect()
        }
    }
}

fn random_number(rng: &mut Rng) -> Value {
    match rng.below(9) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(i64::MIN),
        3 => json!(u64::MAX),
        4 => json!(1.5),
        5 => json!(1e300),
        6 => json!(-0.0),
        7 => json!(2_147_483_648_i64),
        _ => json!(rng.below(200)),
    }
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    // Bounded size: wide levels stay wide, but the whole value is a few hundred KiB at most.
    let mut budget: isize = 400_000;
    value_within(rng, depth, &mut budget)
}

fn value_within(rng: &mut Rng, depth: usize, budget: &mut isize) -> Value {
    let leaf = depth == 0 || *budget <= 0 || rng.pct(40);
    if leaf {
        *budget -= 8;
        return match rng.below(5) {
            _ if *budget <= 0 => Value::Null,
            0 => Value::Null,
            1 => json!(rng.pct(50)),
            2 => random_number(rng),
            _ => {
                let s = random_string(rng);
                *budget -= s.len() as isize;
                json!(s)
            }
        };
    }
    let width = if rng.pct(3) {
        rng.below(2000)
    } else {
        rng.below(6)
    };
    if rng.pct(50) {
        Value::Array(
            (0..width)
                .map(|_| value_within(rng, depth - 1, budget))
                .collect(),
        )
    } else {
        let mut m = Map::new();
        for i in 0..width {
            let key = if rng.pct(70) {
                rng.pick(KEYS).to_string()
            } else {
                format!("{}{i}", random_string(rng))
            };
            *budget -= key.len() as isize;
            m.insert(key, value_within(rng, depth - 1, budget));
        }
        Value::Object(m)
    }
}

fn nested(depth: usize, leaf: Value, array: bool) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = if array { json!([v]) } else { json!({ "a": v }) };
    }
    v
}

/// Values known to be wrong (or interesting) at a field, by its JSON pointer.
fn interesting(rng: &mut Rng, pointer: &str) -> Value {
    let last = pointer.rsplit('/').next().unwrap_or_default();
    let pool: Vec<Value> = match last {
        "apiVersion" => vec![
            json!("v2"),
            json!(""),
            json!(1),
            json!("apps/v1"),
            json!("v1"),
            json!("fuzz.mni.dev/v1"),
            json!("fuzz.mni.dev/v2"),
        ],
        "kind" => vec![
            json!("Pod"),
            json!(""),
            json!(7),
            json!("configmap"),
            json!("Widget"),
            json!("Deployment"),
            json!("ConfigMap"),
            json!("Status"),
        ],
        "metadata" => vec![json!(null), json!([]), json!("x"), json!({})],
        "name" if pointer == "/metadata/name" => vec![
            json!(42),
            json!(""),
            json!("Fuzz-A"),
            json!("a".repeat(300)),
            json!("fuzz-a"),
            json!("fuzz-new"),
            json!("../x"),
            json!("ünïcode"),
            json!(["fuzz-a"]),
            json!("a/b"),
        ],
        "namespace" => vec![
            json!("other"),
            json!(""),
            json!(5),
            json!("fuzz-missing"),
            json!(NS),
            json!("kube-system"),
        ],
        "generateName" => vec![json!("gen-"), json!(5), json!(""), json!("UPPER-")],
        "labels" | "matchLabels" => vec![
            json!(["a"]),
            json!({"app": 5}),
            json!({"bad key!": "v"}),
            json!({"app": "x".repeat(64)}),
            json!({"a/b/c": "x"}),
            json!({"app": null}),
            json!("s"),
            json!({"app": "other"}),
        ],
        "annotations" => vec![
            json!({"k": 1}),
            json!({"k": "x".repeat(300_000)}),
            json!([]),
            json!({"kubectl.kubernetes.io/last-applied-configuration": "{not json"}),
        ],
        "resourceVersion" => vec![
            json!("abc"),
            json!("0"),
            json!("999999999"),
            json!(5),
            json!(""),
            json!("-1"),
        ],
        "uid" => vec![
            json!("x"),
            json!(5),
            json!("00000000-0000-0000-0000-000000000000"),
        ],
        "finalizers" => vec![
            json!(["example.com/hold"]),
            json!("x"),
            json!([1]),
            json!(["kubernetes"]),
            json!(["foregroundDeletion"]),
            json!(["orphan"]),
            json!(["a", "a"]),
        ],
        "ownerReferences" => vec![
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "fuzz-a",
                    "uid": "00000000-0000-0000-0000-000000000000"}]),
            json!([{}]),
            json!("x"),
            json!([{"uid": 5}]),
            json!([{"apiVersion": "nope/v9", "kind": "Nope", "name": "n", "uid": "u",
                    "controller": true, "blockOwnerDeletion": true}]),
        ],
        "deletionTimestamp" | "creationTimestamp" => {
            vec![json!("2020-01-01T00:00:00Z"), json!("garbage"), json!(5)]
        }
        "deletionGracePeriodSeconds" | "generation" => vec![json!(-1), json!("x"), json!(9)],
        "managedFields" => vec![
            json!([{}]),
            json!("x"),
            json!([{"manager": 5}]),
            json!([{"manager": "m", "operation": "Apply", "apiVersion": "v1",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:k": {}}}}]),
            json!([{"manager": "m", "operation": "Bogus", "fieldsV1": "notobj"}]),
            json!([{"manager": "m", "operation": "Update", "fieldsType": "FieldsV2"}]),
        ],
        "data" => vec![
            json!({"k": 1}),
            json!(["a"]),
            json!({"bad key/": "v"}),
            json!({"k": null}),
            json!("s"),
            json!({"bin": "dup with binaryData"}),
            json!({"": "empty key"}),
        ],
        "binaryData" => vec![
            json!({"k": "not base64!"}),
            json!({"k": 5}),
            json!({"k": ""}),
            json!({"k": "AAEC/w=="}),
        ],
        "immutable" => vec![
            json!("yes"),
            json!(1),
            json!(false),
            json!(true),
            json!(null),
        ],
        "replicas" => vec![
            json!(-1),
            json!("3"),
            json!(1.5),
            json!(2_147_483_648_i64),
            json!(null),
            json!(5),
        ],
        "selector" => vec![
            json!({}),
            json!({"matchLabels": {"app": "other"}}),
            json!({"matchExpressions": [{"key": "app", "operator": "Bogus"}]}),
            json!({"matchExpressions": [{"key": "app", "operator": "In"}]}),
            json!("x"),
            json!("app=web"),
        ],
        "containers" => vec![
            json!([]),
            json!([{}]),
            json!([{"name": "web"}]),
            json!("x"),
            json!([{"name": "web", "image": "x"}, {"name": "web", "image": "y"}]),
            json!([{"name": "UPPER", "image": "x", "ports": [{"containerPort": 70000}]}]),
        ],
        "containerPort" | "port" => vec![json!(0), json!(70000), json!("80"), json!(-1)],
        "cpu" | "memory" => vec![
            json!("abc"),
            json!(-1),
            json!("1e100"),
            json!(5),
            json!("-1"),
        ],
        "maxSurge" | "maxUnavailable" => vec![json!("200%"), json!("x%"), json!(-1), json!(0)],
        "strategy" => vec![
            json!({"type": "Bogus"}),
            json!({"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
            json!({"type": "Recreate"}),
        ],
        "size" => vec![
            json!(-1),
            json!(101),
            json!("3"),
            json!(1.5),
            json!(null),
            json!(50),
        ],
        "color" => vec![json!("purple"), json!(5), json!("green")],
        "tags" => vec![json!(["a", "a"]), json!([1]), json!("a"), json!([])],
        "ports" => vec![
            json!([{"name": "x"}, {"name": "x"}]),
            json!([{}]),
            json!([{"name": "y", "port": "80"}]),
        ],
        "pattern" => vec![json!("ABC"), json!("a".repeat(17)), json!("ok")],
        "extra" => vec![
            nested(60, json!(1), false),
            json!({"$patch": "delete"}),
            json!(7),
        ],
        "scope" => vec![json!("Cluster"), json!("Galaxy"), json!(null)],
        "group" => vec![json!("other.dev"), json!(""), json!("UPPER")],
        "plural" | "singular" => vec![json!("Widgets"), json!(""), json!(5), json!("gadgets")],
        "versions" => vec![
            json!([]),
            json!([{"name": "v1", "served": false, "storage": false}]),
            json!([{"name": "v1", "served": true, "storage": true},
                   {"name": "v1", "served": true, "storage": true}]),
            json!([{"name": "v1", "served": true, "storage": true}]),
        ],
        "openAPIV3Schema" => vec![
            json!({"type": "bogus"}),
            json!({"type": "object", "properties": {"spec": {"type": "string"}}}),
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            json!({"$ref": "#/definitions/loop"}),
        ],
        "conversion" => vec![json!({"strategy": "Webhook"}), json!({"strategy": "None"})],
        "status" => vec![
            json!({"replicas": "x"}),
            json!({"phase": 5}),
            json!([]),
            json!({"replicas": 3, "readyReplicas": 9, "conditions": [{"type": "x"}]}),
        ],
        _ => vec![],
    };
    if pool.is_empty() || rng.pct(25) {
        random_value(rng, 3)
    } else {
        rng.pick(&pool).clone()
    }
}

fn escape_token(t: &str) -> String {
    t.replace('~', "~0").replace('/', "~1")
}

/// Every JSON pointer in `v`, the root (`""`) included.
fn pointers(v: &Value, prefix: &str, out: &mut Vec<String>) {
    out.push(prefix.to_string());
    if out.len() > 400 {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                pointers(c, &format!("{prefix}/{}", escape_token(k)), out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate().take(20) {
                pointers(c, &format!("{prefix}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn retype(rng: &mut Rng, v: &Value) -> Value {
    match v {
        Value::String(s) => match rng.below(3) {
            0 => s.parse::<i64>().map_or(json!(7), |n| json!(n)),
            1 => json!([s]),
            _ => json!({ "value": s }),
        },
        Value::Number(n) => json!(n.to_string()),
        Value::Bool(b) => json!(b.to_string()),
        Value::Array(a) => {
            let m: Map<String, Value> = a
                .iter()
                .enumerate()
                .map(|(i, x)| (i.to_string(), x.clone()))
                .collect();
            Value::Object(m)
        }
        Value::Object(m) => Value::Array(m.values().cloned().collect()),
        Value::Null => json!({}),
    }
}

/// Drops, replaces, retypes or adds fields of `obj`.
fn mutate(rng: &mut Rng, obj: &mut Value) {
    let n = rng.below(4) + usize::from(rng.pct(80));
    for _ in 0..n {
        let mut ptrs = Vec::new();
        pointers(obj, "", &mut ptrs);
        let p = rng.pick(&ptrs).clone();
        if p.is_empty() {
            if rng.pct(10) {
                *obj = random_value(rng, 4);
            }
            continue;
        }
        let (parent, last) = p.rsplit_once('/').unwrap_or_default();
        match rng.below(10) {
            0 | 1 => {
                // Drop the field or element.
                match obj.pointer_mut(parent) {
                    Some(Value::Object(m)) => {
                        m.remove(&last.replace("~1", "/").replace("~0", "~"));
                    }
                    Some(Value::Array(a)) => {
                        if let Ok(i) = last.parse::<usize>()
                            && i < a.len()
                        {
                            a.remove(i);
                        }
                    }
                    _ => {}
                }
            }
            2 | 3 => {
                if let Some(t) = obj.pointer_mut(&p) {
                    *t = retype(rng, t);
                }
            }
            4..=6 => {
                let v = interesting(rng, &p);
                if let Some(t) = obj.pointer_mut(&p) {
                    *t = v;
                }
            }
            7 => {
                // A new (often near-duplicate) sibling key.
                let key = format!(
                    "{}{}",
                    last.replace("~1", "/").replace("~0", "~"),
                    rng.pick(&["", " ", "\u{200b}", "X", "-", ".", "\u{0}"])
                );
                let v = random_value(rng, 2);
                if let Some(Value::Object(m)) = obj.pointer_mut(parent) {
                    m.insert(key, v);
                }
            }
            8 => {
                let v = random_value(rng, 3);
                if let Some(t) = obj.pointer_mut(&p) {
                    *t = v;
                }
            }
            _ => {
                let v = if rng.pct(50) {
                    nested(rng.below(140) + 1, json!("deep"), rng.pct(50))
                } else {
                    json!(null)
                };
                if let Some(t) = obj.pointer_mut(&p) {
                    *t = v;
                }
            }
        }
    }
}

/// Bytes appended to a body.
const TAILS: &[&[u8]] = &[b",}", b"]]", b"\0", b" trailing", b"{"];
/// Bytes inserted into a body.
const SNIPPETS: &[&[u8]] = &[
    b"\"\\ud800\"",
    b"NaN",
    b"Infinity",
    b"/* c */",
    b"\xff\xfe",
    b"\"kind\":\"Pod\",",
    b"\"metadata\":5,",
    b"1e99999",
];
/// Keys inserted at the start of the top-level object (JSON duplicates).
const DUPLICATES: &[&[u8]] = &[
    b"\"kind\":\"Secret\",",
    b"\"metadata\":{\"name\":\"dup\"},",
    b"\"apiVersion\":\"v9\",",
    b"\"data\":[],",
];

/// Byte-level damage to a serialized body.
fn damage(rng: &mut Rng, body: &mut Vec<u8>) {
    let n = rng.below(3) + 1;
    for _ in 0..n {
        let len = body.len();
        match rng.below(9) {
            0 if len > 0 => body.truncate(rng.below(len)),
            1 if len > 0 => {
                let i = rng.below(len);
                body[i] ^= 1 << rng.below(8);
            }
            2 => {
                let i = rng.below(len + 1);
                body.insert(i, rng.next() as u8);
            }
            3 => body.extend_from_slice(rng.pick::<&[u8]>(TAILS)),
            4 => {
                let mut v = b"\xEF\xBB\xBF".to_vec();
                v.extend_from_slice(body);
                *body = v;
            }
            5 => {
                let i = rng.below(len + 1);
                let snippet: &[u8] = rng.pick::<&[u8]>(SNIPPETS);
                body.splice(i..i, snippet.iter().copied());
            }
            6 => {
                // Duplicate the first key of the top-level object.
                if let Some(i) = body.iter().position(|b| *b == b'{') {
                    let dup: &[u8] = rng.pick::<&[u8]>(DUPLICATES);
                    body.splice(i + 1..i + 1, dup.iter().copied());
                }
            }
            _ => {
                let i = rng.below(len + 1);
                let j = (i + rng.below(16)).min(len);
                body.drain(i..j);
            }
        }
    }
}

fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    let n = match rng.below(4) {
        0 => 0,
        1 => rng.below(8),
        2 => rng.below(200),
        _ => rng.below(5000),
    };
    (0..n).map(|_| rng.next() as u8).collect()
}

const INVALID_YAML: &[&str] = &[
    "key: [unclosed",
    "\tkey: tab-indented\n",
    "a: &x [*x]\n",
    "metadata: *undefined\n",
    "--- !!binary AAAA\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fuzz-a}\n---\napiVersion: v1\n",
    "- a\n- b\n",
    "",
    "~\n",
    ": : :\n",
    "key: !!int notanint\n",
    "? [complex, key]\n: v\n",
    "1: 2\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fuzz-a\ndata: {k: .nan, j: .inf}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fuzz-a\n  name: dup\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fuzz-a, labels: {a: [1, 2]}}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fuzz-a}\ndata: {k: !!binary aGVsbG8=}\n",
    "%YAML 9.9\n---\na: 1\n",
    "a: 'unterminated\n",
    "a: \"\\uD800\"\n",
];

/// A YAML alias bomb: `levels` levels of `width` aliases each.
fn yaml_bomb(levels: usize, width: usize) -> String {
    let mut s = String::from("l0: &l0 [\"lol\"]\n");
    for l in 1..=levels {
        let refs = vec![format!("*l{}", l - 1); width].join(", ");
        let _ = writeln!(s, "l{l}: &l{l} [{refs}]");
    }
    s
}

fn yaml_of(rng: &mut Rng, v: &Value) -> Vec<u8> {
    if rng.pct(15) {
        return if rng.pct(15) {
            yaml_bomb(rng.below(9) + 1, 9).into_bytes()
        } else if rng.pct(10) {
            format!("{}1{}", "[".repeat(5000), "]".repeat(5000)).into_bytes()
        } else {
            rng.pick(INVALID_YAML).as_bytes().to_vec()
        };
    }
    let mut body = serde_yaml::to_string(v).unwrap_or_default().into_bytes();
    if rng.pct(10) {
        damage(rng, &mut body);
    }
    body
}

fn protobuf_of(rng: &mut Rng, v: &Value) -> Vec<u8> {
    let mut body = match rng.below(5) {
        0 => {
            let mut b = mni_protobuf::MAGIC.to_vec();
            b.extend(random_bytes(rng));
            b
        }
        1 => mni_protobuf::MAGIC.to_vec(),
        _ => mni_protobuf::encode(v).unwrap_or_else(|_| {
            let mut b = mni_protobuf::MAGIC.to_vec();
            b.extend(random_bytes(rng));
            b
        }),
    };
    if rng.pct(60) {
        let n = rng.below(4) + 1;
        for _ in 0..n {
            let len = body.len();
            match rng.below(4) {
                0 if len > 4 => body.truncate(4 + rng.below(len - 4)),
                1 if len > 4 => {
                    let i = 4 + rng.below(len - 4);
                    body[i] = rng.next() as u8;
                }
                2 => {
                    let i = 4.min(len) + rng.below(len.saturating_sub(4) + 1);
                    let byte = *rng.pick(&[0x0a_u8, 0x12, 0xff, 0x80, 0x08, 0x1a]);
                    body.insert(i, byte);
                }
                _ => {
                    // A varint length that claims far more than there is.
                    body.extend_from_slice(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
                }
            }
        }
    }
    body
}

/// A body object for `kind`: usually a mutation of the current object.
fn object_for(rng: &mut Rng, kind: Kind, current: &BTreeMap<&str, (Kind, Value)>) -> Value {
    let same: Vec<&Value> = current
        .values()
        .filter(|(k, _)| *k == kind)
        .map(|(_, v)| v)
        .collect();
    let others: Vec<&Value> = current.values().map(|(_, v)| v).collect();
    let mut v = if rng.pct(90) && !same.is_empty() {
        (*rng.pick(&same)).clone()
    } else {
        (*rng.pick(&others)).clone()
    };
    if rng.pct(50)
        && let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut)
    {
        // Usually write without a precondition, sometimes with a stale or garbage one.
        if rng.pct(80) {
            m.remove("resourceVersion");
        } else {
            m.insert("resourceVersion".into(), json!(rng.pick(&["1", "x", "0"])));
        }
    }
    if rng.pct(30)
        && let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut)
    {
        m.remove("managedFields");
    }
    if rng.pct(85) {
        mutate(rng, &mut v);
    }
    v
}

fn json_patch(rng: &mut Rng, target: &Value) -> Value {
    let mut ptrs = Vec::new();
    pointers(target, "", &mut ptrs);
    let bad = [
        "",
        "/",
        "metadata",
        "/metadata/labels/~2",
        "/spec/template/spec/containers/-",
        "/data/-",
        "/nonexistent/deep/path",
        "/metadata/labels/a~1b",
        "/spec/tags/99",
        "/spec/tags/-1",
        "/spec/tags/01",
        "/metadata/name",
        "/metadata/namespace",
        "/kind",
        "/apiVersion",
        "/metadata/resourceVersion",
        "/metadata/uid",
        "/status",
    ];
    let path = |rng: &mut Rng| -> String {
        if rng.pct(70) {
            rng.pick(&ptrs).clone()
        } else {
            rng.pick(&bad).to_string()
        }
    };
    if rng.pct(4) {
        // Copy growth: each op doubles a subtree.
        let from = rng.pick(&["/metadata", "/data", "/spec", ""]).to_string();
        let ops: Vec<Value> = (0..rng.below(14) + 1)
            .map(|i| json!({"op": "copy", "from": from, "path": format!("{from}/c{i}")}))
            .collect();
        return Value::Array(ops);
    }
    if rng.pct(5) {
        return random_value(rng, 3);
    }
    let n = if rng.pct(3) {
        rng.below(3000)
    } else {
        rng.below(6)
    };
    let mut ops = Vec::new();
    for _ in 0..n {
        let p = path(rng);
        let op = *rng.pick(&[
            "add", "add", "remove", "replace", "replace", "move", "copy", "test", "frob", "",
        ]);
        let mut o = json!({"op": op, "path": p});
        match op {
            "move" | "copy" => {
                // Often a parent moved or copied into its own child.
                let from = if rng.pct(40) {
                    p.rsplit_once('/')
                        .map(|(a, _)| a.to_string())
                        .unwrap_or_default()
                } else {
                    path(rng)
                };
                o["from"] = json!(from);
            }
            "test" => {
                o["value"] = if rng.pct(50) {
                    target.pointer(&p).cloned().unwrap_or(Value::Null)
                } else {
                    random_value(rng, 2)
                };
            }
            "remove" => {}
            _ if n > 20 => o["value"] = json!(ops.len()),
            _ => o["value"] = interesting(rng, &p),
        }
        if rng.pct(5) {
            let m = o.as_object_mut().expect("object");
            match rng.below(4) {
                0 => {
                    m.remove("path");
                }
                1 => {
                    m.insert("path".into(), json!(5));
                }
                2 => {
                    m.remove("value");
                }
                _ => {
                    m.insert("extra".into(), json!(true));
                }
            }
        }
        ops.push(o);
    }
    Value::Array(ops)
}

fn merge_patch(rng: &mut Rng, target: &Value) -> Value {
    if rng.pct(8) {
        return random_value(rng, 3);
    }
    let mut patch = json!({});
    let mut ptrs = Vec::new();
    pointers(target, "", &mut ptrs);
    for _ in 0..rng.below(5) + 1 {
        let p = rng.pick(&ptrs).clone();
        if p.is_empty() {
            continue;
        }
        let tokens: Vec<String> = p
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let value = match rng.below(4) {
            0 => Value::Null,
            1 => interesting(rng, &p),
            2 => json!({"nested": {"deeper": null, "x": random_value(rng, 2)}}),
            _ => random_value(rng, 2),
        };
        let mut cur = &mut patch;
        for (i, t) in tokens.iter().enumerate() {
            if !cur.is_object() {
                *cur = json!({});
            }
            let m = cur.as_object_mut().expect("object");
            if i + 1 == tokens.len() {
                m.insert(t.clone(), value.clone());
                break;
            }
            cur = m.entry(t.clone()).or_insert_with(|| json!({}));
        }
    }
    patch
}

fn directive(rng: &mut Rng, target: &Value) -> (String, Value) {
    let fields: Vec<String> = target
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let field = if fields.is_empty() {
        "containers".to_string()
    } else {
        rng.pick(&fields).clone()
    };
    match rng.below(6) {
        0 => (
            "$patch".into(),
            json!(rng.pick(&["replace", "delete", "merge", "bogus", ""])),
        ),
        1 => (
            "$retainKeys".into(),
            if rng.pct(70) {
                json!([field])
            } else {
                random_value(rng, 2)
            },
        ),
        2 => (
            format!("$setElementOrder/{field}"),
            if rng.pct(50) {
                json!([{"name": "sidecar"}, {"name": "web"}, {"name": "ghost"}])
            } else {
                random_value(rng, 2)
            },
        ),
        3 => (
            format!("$deleteFromPrimitiveList/{field}"),
            json!(rng.pick(&[json!(["a"]), json!("x"), json!([{}])])),
        ),
        4 => (format!("$bogus/{field}"), json!(1)),
        _ => (
            field,
            json!([{"$patch": "delete", "name": "web"}, {"name": "new", "image": "x"}]),
        ),
    }
}

fn strategic_patch(rng: &mut Rng, target: &Value) -> Value {
    let mut patch = merge_patch(rng, target);
    if !patch.is_object() {
        return patch;
    }
    // Sprinkle directives over the patch and at well-known list parents.
    let mut ptrs = Vec::new();
    pointers(&patch, "", &mut ptrs);
    for _ in 0..rng.below(4) + 1 {
        let p = rng.pick(&ptrs).clone();
        let t = target.pointer(&p).cloned().unwrap_or(Value::Null);
        let (k, v) = directive(rng, &t);
        if let Some(Value::Object(m)) = patch.pointer_mut(&p) {
            m.insert(k, v);
        }
    }
    if rng.pct(30) {
        let containers = match rng.below(4) {
            0 => json!([{"name": "web", "$patch": "delete"}]),
            1 => {
                json!([{"name": "web", "env": [{"name": "A", "$patch": "delete"}, {"name": "C", "value": "3"}]}])
            }
            2 => json!([{"$patch": "replace"}, {"name": "only", "image": "x"}]),
            _ => json!([{"image": "no-name"}, 5, null]),
        };
        patch["spec"] = json!({"template": {"spec": {
            "containers": containers,
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}],
            "$retainKeys": ["containers", "volumes"]
        }}});
    }
    patch
}

fn random_query(rng: &mut Rng, query: &mut Vec<(String, String)>, watch_ok: bool) {
    let params: &[(&str, &[&str])] = &[
        (
            "labelSelector",
            &[
                "app=fuzz-a",
                "app in (fuzz-a,fuzz-b)",
                "!app",
                "app!=",
                "=x",
                "a,,b",
                "app notin ()",
                "ünï=code",
                "app==web",
                "tier",
                "app in (a",
                "x=y,",
            ],
        ),
        (
            "fieldSelector",
            &[
                "metadata.name=fuzz-a",
                "metadata.namespace!=x",
                "spec.foo=bar",
                "garbage",
                "metadata.name==fuzz-web",
                "metadata.name=",
                "status.phase=Running",
                "=",
            ],
        ),
        (
            "limit",
            &["-1", "0", "1", "2", "abc", "99999999999999999999", "1.5"],
        ),
        (
            "continue",
            &[
                "garbage",
                "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0",
                "%%%",
                "eyJydiI6LTEsInN0YXJ0IjoiL3JlZ2lzdHJ5In0=",
                "",
            ],
        ),
        (
            "resourceVersion",
            &[
                "0",
                "",
                "1",
                "abc",
                "-5",
                "1e3",
                " 1",
                "18446744073709551616",
            ],
        ),
        (
            "resourceVersionMatch",
            &["Exact", "NotOlderThan", "bogus", ""],
        ),
        ("dryRun", &["All", "all", "bogus", "", "None"]),
        (
            "fieldValidation",
            &["Strict", "Warn", "Ignore", "bogus", ""],
        ),
        ("fieldManager", &["fuzz", "", "kubectl", "x\u{1}y"]),
        ("force", &["true", "false", "maybe"]),
        (
            "propagationPolicy",
            &["Foreground", "Background", "Orphan", "bogus"],
        ),
        ("gracePeriodSeconds", &["0", "-1", "30", "x"]),
        ("pretty", &["true", "1"]),
        ("allowWatchBookmarks", &["true", "x"]),
        ("sendInitialEvents", &["true", "false", "x"]),
        ("timeoutSeconds", &["0", "1", "-1", "x"]),
        ("includeUninitialized", &["true"]),
    ];
    for _ in 0..rng.below(4) {
        let (k, vs) = rng.pick(params);
        let v = if rng.pct(90) {
            rng.pick(vs).to_string()
        } else {
            random_string(rng).chars().take(500).collect()
        };
        let v = if *k == "fieldManager" && rng.pct(10) {
            "m".repeat(200)
        } else {
            v
        };
        query.push(((*k).to_string(), v));
    }
    if watch_ok && rng.pct(4) {
        query.push((
            "watch".into(),
            rng.pick(&["true", "1", "false", "x"]).to_string(),
        ));
        query.push((
            "timeoutSeconds".into(),
            rng.pick(&["0", "1", "1", "1"]).to_string(),
        ));
    }
}

fn encode_query(q: &[(String, String)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in q {
        s.append_pair(k, v);
    }
    s.finish()
}

fn encode_segment(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

const WRONG_TYPES: &[&str] = &[
    "text/plain",
    "application/xml",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/apply-patch+cbor",
    "application/cbor",
    "",
    "*/*",
    "application/json-patch+json",
    ";;;",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/merge-patch+json",
];

const ACCEPTS: &[&str] = &[
    "application/json",
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    "application/vnd.kubernetes.protobuf",
    "application/yaml",
    "text/html",
    "*/*",
    ";;,,",
    "application/json;as=Table;g=meta.k8s.io,application/json",
];

fn gen_case(rng: &mut Rng, current: &BTreeMap<&str, (Kind, Value)>) -> Case {
    let kind = *rng.pick(&ALL_KINDS);
    let names: Vec<&str> = current
        .iter()
        .filter(|(_, (k, _))| *k == kind)
        .map(|(n, _)| *n)
        .collect();
    // The path: an item (most often), its subresource, the collection, or nonsense.
    let (mut path, item, sub) = match rng.below(20) {
        0..=9 => {
            let name = rng.pick(&names).to_string();
            (kind.item(&name), Some(name), None)
        }
        10..=12 if !kind.subresources().is_empty() => {
            let name = rng.pick(&names).to_string();
            let sub = *rng.pick(kind.subresources());
            (format!("{}/{sub}", kind.item(&name)), Some(name), Some(sub))
        }
        13..=15 => (kind.collection(), None, None),
        16 => {
            let name = *rng.pick(&["fuzz-ghost", "UPPER", "a..b", "ünï", "x y", "%2F"]);
            (
                kind.item(&encode_segment(name)),
                Some(name.to_string()),
                None,
            )
        }
        17 => {
            let p = rng.pick(&[
                "/api/v1/namespaces/fuzz-missing/configmaps",
                "/api/v1/namespaces/fuzz-missing/configmaps/fuzz-a",
                "/apis/apps/v1/namespaces/default/deployments/fuzz-web/bogus",
                "/apis/apps/v1/namespaces/default/deployments/fuzz-web/status/extra",
                "/api/v1/namespaces/default/configmaps/fuzz-a/scale",
                "/apis/fuzz.mni.dev/v2/namespaces/default/widgets",
                "/apis/fuzz.mni.dev/v1/widgets/fuzz-widget",
                "/apis/nope/v1/things",
                "/api/v1/configmaps/fuzz-a",
                "/api",
                "/apis/fuzz.mni.dev",
                "/apis/fuzz.mni.dev/v1",
                "/api/v1/namespaces/default/configmaps//",
                "/api/v1/namespaces/default/configmaps/fuzz-a/",
                "/openapi/v3/apis/fuzz.mni.dev/v1",
                "/version",
                "/",
            ]);
            (p.to_string(), None, None)
        }
        _ => (kind.collection(), None, None),
    };
    let on_item = item.is_some() && sub.is_none();
    // Mostly the verbs the path serves, sometimes any verb.
    let method = if rng.pct(12) {
        rng.pick(&[
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
            Method::HEAD,
            Method::OPTIONS,
            Method::TRACE,
            Method::CONNECT,
        ])
        .clone()
    } else if item.is_some() {
        rng.pick(&[
            Method::GET,
            Method::PUT,
            Method::PUT,
            Method::PATCH,
            Method::PATCH,
            Method::PATCH,
            Method::PATCH,
            Method::DELETE,
        ])
        .clone()
    } else {
        rng.pick(&[Method::GET, Method::POST, Method::POST, Method::DELETE])
            .clone()
    };
    let mut query = Vec::new();
    if rng.pct(40) {
        random_query(rng, &mut query, method == Method::GET && item.is_none());
    }
    // What the body is aimed at: the object at the path, or a random seed.
    let target = item
        .as_deref()
        .and_then(|n| current.get(n))
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| object_for(rng, kind, current));
    let mut content_type = None;
    let mut body = Vec::new();
    match method {
        Method::POST | Method::PUT => {
            let mut obj = object_for(rng, kind, current);
            if on_item
                && rng.pct(60)
                && let (Some(m), Some(name)) = (
                    obj.get_mut("metadata").and_then(Value::as_object_mut),
                    item.as_deref(),
                )
            {
                m.insert("name".into(), json!(name));
            }
            if method == Method::POST
                && rng.pct(50)
                && let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut)
            {
                // A new object, so that creation gets past AlreadyExists to validation.
                if rng.pct(70) {
                    m.insert("name".into(), json!(format!("fuzz-new-{}", rng.below(4))));
                } else {
                    m.remove("name");
                    m.insert("generateName".into(), json!("fuzz-gen-"));
                }
                m.remove("resourceVersion");
                m.remove("uid");
            }
            if sub == Some("scale") && rng.pct(70) {
                obj = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                             "metadata": {"name": item.clone().unwrap_or_default(), "namespace": NS},
                             "spec": {"replicas": interesting(rng, "/spec/replicas")}});
            }
            let (ct, b) = match rng.below(20) {
                0..=10 => {
                    let mut b = serde_json::to_vec(&obj).unwrap_or_default();
                    if rng.pct(15) {
                        damage(rng, &mut b);
                    }
                    ("application/json", b)
                }
                11..=13 => ("application/yaml", yaml_of(rng, &obj)),
                14..=15 => (
                    "application/vnd.kubernetes.protobuf",
                    protobuf_of(rng, &obj),
                ),
                16 => ("application/json", random_bytes(rng)),
                17 => (
                    "application/json",
                    serde_json::to_vec(&random_value(rng, 5)).unwrap_or_default(),
                ),
                _ => (
                    *rng.pick(WRONG_TYPES),
                    if rng.pct(50) {
                        serde_json::to_vec(&obj).unwrap_or_default()
                    } else {
                        random_bytes(rng)
                    },
                ),
            };
            content_type = Some(ct.to_string());
            body = b;
        }
        Method::PATCH => {
            let ct = if rng.pct(88) {
                *rng.pick(PATCH_TYPES)
            } else {
                *rng.pick(WRONG_TYPES)
            };
            body = match ct {
                "application/json-patch+json" => {
                    serde_json::to_vec(&json_patch(rng, &target)).unwrap_or_default()
                }
                "application/merge-patch+json" => {
                    serde_json::to_vec(&merge_patch(rng, &target)).unwrap_or_default()
                }
                "application/strategic-merge-patch+json" => {
                    serde_json::to_vec(&strategic_patch(rng, &target)).unwrap_or_default()
                }
                "application/apply-patch+yaml" => {
                    if !query.iter().any(|(k, _)| k == "fieldManager") && rng.pct(85) {
                        query.push(("fieldManager".into(), "fuzz".into()));
                    }
                    if rng.pct(20) {
                        query.push(("force".into(), "true".into()));
                    }
                    let mut obj = object_for(rng, kind, current);
                    if let (Some(m), Some(name)) = (
                        obj.get_mut("metadata").and_then(Value::as_object_mut),
                        item.as_deref(),
                    ) && rng.pct(70)
                    {
                        m.insert("name".into(), json!(name));
                        m.remove("resourceVersion");
                        m.remove("managedFields");
                    }
                    if rng.pct(15) {
                        serde_json::to_vec(&obj).unwrap_or_default()
                    } else {
                        yaml_of(rng, &obj)
                    }
                }
                _ => {
                    if rng.pct(50) {
                        serde_json::to_vec(&merge_patch(rng, &target)).unwrap_or_default()
                    } else {
                        random_bytes(rng)
                    }
                }
            };
            if rng.pct(8) {
                damage(rng, &mut body);
            }
            content_type = Some(ct.to_string());
        }
        Method::DELETE => {
            if rng.pct(40) {
                let mut opts = json!({"apiVersion": "v1", "kind": "DeleteOptions"});
                let uid = target
                    .pointer("/metadata/uid")
                    .cloned()
                    .unwrap_or(json!("x"));
                let rv = target
                    .pointer("/metadata/resourceVersion")
                    .cloned()
                    .unwrap_or(json!("1"));
                let choices = [
                    (
                        "propagationPolicy",
                        json!(rng.pick(&["Foreground", "Background", "Orphan", "bogus"])),
                    ),
                    (
                        "gracePeriodSeconds",
                        interesting(rng, "/gracePeriodSeconds"),
                    ),
                    (
                        "preconditions",
                        json!({"uid": if rng.pct(50) { uid } else { json!("wrong") }}),
                    ),
                    (
                        "preconditions",
                        json!({"resourceVersion": if rng.pct(50) { rv } else { json!("1") }}),
                    ),
                    (
                        "dryRun",
                        json!(rng.pick(&[json!(["All"]), json!("All"), json!(["bogus"])])),
                    ),
                    (
                        "orphanDependents",
                        json!(rng.pick(&[json!(true), json!("x")])),
                    ),
                    ("kind", json!("Pod")),
                ];
                for _ in 0..rng.below(3) + 1 {
                    let (k, v) = rng.pick(&choices);
                    opts[*k] = v.clone();
                }
                if rng.pct(20) {
                    mutate(rng, &mut opts);
                }
                body = serde_json::to_vec(&opts).unwrap_or_default();
                content_type = Some("application/json".into());
            } else if rng.pct(10) {
                body = random_bytes(rng);
                content_type = Some((*rng.pick(WRONG_TYPES)).to_string());
            }
        }
        _ => {
            if rng.pct(10) {
                body = random_bytes(rng);
                content_type = Some((*rng.pick(WRONG_TYPES)).to_string());
            }
        }
    }
    if rng.pct(3) {
        // A body past the 3 MiB limit.
        body = vec![b' '; OVER_LIMIT + 1 + rng.below(1000)];
    }
    if rng.pct(2) {
        content_type = None;
    }
    let accept = rng.pct(15).then(|| (*rng.pick(ACCEPTS)).to_string());
    let dry_runs: Vec<&str> = query
        .iter()
        .filter(|(k, _)| k == "dryRun")
        .map(|(_, v)| v.as_str())
        .collect();
    let watch = method == Method::GET
        && query
            .iter()
            .any(|(k, v)| k == "watch" && (v == "true" || v == "1"));
    if path.ends_with("//") {
        path.pop();
    }
    Case {
        method,
        path,
        query: encode_query(&query),
        content_type,
        accept,
        body,
        watch,
        dry_run: dry_runs == ["All"],
        kind: Some(kind),
    }
}

// ---------------------------------------------------------------------------------------------
// The harness.

struct Harness {
    http: Http,
    base: String,
    token: String,
}

impl Harness {
    async fn call(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: &Value,
    ) -> (u16, Value) {
        let case = Case {
            method,
            path: path.to_string(),
            query: String::new(),
            content_type: Some(content_type.to_string()),
            accept: None,
            body: if body.is_null() {
                Vec::new()
            } else {
                serde_json::to_vec(body).expect("json")
            },
            watch: false,
            dry_run: false,
            kind: None,
        };
        let r = send(&self.http, &self.base, &self.token, &case)
            .await
            .unwrap_or_else(|e| panic!("harness request {} {path}: {e}", case.method));
        let v = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        (r.status, v)
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call(Method::GET, path, "application/json", &Value::Null)
            .await
    }
}

fn holds_async_work(obj: &Value) -> bool {
    let m = &obj["metadata"];
    !m["deletionTimestamp"].is_null()
        || m["finalizers"].as_array().is_some_and(|a| !a.is_empty())
        || m["ownerReferences"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
}

fn object_name(obj: &Value) -> String {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Waits until the store has been quiet for a moment (a garbage collector pass that began
/// before the test stripped finalizers and owners has finished).
async fn wait_quiet(server: &mni_apiserver::Server) {
    let start = Instant::now();
    let mut last = server.revision();
    let mut since = Instant::now();
    while since.elapsed() < Duration::from_millis(250) && start.elapsed() < Duration::from_secs(10)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = server.revision();
        if now != last {
            last = now;
            since = Instant::now();
        }
    }
}

/// Restores the seeded objects (and removes everything else the case created), so that the next
/// case starts from the seeded state. Returns a problem with a seeded object, if any.
async fn restore(
    h: &Harness,
    server: &mni_apiserver::Server,
    seeds: &[Seed],
    baseline: &[(Kind, String)],
    current: &mut BTreeMap<&'static str, (Kind, Value)>,
) -> Option<String> {
    let mut problem = None;
    let keep = |kind: Kind, name: &str| {
        seeds.iter().any(|s| s.kind == kind && s.name == name)
            || baseline.iter().any(|(k, n)| *k == kind && n == name)
    };
    // Objects being deleted, with finalizers or owners, are the garbage collector's: let it
    // finish, then strip what is left so nothing happens in the background later.
    let mut listed = Vec::new();
    for kind in ALL_KINDS {
        let (code, list) = h.get(&kind.collection()).await;
        if code == 200 {
            for item in list["items"].as_array().cloned().unwrap_or_default() {
                listed.push((kind, item));
            }
        }
    }
    if listed.iter().any(|(_, o)| holds_async_work(o)) {
        for (kind, obj) in &listed {
            if holds_async_work(obj) {
                let patch = json!({"metadata": {"finalizers": null, "ownerReferences": null}});
                let path = kind.item(&encode_segment(&object_name(obj)));
                h.call(Method::PATCH, &path, "application/merge-patch+json", &patch)
                    .await;
            }
        }
        wait_quiet(server).await;
    }
    for (kind, obj) in &listed {
        let name = object_name(obj);
        if !keep(*kind, &name) {
            let (code, body) = h
                .call(
                    Method::DELETE,
                    &kind.item(&encode_segment(&name)),
                    "application/json",
                    &Value::Null,
                )
                .await;
            if !(code < 300 || code == 404) {
                problem = Some(format!(
                    "deleting the created {kind:?} {name:?}: {code} {body}"
                ));
            }
        }
    }
    for seed in seeds {
        let path = seed.kind.item(seed.name);
        let (code, got) = h.get(&path).await;
        let recorded = current.get(seed.name).map(|(_, v)| v);
        let unchanged = code == 200
            && recorded.is_some_and(|r| {
                r.pointer("/metadata/resourceVersion") == got.pointer("/metadata/resourceVersion")
            });
        if unchanged {
            continue;
        }
        if code == 200 {
            if got["kind"] != seed.kind.kind() || got["apiVersion"] != seed.kind.api_version() {
                problem = Some(format!("seeded {path} reads back as {got}"));
            }
            let (code, body) = h
                .call(Method::DELETE, &path, "application/json", &Value::Null)
                .await;
            if code >= 300 {
                problem = Some(format!("deleting seeded {path}: {code} {body}"));
            }
        } else if code != 404 {
            problem = Some(format!("seeded {path}: GET answered {code} {got}"));
        }
        if seed.kind == Kind::Crd {
            // The CR goes with its CRD: make sure it is recreated too.
            current.retain(|_, (k, _)| *k != Kind::Widget);
        }
        let (code, created) = h
            .call(
                Method::POST,
                &seed.kind.collection(),
                "application/json",
                &seed.pristine,
            )
            .await;
        if code == 409 && seed.kind == Kind::Widget {
            // The CR survived its CRD's deletion: keep what is there.
            let (_, got) = h.get(&path).await;
            current.insert(seed.name, (seed.kind, got));
            continue;
        }
        assert!(
            code == 201,
            "re-creating seeded {path}: {code} {created} (after: {problem:?})"
        );
        current.insert(seed.name, (seed.kind, created));
    }
    problem
}

#[derive(Default)]
struct Failures {
    by_signature: BTreeMap<String, Vec<String>>,
    total: usize,
}

impl Failures {
    fn add(&mut self, signature: String, report: String) {
        self.total += 1;
        let list = self.by_signature.entry(signature.clone()).or_default();
        if list.len() < PRINT_PER_SIGNATURE {
            eprintln!("\n=== FUZZ FAILURE [{signature}]\n{report}");
            list.push(report);
        }
    }
}

/// The 504 kube-apiserver answers when a read names a resourceVersion the store has not
/// reached (reason `Timeout`, cause `ResourceVersionTooLarge`): allowed.
fn too_large_resource_version(status: u16, body: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    status == 504
        && v["reason"] == "Timeout"
        && v.pointer("/details/causes/0/reason") == Some(&json!("ResourceVersionTooLarge"))
}

fn status_problem(status: u16, body: &[u8]) -> Option<String> {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return Some("error body is not JSON".into());
    };
    if v["kind"] != "Status" {
        return Some("error body is not a Status (kind)".into());
    }
    if v["apiVersion"] != "v1" {
        return Some("Status apiVersion is not v1".into());
    }
    if v["code"].as_u64() != Some(u64::from(status)) {
        return Some("Status code differs from the HTTP status".into());
    }
    if v["reason"].as_str().is_none_or(str::is_empty) {
        return Some("Status has no reason".into());
    }
    if v["status"] != "Failure" {
        return Some("Status status is not Failure".into());
    }
    None
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_request_bodies_and_patches() {
    let cases = env_u64("MNI_FUZZ_CASES").unwrap_or(DEFAULT_CASES);
    let seed = env_u64("MNI_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let only = env_u64("MNI_FUZZ_ONLY");
    let started = Instant::now();
    let (server, _client) = support::start().await;
    let http: Http = Client::builder(TokioExecutor::new())
        // A fresh connection per request: one the server closed after a 413 is never reused.
        .pool_max_idle_per_host(0)
        .build(HttpConnector::new());
    let h = Harness {
        http,
        base: server.url(),
        token: server.admin_token().to_string(),
    };

    // Whatever exists before seeding (e.g. a root CA ConfigMap) is left alone.
    let mut baseline = Vec::new();
    for kind in [Kind::Crd, Kind::ConfigMap, Kind::Deployment] {
        let (code, list) = h.get(&kind.collection()).await;
        assert_eq!(code, 200, "listing {kind:?}: {list}");
        for item in list["items"].as_array().cloned().unwrap_or_default() {
            baseline.push((kind, object_name(&item)));
        }
    }
    let seeds = seeds();
    let mut current: BTreeMap<&'static str, (Kind, Value)> = BTreeMap::new();
    assert_eq!(
        restore(&h, &server, &seeds, &baseline, &mut current).await,
        None
    );

    let mut failures = Failures::default();
    let mut run = 0u64;
    let (mut sending, mut restoring, mut generating) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut restores = 0;
    let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
    for index in 0..cases {
        if only.is_some_and(|o| o != index) {
            continue;
        }
        let mut rng = Rng::new(seed ^ index.wrapping_mul(0xA076_1D64_78BD_642F));
        let t = Instant::now();
        let case = gen_case(&mut rng, &current);
        generating += t.elapsed();
        run += 1;
        if index % 500 == 0 {
            eprintln!(
                "fuzz: case {index} at {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        let before = server.revision();
        let sent = Instant::now();
        let result = send(&h.http, &h.base, &h.token, &case).await;
        sending += sent.elapsed();
        let after = server.revision();
        if sent.elapsed() > SLOW {
            eprintln!(
                "fuzz: slow ({:.1} s): {}",
                sent.elapsed().as_secs_f64(),
                describe(&case, index, seed)
            );
        }
        let what = format!(
            "{} {:?}{}",
            case.method,
            case.kind.map_or("-", Kind::kind),
            if case.path.ends_with("/status") {
                "/status"
            } else if case.path.ends_with("/scale") {
                "/scale"
            } else {
                ""
            }
        );
        let resp = match result {
            Ok(r) => r,
            Err(_) if case.body.len() > OVER_LIMIT => {
                // The server answers 413 and closes the connection without reading the rest
                // (curl sees the 413); hyper's client reports the write that failed instead.
                *statuses.entry(413).or_default() += 1;
                continue;
            }
            Err(e) => {
                failures.add(
                    format!("{what}: no answer"),
                    format!("{}\n  -> {e}", describe(&case, index, seed)),
                );
                continue;
            }
        };
        *statuses.entry(resp.status).or_default() += 1;
        let report = |problem: &str| {
            format!(
                "{}\n  -> {} {}\n  problem: {problem}",
                describe(&case, index, seed),
                resp.status,
                show_body(&resp.body)
            )
        };
        let reason = serde_json::from_slice::<Value>(&resp.body)
            .ok()
            .and_then(|v| v["reason"].as_str().map(str::to_string))
            .unwrap_or_default();
        if too_large_resource_version(resp.status, &resp.body) {
            // kube-apiserver's answer, after waiting, to a resourceVersion from the future.
        } else if resp.status >= 500 {
            failures.add(
                format!("{what}: {} {reason}", resp.status),
                report("server error for a client request"),
            );
        } else if resp.status >= 400 {
            // HEAD responses have no body to check.
            if case.method != Method::HEAD
                && let Some(p) = status_problem(resp.status, &resp.body)
            {
                failures.add(format!("{what}: {} {p}", resp.status), report(&p));
            }
        } else if resp.status >= 300 || resp.status < 200 {
            failures.add(
                format!("{what}: unexpected {}", resp.status),
                report("unexpected status"),
            );
        } else if !case.watch
            && case.method != Method::HEAD
            && (case.path.starts_with("/api/") || case.path.starts_with("/apis/"))
            && serde_json::from_slice::<Value>(&resp.body)
                .ok()
                .is_none_or(|v| !v["kind"].is_string())
        {
            failures.add(
                format!("{what}: {} body", resp.status),
                report("success body is not a JSON object with a kind"),
            );
        }
        let sub_path = case.kind.is_some_and(|k| {
            k.subresources().iter().any(|sub| {
                case.path.ends_with(&format!("/{sub}")) && case.path.starts_with(&k.collection())
            })
        });
        if sub_path
            && (case.method == Method::DELETE || case.method == Method::POST)
            && (200..300).contains(&resp.status)
        {
            // kube-apiserver serves only get, update and patch on status and scale.
            failures.add(
                format!("{what}: {} on a subresource accepted", case.method),
                report("status and scale subresources serve get, update and patch only (405)"),
            );
        }
        // A DELETE on a collection deletes item by item and reports the first failure, as
        // kube-apiserver's deletecollection does: a 4xx there may follow partial deletion.
        let delete_collection =
            case.method == Method::DELETE && case.kind.is_some_and(|k| case.path == k.collection());
        if after != before {
            if (400..500).contains(&resp.status) && !delete_collection {
                failures.add(
                    format!("{what}: store changed on {} {reason}", resp.status),
                    report(&format!(
                        "store revision went {before} -> {after} on a rejected request"
                    )),
                );
            } else if case.method == Method::GET || case.method == Method::HEAD {
                failures.add(
                    format!("{what}: store changed on read"),
                    report(&format!(
                        "store revision went {before} -> {after} on a read"
                    )),
                );
            } else if case.dry_run {
                failures.add(
                    format!("{what}: store changed on dryRun"),
                    report(&format!(
                        "store revision went {before} -> {after} with dryRun=All"
                    )),
                );
            }
        }
        if after == before {
            continue;
        }
        // A write succeeded: what it wrote must read back, and be accepted again as it is.
        if let Some(kind) = case.kind
            && (200..300).contains(&resp.status)
        {
            let written: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
            let name = if written["kind"] == kind.kind() {
                object_name(&written)
            } else {
                String::new()
            };
            let expected_path = kind.item(&encode_segment(&name));
            if !name.is_empty()
                && (case.path == expected_path
                    || case.path.starts_with(&format!("{expected_path}/"))
                    || case.path == kind.collection())
            {
                let (code, got) = h.get(&expected_path).await;
                if code == 200 && holds_async_work(&got) {
                    // Being deleted, or owned: the garbage collector may act on it any time.
                } else if code == 200 {
                    if got["kind"] != kind.kind() || got["apiVersion"] != kind.api_version() {
                        failures.add(
                            format!("{what}: written object reads back wrong"),
                            report(&format!("GET {expected_path} then answered {got}")),
                        );
                    } else {
                        let (code, body) = h
                            .call(
                                Method::PUT,
                                &format!("{expected_path}?dryRun=All"),
                                "application/json",
                                &got,
                            )
                            .await;
                        if code >= 300 {
                            failures.add(
                                format!("{what}: stored object rejected on re-PUT ({code})"),
                                report(&format!(
                                    "the server stored {got}\n  but a dry-run PUT of it answered {code} {body}"
                                )),
                            );
                        }
                    }
                } else if code == 404 && sub_path {
                    failures.add(
                        format!("{what}: subresource write removed the object"),
                        report(&format!(
                            "a {} on a subresource answered {} and {expected_path} is gone",
                            case.method, resp.status
                        )),
                    );
                } else if code != 404 {
                    failures.add(
                        format!("{what}: written object unreadable ({code})"),
                        report(&format!("GET {expected_path} then answered {code} {got}")),
                    );
                }
            }
        }
        let t = Instant::now();
        let restored = restore(&h, &server, &seeds, &baseline, &mut current).await;
        restoring += t.elapsed();
        restores += 1;
        if let Some(p) = restored {
            failures.add(
                format!("{what}: restore"),
                report(&format!("restoring the seeds after it: {p}")),
            );
        }
    }

    // The seeded objects are all still there, readable and of their kind.
    for s in &seeds {
        let (code, got) = h.get(&s.kind.item(s.name)).await;
        assert_eq!(code, 200, "seeded {} at the end: {got}", s.name);
        assert_eq!(got["kind"], s.kind.kind(), "{got}");
        assert_eq!(got["apiVersion"], s.kind.api_version(), "{got}");
    }
    for kind in ALL_KINDS {
        let (code, list) = h.get(&kind.collection()).await;
        assert_eq!(code, 200, "list {kind:?} at the end: {list}");
    }
    let elapsed = started.elapsed();
    eprintln!(
        "fuzz: {generating:?} generating, {sending:?} sending cases, {restoring:?} restoring seeds {restores} times"
    );
    eprintln!(
        "fuzz: {run} cases (seed {seed:#x}) in {:.1} s; statuses {statuses:?}; {} failures in {} signatures",
        elapsed.as_secs_f64(),
        failures.total,
        failures.by_signature.len()
    );
    if failures.total > 0 {
        let summary: Vec<String> = failures
            .by_signature
            .keys()
            .map(|s| format!("  {s}"))
            .collect();
        panic!(
            "{} fuzz failures; signatures:\n{}",
            failures.total,
            summary.join("\n")
        );
    }
    server.shutdown().await;
}
