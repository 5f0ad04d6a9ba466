//! Unit tests of conditions: transition times, change detection, validation, JSON and schema.

use super::*;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

fn at(second: i64) -> Time {
    Time(Timestamp::from_second(second).expect("valid timestamp"))
}

#[test]
fn a_new_condition_gets_now_as_transition_time() {
    let mut cs = Vec::new();
    assert!(cs.set(
        READY,
        ConditionStatus::False,
        "Starting",
        "",
        Some(1),
        at(100)
    ));
    let c = cs.find(READY).expect("set");
    assert_eq!(c.last_transition_time, at(100));
    assert_eq!(c.observed_generation, Some(1));
    assert!(!cs.is_true(READY));
    assert!(cs.is_false(READY));
}

#[test]
fn transition_time_moves_only_when_the_status_changes() {
    let mut cs = Vec::new();
    cs.set(
        READY,
        ConditionStatus::False,
        "Starting",
        "",
        Some(1),
        at(100),
    );

    // New reason, message and generation: changed, but no transition.
    assert!(cs.set(
        READY,
        ConditionStatus::False,
        "Waiting",
        "2 of 3 ready",
        Some(2),
        at(200)
    ));
    let c = cs.find(READY).expect("set");
    assert_eq!(c.last_transition_time, at(100));
    assert_eq!(
        (c.reason.as_str(), c.message.as_str(), c.observed_generation),
        ("Waiting", "2 of 3 ready", Some(2))
    );

    // A status change is a transition.
    assert!(cs.set(
        READY,
        ConditionStatus::True,
        reasons::RECONCILED,
        "",
        Some(2),
        at(300)
    ));
    assert_eq!(cs.find(READY).expect("set").last_transition_time, at(300));
    assert!(cs.is_true(READY));
}

#[test]
fn setting_the_same_condition_again_is_no_change() {
    let mut cs = Vec::new();
    cs.set(
        READY,
        ConditionStatus::True,
        reasons::RECONCILED,
        "ok",
        Some(3),
        at(100),
    );
    let before = cs.clone();
    assert!(!cs.set(
        READY,
        ConditionStatus::True,
        reasons::RECONCILED,
        "ok",
        Some(3),
        at(500)
    ));
    assert_eq!(cs, before, "not even the transition time moves");
}

#[test]
fn one_condition_per_type_and_remove() {
    let mut cs = Vec::new();
    cs.set(
        READY,
        ConditionStatus::True,
        reasons::RECONCILED,
        "",
        None,
        at(1),
    );
    cs.set(
        DEGRADED,
        ConditionStatus::False,
        reasons::AS_EXPECTED,
        "",
        None,
        at(1),
    );
    cs.set(
        READY,
        ConditionStatus::False,
        reasons::RECONCILE_FAILED,
        "x",
        None,
        at(2),
    );
    assert_eq!(cs.len(), 2);
    assert!(cs.remove_condition(DEGRADED));
    assert!(!cs.remove_condition(DEGRADED));
    assert!(cs.find(DEGRADED).is_none());
    assert!(cs.find(PROGRESSING).is_none());
    assert!(!cs.is_true(PROGRESSING) && !cs.is_false(PROGRESSING));
}

#[test]
fn try_set_rejects_bad_reasons_and_changes_nothing() {
    let mut cs: Vec<Condition> = Vec::new();
    let err = cs
        .try_set(
            READY,
            ConditionStatus::True,
            "not camel case",
            "",
            None,
            at(1),
        )
        .expect_err("spaces");
    assert_eq!(err, ConditionError::InvalidReason("not camel case".into()));
    assert!(err.to_string().contains("CamelCase"), "{err}");
    assert!(cs.is_empty());
    assert!(matches!(
        cs.try_set("bad type!", ConditionStatus::True, "Ok", "", None, at(1)),
        Err(ConditionError::InvalidType(_))
    ));
    let long = "x".repeat(MESSAGE_MAX + 1);
    assert!(matches!(
        cs.try_set(READY, ConditionStatus::True, "Ok", &long, None, at(1)),
        Err(ConditionError::MessageTooLong(_))
    ));
    assert_eq!(
        cs.try_set(READY, ConditionStatus::True, "Ok", "", None, at(1)),
        Ok(true)
    );
}

#[test]
fn hand_written_checks_agree_with_the_schema_patterns() {
    let reason = regex::Regex::new(REASON_PATTERN).expect("reason pattern");
    for r in [
        "Reconciled",
        "A",
        "a",
        "Foo_Bar",
        "Foo:Bar,Baz",
        "Foo1",
        "Ends_",
        "",
        "1Foo",
        "Foo:",
        "Foo,",
        "Foo Bar",
        "Foo-Bar",
        "_Foo",
        "Ünïcode",
    ] {
        assert_eq!(is_valid_reason(r), reason.is_match(r), "reason {r:?}");
    }
    let type_ = regex::Regex::new(TYPE_PATTERN).expect("type pattern");
    for t in [
        "Ready",
        "example.com/Ready",
        "a.b-c/X.y_z",
        "Ready.",
        "-Ready",
        "",
        "/Ready",
        "Example.com/Ready",
        "a..b/Ready",
        "a/b/c",
        "a-/X",
        "x_y",
        "1",
        "mni.dev/",
    ] {
        assert_eq!(is_valid_type(t), type_.is_match(t), "type {t:?}");
    }
    assert!(!is_valid_reason(&"A".repeat(REASON_MAX + 1)));
    assert!(is_valid_reason(&"A".repeat(REASON_MAX)));
    for r in [
        reasons::RECONCILED,
        reasons::RECONCILING,
        reasons::RECONCILE_FAILED,
        reasons::AVAILABLE,
        reasons::MINIMUM_REPLICAS_UNAVAILABLE,
        reasons::INVALID_SPEC,
        reasons::DELETING,
        reasons::AS_EXPECTED,
    ] {
        assert!(is_valid_reason(r), "{r}");
    }
}

#[test]
fn json_matches_metav1_condition() {
    let mut cs = Vec::new();
    cs.set(
        READY,
        ConditionStatus::True,
        "Reconciled",
        "all good",
        Some(4),
        at(1_700_000_000),
    );
    let ours = serde_json::to_value(&cs[0]).expect("serialize");
    let expected = json!({
        "type": "Ready",
        "status": "True",
        "observedGeneration": 4,
        "lastTransitionTime": "2023-11-14T22:13:20Z",
        "reason": "Reconciled",
        "message": "all good",
    });
    assert_eq!(ours, expected);
    // k8s-openapi's metav1.Condition reads and writes the same JSON.
    let meta: MetaCondition = serde_json::from_value(ours.clone()).expect("as metav1");
    assert_eq!(serde_json::to_value(&meta).expect("metav1 json"), expected);
    assert_eq!(MetaCondition::from(cs[0].clone()), meta);
    assert_eq!(Condition::try_from(meta).expect("back"), cs[0]);
    let back: Condition = serde_json::from_value(expected).expect("deserialize");
    assert_eq!(back, cs[0]);

    // observedGeneration is optional and omitted when unset; message is always written.
    let minimal = json!({"type": "Ready", "status": "Unknown",
        "lastTransitionTime": "2023-11-14T22:13:20Z", "reason": "Reconciling", "message": ""});
    let c: Condition = serde_json::from_value(minimal.clone()).expect("minimal");
    assert_eq!(c.observed_generation, None);
    assert_eq!(serde_json::to_value(&c).expect("serialize"), minimal);
    let bad = json!({"type": "Ready", "status": "Maybe",
        "lastTransitionTime": "2023-11-14T22:13:20Z", "reason": "X", "message": ""});
    assert!(serde_json::from_value::<Condition>(bad).is_err());
    let meta_bad = MetaCondition {
        status: "Maybe".into(),
        ..MetaCondition::from(c)
    };
    assert_eq!(
        Condition::try_from(meta_bad),
        Err(ConditionError::InvalidStatus("Maybe".into()))
    );
}

#[test]
fn schema_is_that_of_metav1_condition() {
    let settings = schemars::generate::SchemaSettings::openapi3().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = serde_json::to_value(
        settings
            .into_generator()
            .into_root_schema_for::<Condition>(),
    )
    .expect("schema");
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    required.sort_unstable();
    assert_eq!(
        required,
        ["lastTransitionTime", "message", "reason", "status", "type"]
    );
    let p = &schema["properties"];
    assert_eq!(p["status"]["enum"], json!(["True", "False", "Unknown"]));
    assert_eq!(p["status"]["type"], "string");
    assert_eq!(p["reason"]["pattern"], REASON_PATTERN);
    assert_eq!(p["reason"]["minLength"], 1);
    assert_eq!(p["reason"]["maxLength"], 1024);
    assert_eq!(p["type"]["pattern"], TYPE_PATTERN);
    assert_eq!(p["type"]["maxLength"], 316);
    assert_eq!(p["message"]["maxLength"], 32768);
    assert_eq!(p["observedGeneration"]["minimum"].as_f64(), Some(0.0));
    assert_eq!(p["lastTransitionTime"]["format"], "date-time");
}
