//! Random objects and configurations: apply and update never panic, and what they write
//! always decodes again.

use mni_fieldmanager::{
    FieldSet, ManagedFieldsEntry, TypeInfo, apply, builtin, decode_managed_fields, update,
};
use serde_json::{Map, Value, json};

/// A small deterministic generator (no external crates).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

const KEYS: [&str; 16] = [
    "spec",
    "template",
    "containers",
    "name",
    "image",
    "ports",
    "containerPort",
    "protocol",
    "metadata",
    "labels",
    "finalizers",
    "tolerations",
    "replicas",
    "status",
    "conditions",
    "type",
];

fn value(rng: &mut Rng, depth: u32) -> Value {
    let pick = if depth == 0 {
        rng.below(5)
    } else {
        rng.below(8)
    };
    match pick {
        0 => Value::Null,
        1 => json!(rng.below(3) == 0),
        2 => json!(rng.below(4)),
        3 => json!(["a", "b", "c"][rng.below(3) as usize]),
        4 => json!(rng.below(3) as f64 + 0.5),
        5 | 6 => {
            let mut map = Map::new();
            for _ in 0..rng.below(4) {
                let key = KEYS[rng.below(KEYS.len() as u64) as usize];
                map.insert(key.to_string(), value(rng, depth - 1));
            }
            Value::Object(map)
        }
        _ => Value::Array((0..rng.below(4)).map(|_| value(rng, depth - 1)).collect()),
    }
}

fn config(rng: &mut Rng) -> Value {
    let mut v = value(rng, 5);
    if !v.is_object() || rng.below(10) > 0 {
        let mut map = match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        map.insert("apiVersion".into(), json!("apps/v1"));
        map.insert("kind".into(), json!("Deployment"));
        v = Value::Object(map);
    }
    v
}

fn check_entries(entries: &[ManagedFieldsEntry]) {
    for e in entries {
        let encoded = e.fields_v1.to_fields_v1();
        assert_eq!(
            FieldSet::from_fields_v1(&encoded).as_ref(),
            Ok(&e.fields_v1)
        );
        assert!(!e.fields_v1.is_empty());
    }
}

#[test]
fn random_applies_and_updates_never_panic() {
    let types_list: [TypeInfo; 3] = [
        builtin("apps", "Deployment").unwrap_or_default(),
        TypeInfo::deduced(),
        builtin("", "Pod").unwrap_or_default(),
    ];
    let mut rng = Rng(42);
    let managers = ["a", "b", "kubectl", "c"];
    for round in 0..300 {
        let types = &types_list[round % types_list.len()];
        let mut live: Option<Value> = None;
        let mut managed: Vec<ManagedFieldsEntry> = Vec::new();
        for step in 0..6 {
            let manager = managers[rng.below(4) as usize];
            let now = format!("2024-01-01T00:{:02}:{:02}Z", round % 60, step);
            if rng.below(3) == 0 {
                let new = config(&mut rng);
                let entries = update(
                    live.as_ref(),
                    &new,
                    manager,
                    &managed,
                    types,
                    &now,
                    "apps/v1",
                    None,
                );
                check_entries(&entries);
                let mut stored = new;
                mni_fieldmanager::set_managed_fields(&mut stored, &entries);
                live = Some(stored);
                managed = entries;
                continue;
            }
            let cfg = config(&mut rng);
            let force = rng.below(2) == 0;
            let sub = (rng.below(5) == 0).then_some("status");
            if let Ok(applied) = apply(
                live.as_ref(),
                &cfg,
                manager,
                &managed,
                force,
                types,
                &now,
                "apps/v1",
                sub,
            ) {
                check_entries(&applied.managed);
                assert_eq!(
                    decode_managed_fields(&applied.object).ok(),
                    Some(applied.managed.clone())
                );
                live = Some(applied.object);
                managed = applied.managed;
            }
        }
    }
}

#[test]
fn random_fields_v1_never_panics() {
    let mut rng = Rng(7);
    let keys = [
        "f:a",
        "f:b",
        ".",
        "k:{\"name\":\"x\"}",
        "k:[1]",
        "v:1",
        "v:\"s\"",
        "i:2",
        "i:x",
        "z",
    ];
    for _ in 0..2000 {
        let mut v = json!({});
        for _ in 0..rng.below(6) {
            let key = keys[rng.below(keys.len() as u64) as usize];
            let child = match rng.below(4) {
                0 => json!({}),
                1 => json!({"f:c": {}}),
                2 => json!({".": {}, "f:d": {}}),
                _ => json!(1),
            };
            if let Value::Object(m) = &mut v {
                m.insert(key.to_string(), child);
            }
        }
        if let Ok(set) = FieldSet::from_fields_v1(&v) {
            assert_eq!(FieldSet::from_fields_v1(&set.to_fields_v1()), Ok(set));
        }
    }
}
