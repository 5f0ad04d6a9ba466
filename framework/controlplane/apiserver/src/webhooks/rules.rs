//! Which webhooks (and admission policies) a request goes to: `rules`, the namespace and
//! object selectors, and the CEL `matchConditions`, with kube-apiserver's matching semantics
//! (`*` and `res/sub` resources, scope, selectors that are ignored where they do not apply).
//! A [`Matcher`] is what webhooks and ValidatingAdmissionPolicies share; policies add
//! `excludeResourceRules` and `resourceNames`.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1 as reg;
use serde_json::Value;

use mni_apimachinery::Selector;

use super::Error;
use super::review::Attributes;

/// One of `rules`, with upstream's default scope `*`.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    operations: Vec<String>,
    groups: Vec<String>,
    versions: Vec<String>,
    resources: Vec<String>,
    scope: String,
    /// `resourceNames` of a policy's rule (empty: any name).
    names: Vec<String>,
}

impl Rule {
    /// From the API type.
    pub(crate) fn from_api(r: &reg::RuleWithOperations) -> Self {
        Rule {
            operations: r.operations.clone().unwrap_or_default(),
            groups: r.api_groups.clone().unwrap_or_default(),
            versions: r.api_versions.clone().unwrap_or_default(),
            resources: r.resources.clone().unwrap_or_default(),
            scope: r.scope.clone().unwrap_or_else(|| "*".to_string()),
            names: Vec::new(),
        }
    }

    /// From a policy's rule, which may name the objects it applies to.
    pub(crate) fn from_named(r: &reg::NamedRuleWithOperations) -> Self {
        Rule {
            operations: r.operations.clone().unwrap_or_default(),
            groups: r.api_groups.clone().unwrap_or_default(),
            versions: r.api_versions.clone().unwrap_or_default(),
            resources: r.resources.clone().unwrap_or_default(),
            scope: r.scope.clone().unwrap_or_else(|| "*".to_string()),
            names: r.resource_names.clone().unwrap_or_default(),
        }
    }

    fn matches(&self, a: &Attributes<'_>) -> bool {
        let any = |list: &[String], want: &str| list.iter().any(|x| x == "*" || x == want);
        any(&self.operations, a.operation.as_str())
            && any(&self.groups, &a.info.group)
            && any(&self.versions, &a.info.version)
            && self.resource_matches(&a.info.plural, a.subresource)
            && (self.names.is_empty() || self.names.iter().any(|n| n == a.name))
            && match self.scope.as_str() {
                "Cluster" => !a.info.namespaced,
                "Namespaced" => a.info.namespaced,
                _ => true,
            }
    }

    /// `pods` matches the resource only, `pods/status` one subresource, `pods/*` every
    /// subresource, `*` every resource and `*/*` everything; `*/status` a subresource of any.
    fn resource_matches(&self, plural: &str, sub: Option<&str>) -> bool {
        self.resources.iter().any(|r| {
            let (res, rsub) = match r.split_once('/') {
                Some((res, s)) => (res, Some(s)),
                None => (r.as_str(), None),
            };
            let res_ok = res == "*" || res == plural;
            let sub_ok = match (rsub, sub) {
                (None, None) => true,
                (None, Some(_)) => false,
                (Some("*"), _) => true,
                (Some(want), Some(have)) => want == have,
                (Some(_), None) => false,
            };
            res_ok && sub_ok
        })
    }
}

/// The rules and selectors that choose the requests a webhook or a policy sees.
#[derive(Debug)]
pub(crate) struct Matcher {
    /// `rules` (`resourceRules` of a policy).
    pub rules: Vec<Rule>,
    /// `excludeResourceRules` of a policy.
    pub exclude: Vec<Rule>,
    /// `namespaceSelector` (empty matches everything).
    pub namespace_selector: Result<Selector, String>,
    /// `objectSelector`.
    pub object_selector: Result<Selector, String>,
}

impl Matcher {
    /// Whether any rule matches the request and no excluding rule does.
    pub(crate) fn matches_rules(&self, a: &Attributes<'_>) -> bool {
        self.rules.iter().any(|r| r.matches(a)) && !self.exclude.iter().any(|r| r.matches(a))
    }

    /// The selectors: `objectSelector` against the new or the old object's labels;
    /// `namespaceSelector` against the labels of the request's namespace (`ns_labels`), or of
    /// the object itself for a Namespace; cluster-scoped objects always match it. A selector
    /// that does not parse is an error for the failure policy to decide.
    pub(crate) fn matches_selectors(
        &self,
        a: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        ns_labels: Option<&BTreeMap<String, String>>,
    ) -> Result<bool, Error> {
        let object_sel = self
            .object_selector
            .as_ref()
            .map_err(|e| Error::Config(format!("objectSelector: {e}")))?;
        let ns_sel = self
            .namespace_selector
            .as_ref()
            .map_err(|e| Error::Config(format!("namespaceSelector: {e}")))?;
        if !object_sel.is_empty() {
            let hit = [object, old]
                .into_iter()
                .flatten()
                .any(|o| object_sel.matches(&labels(o)));
            if !hit {
                return Ok(false);
            }
        }
        if ns_sel.is_empty() {
            return Ok(true);
        }
        let is_namespace = a.info.group.is_empty() && a.info.plural == "namespaces";
        if is_namespace {
            let labels = object.or(old).map(labels).unwrap_or_default();
            return Ok(ns_sel.matches(&labels));
        }
        if !a.info.namespaced {
            return Ok(true);
        }
        Ok(ns_sel.matches(&ns_labels.cloned().unwrap_or_default()))
    }
}

/// A label selector of the API, parsed; absent matches everything.
pub(crate) fn selector(
    s: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
) -> Result<Selector, String> {
    match s {
        None => Ok(Selector::everything()),
        Some(s) => {
            let v = serde_json::to_value(s).map_err(|e| e.to_string())?;
            Selector::from_label_selector(&v).map_err(|e| e.to_string())
        }
    }
}

/// `metadata.labels` of an object. (Not `object::labels`: `object` depends on `builtin`, which
/// validates the configurations with this module.)
fn labels(obj: &Value) -> BTreeMap<String, String> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// Compiled `matchConditions`: each a name and its program (or its compile error).
#[derive(Debug, Default)]
pub(crate) struct Conditions(Vec<(String, Result<Arc<mni_cel::Program>, String>)>);

impl Conditions {
    /// Compiles a webhook's conditions with the variables upstream declares for them.
    pub(crate) fn compile(env: &mni_cel::Env, conditions: Vec<reg::MatchCondition>) -> Self {
        Self::compile_with(
            env,
            conditions,
            &["object", "oldObject", "request", "authorizer"],
        )
    }

    /// Compiles conditions that may use `variables` (a policy's add `params` and
    /// `namespaceObject`).
    pub(crate) fn compile_with(
        env: &mni_cel::Env,
        conditions: Vec<reg::MatchCondition>,
        variables: &[&str],
    ) -> Self {
        Conditions(
            conditions
                .into_iter()
                .map(|c| {
                    let p = env
                        .compile(&c.expression, variables, true)
                        .map(Arc::new)
                        .map_err(|e| e.to_string());
                    (c.name, p)
                })
                .collect(),
        )
    }

    /// Whether the conditions need evaluating at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Evaluates the conditions in order: `false` as soon as one is false (the webhook is
    /// skipped); an error (one failed to compile, errored or is not a bool) goes to the
    /// failure policy, as upstream, unless a later condition is false.
    pub(crate) fn evaluate(
        &self,
        object: Option<&Value>,
        old: Option<&Value>,
        request: &Value,
    ) -> Result<bool, Error> {
        let object = object.map_or(mni_cel::Value::Null, to_cel);
        let old = old.map_or(mni_cel::Value::Null, to_cel);
        let request = to_cel(request);
        self.evaluate_with(&[
            ("object", &object),
            ("oldObject", &old),
            ("request", &request),
        ])
    }

    /// [`evaluate`](Self::evaluate) with the variables already bound.
    pub(crate) fn evaluate_with(
        &self,
        bindings: &[(&str, &mni_cel::Value)],
    ) -> Result<bool, Error> {
        let mut first_error = None;
        for (name, program) in &self.0 {
            let outcome = match program {
                Ok(p) => p.evaluate(bindings).map_err(|e| e.to_string()),
                Err(e) => Err(e.clone()),
            };
            match outcome {
                Ok(mni_cel::Value::Bool(false)) => return Ok(false),
                Ok(mni_cel::Value::Bool(true)) => {}
                Ok(other) => {
                    first_error.get_or_insert(format!(
                        "matchCondition {name:?}: expected a bool, got {}",
                        mni_cel::display(&other)
                    ));
                }
                Err(e) => {
                    first_error.get_or_insert(format!("matchCondition {name:?}: {e}"));
                }
            }
        }
        match first_error {
            Some(e) => Err(Error::MatchCondition(e)),
            None => Ok(true),
        }
    }
}

/// A JSON value as CEL sees an unstructured object: integers as `int`, other numbers as
/// `double`.
pub(crate) fn to_cel(v: &Value) -> mni_cel::Value {
    match v {
        Value::Null => mni_cel::Value::Null,
        Value::Bool(b) => mni_cel::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => mni_cel::Value::Int(i),
            None => mni_cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => mni_cel::string(s),
        Value::Array(items) => mni_cel::list(items.iter().map(to_cel).collect()),
        Value::Object(m) => mni_cel::map(m.iter().map(|(k, v)| (k.clone(), to_cel(v)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(resources: &[&str], scope: &str) -> Rule {
        Rule {
            operations: vec!["CREATE".into()],
            groups: vec!["".into()],
            versions: vec!["v1".into()],
            resources: resources.iter().map(|s| s.to_string()).collect(),
            scope: scope.into(),
            names: Vec::new(),
        }
    }

    fn check(r: &Rule, plural: &str, sub: Option<&str>, expected: bool) {
        assert_eq!(
            r.resource_matches(plural, sub),
            expected,
            "{:?} against {plural} {sub:?}",
            r.resources
        );
    }

    #[test]
    fn resources_and_subresources_match_as_upstream() {
        check(&rule(&["pods"], "*"), "pods", None, true);
        check(&rule(&["pods"], "*"), "pods", Some("status"), false);
        check(&rule(&["pods/status"], "*"), "pods", Some("status"), true);
        check(&rule(&["pods/status"], "*"), "pods", None, false);
        check(&rule(&["pods/*"], "*"), "pods", Some("scale"), true);
        check(&rule(&["*"], "*"), "configmaps", None, true);
        check(&rule(&["*"], "*"), "deployments", Some("scale"), false);
        check(&rule(&["*/*"], "*"), "deployments", Some("scale"), true);
        check(&rule(&["*/scale"], "*"), "deployments", Some("scale"), true);
        check(&rule(&["secrets"], "*"), "configmaps", None, false);
    }

    #[test]
    fn policy_rules_name_objects_and_exclude_requests() {
        use crate::webhooks::{Attributes, Operation};
        let registry = crate::registry::Registry::with_builtins();
        let info = registry.get("", "v1", "configmaps").expect("served");
        let user = mni_rbac::UserInfo::default();
        let a = |name: &'static str| Attributes {
            operation: Operation::Create,
            info: &info,
            subresource: None,
            namespace: Some("default"),
            name,
            user: &user,
            dry_run: false,
        };
        let named = |names: &[&str]| {
            Rule::from_named(&reg::NamedRuleWithOperations {
                operations: Some(vec!["*".into()]),
                api_groups: Some(vec!["".into()]),
                api_versions: Some(vec!["*".into()]),
                resources: Some(vec!["configmaps".into()]),
                resource_names: Some(names.iter().map(|n| n.to_string()).collect()),
                scope: None,
            })
        };
        let m = Matcher {
            rules: vec![named(&[])],
            exclude: vec![named(&["skipped"])],
            namespace_selector: Ok(Selector::everything()),
            object_selector: Ok(Selector::everything()),
        };
        assert!(m.matches_rules(&a("kept")));
        assert!(!m.matches_rules(&a("skipped")));
        let only = Matcher {
            rules: vec![named(&["only"])],
            exclude: Vec::new(),
            ..m
        };
        assert!(only.matches_rules(&a("only")) && !only.matches_rules(&a("kept")));
    }

    #[test]
    fn conditions_skip_error_and_pass() {
        let env = mni_cel::Env::kubernetes();
        let cond = |expr: &str| reg::MatchCondition {
            name: "c".into(),
            expression: expr.into(),
        };
        let obj = json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "n": 2});
        let req = json!({"operation": "CREATE"});
        let c = Conditions::compile(&env, vec![cond("object.metadata.name == 'a'")]);
        assert!(c.evaluate(Some(&obj), None, &req).expect("evaluates"));
        let c = Conditions::compile(&env, vec![cond("request.operation == 'UPDATE'")]);
        assert!(!c.evaluate(Some(&obj), None, &req).expect("evaluates"));
        let c = Conditions::compile(&env, vec![cond("object.missing == 1")]);
        assert!(c.evaluate(Some(&obj), None, &req).is_err());
        let c = Conditions::compile(
            &env,
            vec![cond("object.missing == 1"), cond("object.n == 3")],
        );
        assert!(
            !c.evaluate(Some(&obj), None, &req)
                .expect("false wins over errors")
        );
    }
}
