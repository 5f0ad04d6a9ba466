//! Malformed and hostile input: every case returns an error (or a value) and never panics.
//! Also decodes a hand-built envelope, byte by byte.

use mni_protobuf::{Error, decode, encode, supports};
use serde_json::json;

/// Appends a length-delimited field (tags < 16, lengths < 128 only: enough for hand-built bodies).
fn ld(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag << 3 | 2);
    out.push(u8::try_from(bytes.len()).expect("short"));
    out.extend_from_slice(bytes);
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut tm = Vec::new();
    ld(&mut tm, 1, api_version.as_bytes());
    ld(&mut tm, 2, kind.as_bytes());
    let mut out = b"k8s\0".to_vec();
    ld(&mut out, 1, &tm);
    ld(&mut out, 2, raw);
    out
}

#[test]
fn hand_built_configmap() {
    let mut meta = Vec::new();
    ld(&mut meta, 1, b"cm");
    ld(&mut meta, 3, b"ns");
    let mut entry = Vec::new();
    ld(&mut entry, 1, b"k");
    ld(&mut entry, 2, b"v");
    let mut raw = Vec::new();
    ld(&mut raw, 1, &meta);
    ld(&mut raw, 2, &entry);
    raw.extend_from_slice(&[0x98, 0x06, 0x01]); // unknown varint field 99: skipped
    ld(&mut raw, 2, &[]); // an empty map entry: key "" and value ""
    assert_eq!(
        decode(&envelope("v1", "ConfigMap", &raw)).unwrap(),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}, "data": {"k": "v", "": ""}})
    );
    // Field 4 (immutable, bool) as a varint 1.
    raw.extend_from_slice(&[0x20, 0x01]);
    assert_eq!(
        decode(&envelope("v1", "ConfigMap", &raw)).unwrap()["immutable"],
        true
    );
}

#[test]
fn special_encodings_by_hand() {
    // Service.spec(2).ports(4)[{port(3)=80, targetPort(4)=IntOrString{type 1, strVal "http"}}]
    let mut ios = vec![0x08, 0x01];
    ld(&mut ios, 3, b"http");
    let mut port = vec![0x18, 80];
    ld(&mut port, 4, &ios);
    let mut spec = Vec::new();
    ld(&mut spec, 1, &port);
    let mut raw = Vec::new();
    ld(&mut raw, 2, &spec);
    let svc = decode(&envelope("v1", "Service", &raw)).unwrap();
    assert_eq!(
        svc["spec"]["ports"],
        json!([{"port": 80, "targetPort": "http"}])
    );
    // ObjectMeta.creationTimestamp(8): empty → omitted (Go's zero time); seconds=0 → the epoch.
    let mut meta = Vec::new();
    ld(&mut meta, 8, &[]);
    ld(&mut meta, 9, &[0x08, 0x00]);
    let mut raw = Vec::new();
    ld(&mut raw, 1, &meta);
    let ns = decode(&envelope("v1", "Namespace", &raw)).unwrap();
    assert_eq!(
        ns["metadata"],
        json!({"deletionTimestamp": "1970-01-01T00:00:00Z"})
    );
}

#[test]
fn envelope_errors() {
    assert_eq!(decode(b""), Err(Error::MissingMagic));
    assert_eq!(
        decode(b"{\"kind\":\"ConfigMap\"}"),
        Err(Error::MissingMagic)
    );
    assert_eq!(decode(b"k8s\0"), Err(Error::MissingTypeMeta));
    assert_eq!(
        decode(&[
            b'k', b'8', b's', 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
        ]),
        Err(Error::BadVarint)
    );
    let mut huge = b"k8s\0\x12".to_vec();
    huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    assert!(matches!(decode(&huge), Err(Error::Truncated(_))));
    assert!(matches!(
        decode(&envelope("v1", "ConfigMap", &[0x0a, 0x05, 0x0a])),
        Err(Error::Truncated(_))
    ));
    assert!(matches!(
        decode(&envelope("v1", "ConfigMap", &[0x08, 0x01])),
        Err(Error::WireType { .. })
    ));
    assert!(matches!(
        decode(&envelope("v1", "ConfigMap", &[0x0b])),
        Err(Error::BadKey { .. })
    ));
    let bad_utf8 = {
        let mut meta = Vec::new();
        ld(&mut meta, 1, &[0xff, 0xfe]);
        let mut raw = Vec::new();
        ld(&mut raw, 1, &meta);
        raw
    };
    assert!(matches!(
        decode(&envelope("v1", "ConfigMap", &bad_utf8)),
        Err(Error::InvalidValue { .. })
    ));
    assert_eq!(
        decode(&envelope("example.com/v1", "Widget", &[])),
        Err(Error::UnsupportedKind {
            api_version: "example.com/v1".into(),
            kind: "Widget".into()
        })
    );
    let mut gz = envelope("v1", "ConfigMap", &[]);
    ld(&mut gz, 3, b"gzip");
    assert_eq!(decode(&gz), Err(Error::UnsupportedEncoding("gzip".into())));
}

#[test]
fn encode_errors() {
    assert_eq!(
        encode(&json!({"kind": "ConfigMap"})),
        Err(Error::MissingTypeMeta)
    );
    assert!(matches!(
        encode(&json!({"apiVersion": "v1", "kind": "Widget"})),
        Err(Error::UnsupportedKind { .. })
    ));
    assert!(matches!(
        encode(&json!({"apiVersion": "v1", "kind": "ConfigMap", "dta": {}})),
        Err(Error::UnknownField { .. })
    ));
    assert!(matches!(
        encode(&json!({"apiVersion": "v1", "kind": "ConfigMap", "data": []})),
        Err(Error::JsonType { .. })
    ));
    assert!(matches!(
        encode(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"creationTimestamp": "yesterday"}})
        ),
        Err(Error::InvalidValue { .. })
    ));
    assert!(matches!(
        encode(&json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 1e12}})),
        Err(Error::JsonType { .. })
    ));
}

#[test]
fn deep_nesting_is_rejected() {
    // JSONSchemaProps.not (28) nested far deeper than any real schema.
    let mut props: Vec<u8> = Vec::new();
    for _ in 0..200 {
        let mut outer = vec![0xe2, 0x01]; // tag 28, wire type 2
        let mut len = props.len();
        while len >= 0x80 {
            outer.push((len as u8 & 0x7f) | 0x80);
            len >>= 7;
        }
        outer.push(len as u8);
        outer.extend_from_slice(&props);
        props = outer;
    }
    let wrap = |tag: u8, inner: &[u8]| {
        let mut out = vec![tag << 3 | 2];
        let mut len = inner.len();
        while len >= 0x80 {
            out.push((len as u8 & 0x7f) | 0x80);
            len >>= 7;
        }
        out.push(len as u8);
        out.extend_from_slice(inner);
        out
    };
    // CRD.spec(2).versions(7).schema(4).openAPIV3Schema(1)
    let raw = wrap(2, &wrap(7, &wrap(4, &wrap(1, &props))));
    let mut body = envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", &[]);
    body.truncate(body.len() - 2);
    body.push(0x12);
    body.extend_from_slice(&wrap(0, &raw)[1..]);
    assert!(matches!(decode(&body), Err(Error::TooDeep(_))));
    let mut deep = json!({"type": "object"});
    for _ in 0..200 {
        deep = json!({"not": deep});
    }
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": deep}}]}});
    assert!(matches!(encode(&crd), Err(Error::TooDeep(_))));
}

/// A small deterministic PRNG (xorshift64*), so the fuzz loop needs no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn fixtures() -> Vec<Vec<u8>> {
    let dir = format!("{}/tests/fixtures", env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pb"))
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    out.sort();
    out
}

#[test]
fn truncations_of_real_bodies_never_panic() {
    for body in fixtures() {
        for cut in 0..body.len() {
            let r = decode(&body[..cut]);
            if cut < 8 {
                assert!(r.is_err());
            }
        }
    }
}

#[test]
fn random_bytes_and_mutations_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let bodies = fixtures();
    let (mut ok, mut err) = (0, 0);
    for i in 0..30_000 {
        let mut body = if i % 2 == 0 {
            let mut b = b"k8s\0".to_vec();
            let len = rng.below(64);
            b.extend((0..len).map(|_| rng.next() as u8));
            b
        } else {
            bodies[rng.below(bodies.len())].clone()
        };
        for _ in 0..=rng.below(4) {
            let at = 4 + rng.below(body.len().saturating_sub(4).max(1));
            if at < body.len() {
                body[at] = rng.next() as u8;
            }
        }
        match decode(&body) {
            Ok(v) => {
                ok += 1;
                // Whatever decodes must encode again (possibly to an error), without panicking.
                let _ = encode(&v);
            }
            Err(_) => err += 1,
        }
    }
    assert!(ok > 0 && err > 0, "ok {ok}, err {err}");
}

#[test]
fn supported_kinds() {
    for (v, k) in [
        ("v1", "ConfigMap"),
        ("apps/v1", "Deployment"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
        ("autoscaling/v1", "Scale"),
        ("meta.k8s.io/v1", "DeleteOptions"),
    ] {
        assert!(supports(v, k), "{v} {k}");
    }
    assert!(!supports("v1", "PriorityClass"));
    assert!(!supports("apps/v1beta2", "Deployment"));
}
