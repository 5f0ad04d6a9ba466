//! ValidatingAdmissionPolicies (`admissionregistration.k8s.io/v1`) as kube-apiserver acts on
//! them: CEL validations run in the server on every matching write, bound to requests by
//! ValidatingAdmissionPolicyBindings.
//!
//! A [`PolicySet`] is every binding whose policy exists, parsed and compiled once per change
//! of the policies or bindings (the state layer keeps it beside the webhook snapshot).
//! Matching reuses the webhooks' [`Matcher`] and [`Conditions`]; [`Policy::evaluate`] runs
//! the variables and validations of one policy for one parameter object and returns the
//! [`Decision`]s, which [`Binding::enforce`] turns into denials, warnings or audit lines
//! according to the binding's `validationActions` and the policy's `failurePolicy`.
//! `config` defaults and validates policies and bindings when they are written, and
//! type-checks a policy's expressions into its `status`.
//!
//! This module holds no state and does no storage: `state::policies` finds the parameter
//! objects and the namespace, and runs the policies before the validating webhooks.

mod config;
mod typecheck;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1 as reg;
use serde_json::Value;

use crate::error::ApiError;
use crate::registry::ResourceInfo;
use crate::webhooks::{Attributes, Conditions, Matcher, Rule, selector, to_cel};

pub(crate) use config::{
    default_binding, default_policy, validate_binding, validate_policy, write_status,
};

/// The variables every policy expression may use.
pub(crate) const VARIABLES: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
    "authorizer",
    "variables",
];

/// The variables `matchConditions` may use: all but `variables` (the last), as upstream.
const CONDITION_VARIABLES: &[&str] = VARIABLES.split_at(VARIABLES.len() - 1).0;

/// A compiled expression, or the compile error the failure policy decides on.
type Compiled = Result<Arc<mni_cel::Program>, String>;

/// One of `validations`, compiled.
#[derive(Debug)]
struct Validation {
    expression: String,
    program: Compiled,
    message: Option<String>,
    message_expression: Option<Compiled>,
    reason: Option<&'static str>,
}

/// A ValidatingAdmissionPolicy, parsed and compiled.
#[derive(Debug)]
pub(crate) struct Policy {
    /// `metadata.name`.
    pub name: String,
    /// `spec.paramKind` as (apiVersion, kind).
    pub param_kind: Option<(String, String)>,
    /// `spec.matchConstraints`.
    pub matcher: Matcher,
    /// `spec.matchConditions`, compiled.
    conditions: Conditions,
    /// `spec.variables` in order, compiled.
    variables: Vec<(String, Compiled)>,
    validations: Vec<Validation>,
    /// `failurePolicy: Ignore`.
    pub ignore_failures: bool,
}

/// `spec.validationActions` of a binding.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Actions {
    /// `Deny`: the request is refused.
    pub deny: bool,
    /// `Warn`: the client gets a warning.
    pub warn: bool,
    /// `Audit`: the failure is logged.
    pub audit: bool,
}

/// A ValidatingAdmissionPolicyBinding with its policy.
#[derive(Debug)]
pub(crate) struct Binding {
    /// `metadata.name`.
    pub name: String,
    /// The bound policy.
    pub policy: Arc<Policy>,
    /// `spec.matchResources` (`None`: every request the policy matches).
    pub matcher: Option<Matcher>,
    /// `spec.paramRef`.
    pub param_ref: Option<reg::ParamRef>,
    /// `spec.validationActions`.
    pub actions: Actions,
}

/// Every binding with an existing policy, ordered by policy name, then binding name.
#[derive(Debug, Default)]
pub(crate) struct PolicySet {
    /// The bindings.
    pub bindings: Vec<Binding>,
}

impl PolicySet {
    /// Parses the stored policies and bindings; an object that does not decode is skipped
    /// (the server validated it when it was written).
    pub(crate) fn build(policies: &[Value], bindings: &[Value]) -> Self {
        let env = mni_cel::Env::kubernetes();
        let policies: Vec<Arc<Policy>> = policies
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .map(|p: reg::ValidatingAdmissionPolicy| Arc::new(Policy::parse(p, &env)))
            .collect();
        let mut out: Vec<Binding> = bindings
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .filter_map(|b: reg::ValidatingAdmissionPolicyBinding| {
                let spec = b.spec;
                let policy = policies.iter().find(|p| p.name == spec.policy_name)?;
                let has = |a: &str| spec.validation_actions.iter().any(|x| x == a);
                Some(Binding {
                    name: b.metadata.name.unwrap_or_default(),
                    policy: policy.clone(),
                    matcher: spec.match_resources.map(|m| matcher(m, true)),
                    actions: Actions {
                        deny: has("Deny"),
                        warn: has("Warn"),
                        audit: has("Audit"),
                    },
                    param_ref: spec.param_ref,
                })
            })
            .collect();
        out.sort_by(|a, b| (&a.policy.name, &a.name).cmp(&(&b.policy.name, &b.name)));
        PolicySet { bindings: out }
    }

    /// Whether no policy is bound.
    pub(crate) fn is_empty(&self) -> bool {
        self.bindings.is_empty()
    }
}

/// `matchConstraints` or a binding's `matchResources`. A binding without `resourceRules`
/// does not narrow the policy's resources; a policy without them matches nothing.
fn matcher(m: reg::MatchResources, binding: bool) -> Matcher {
    let rules: Vec<Rule> = m
        .resource_rules
        .unwrap_or_default()
        .iter()
        .map(Rule::from_named)
        .collect();
    let rules = if binding && rules.is_empty() {
        vec![Rule::from_named(&reg::NamedRuleWithOperations {
            api_groups: Some(vec!["*".into()]),
            api_versions: Some(vec!["*".into()]),
            operations: Some(vec!["*".into()]),
            resources: Some(vec!["*".into(), "*/*".into()]),
            ..Default::default()
        })]
    } else {
        rules
    };
    Matcher {
        rules,
        exclude: m
            .exclude_resource_rules
            .unwrap_or_default()
            .iter()
            .map(Rule::from_named)
            .collect(),
        namespace_selector: selector(m.namespace_selector),
        object_selector: selector(m.object_selector),
    }
}

/// The `reason` of a validation as a `Status.reason`, with the HTTP code that goes with it.
fn reason_code(reason: &str) -> u16 {
    match reason {
        "Unauthorized" => 401,
        "Forbidden" => 403,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    }
}

fn known_reason(reason: Option<&str>) -> Option<&'static str> {
    match reason? {
        "Unauthorized" => Some("Unauthorized"),
        "Forbidden" => Some("Forbidden"),
        "Invalid" => Some("Invalid"),
        "RequestEntityTooLarge" => Some("RequestEntityTooLarge"),
        _ => None,
    }
}

impl Policy {
    fn parse(p: reg::ValidatingAdmissionPolicy, env: &mni_cel::Env) -> Self {
        let spec = p.spec.unwrap_or_default();
        let compile = |expr: &str, bool_result: bool| -> Compiled {
            env.compile(expr, VARIABLES, bool_result)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        };
        Policy {
            name: p.metadata.name.unwrap_or_default(),
            param_kind: spec.param_kind.map(|k| {
                (
                    k.api_version.unwrap_or_default(),
                    k.kind.unwrap_or_default(),
                )
            }),
            matcher: matcher(spec.match_constraints.unwrap_or_default(), false),
            conditions: Conditions::compile_with(
                env,
                spec.match_conditions.unwrap_or_default(),
                CONDITION_VARIABLES,
            ),
            variables: spec
                .variables
                .unwrap_or_default()
                .into_iter()
                .map(|v| {
                    let program = compile(&v.expression, false);
                    (v.name, program)
                })
                .collect(),
            validations: spec
                .validations
                .unwrap_or_default()
                .into_iter()
                .map(|v| Validation {
                    program: compile(&v.expression, true),
                    message_expression: v.message_expression.map(|m| compile(&m, false)),
                    expression: v.expression,
                    message: v.message,
                    reason: known_reason(v.reason.as_deref()),
                })
                .collect(),
            ignore_failures: spec.failure_policy.as_deref() == Some("Ignore"),
        }
    }

    /// Runs the policy on one request with one parameter object (`params`, null without a
    /// `paramKind`): the match conditions, then the variables, then every validation.
    /// `Ok(None)`: a match condition is false and the policy does not apply.
    pub(crate) fn evaluate(&self, input: &Input<'_>) -> Option<Vec<Decision>> {
        let object = input.object.map_or(mni_cel::Value::Null, to_cel);
        let old = input.old.map_or(mni_cel::Value::Null, to_cel);
        let request = to_cel(input.request);
        let params = input.params.map_or(mni_cel::Value::Null, to_cel);
        let namespace = input.namespace.map_or(mni_cel::Value::Null, to_cel);
        let base = [
            ("object", &object),
            ("oldObject", &old),
            ("request", &request),
            ("params", &params),
            ("namespaceObject", &namespace),
        ];
        if !self.conditions.is_empty() {
            match self.conditions.evaluate_with(&base) {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(vec![Decision::Error(e.to_string())]),
            }
        }
        // Evaluated in order, each seeing the ones before it; one that fails is left out,
        // so a validation using it fails with `no such key`.
        let mut variables: Vec<(String, mni_cel::Value)> = Vec::new();
        for (name, program) in &self.variables {
            let vars = mni_cel::map(variables.iter().cloned());
            let mut bound = base.to_vec();
            bound.push(("variables", &vars));
            if let Ok(p) = program
                && let Ok(v) = p.evaluate(&bound)
            {
                variables.push((name.clone(), v));
            }
        }
        let vars = mni_cel::map(variables);
        let mut bound = base.to_vec();
        bound.push(("variables", &vars));
        let decisions = self
            .validations
            .iter()
            .filter_map(|v| v.run(&bound))
            .collect();
        Some(decisions)
    }
}

impl Validation {
    /// `None` when the validation passes.
    fn run(&self, bound: &[(&str, &mni_cel::Value)]) -> Option<Decision> {
        let outcome = match &self.program {
            Ok(p) => p.evaluate(bound).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        match outcome {
            Ok(mni_cel::Value::Bool(true)) => None,
            Ok(mni_cel::Value::Bool(false)) => Some(Decision::Deny {
                message: self.message(bound),
                reason: self.reason,
            }),
            Ok(other) => Some(Decision::Error(format!(
                "expression '{}' resulted in a non-bool value {}",
                self.expression,
                mni_cel::display(&other)
            ))),
            Err(e) => Some(Decision::Error(format!(
                "expression '{}' resulted in error: {e}",
                self.expression
            ))),
        }
    }

    /// `messageExpression` when it gives a non-empty single line, else `message`, else
    /// `failed expression: EXPR`.
    fn message(&self, bound: &[(&str, &mni_cel::Value)]) -> String {
        let computed = match &self.message_expression {
            Some(Ok(p)) => match p.evaluate(bound) {
                Ok(mni_cel::Value::String(s)) => {
                    let s = s.trim();
                    (!s.is_empty() && !s.contains('\n')).then(|| s.to_string())
                }
                Ok(_) | Err(_) => None,
            },
            _ => None,
        };
        computed
            .or_else(|| self.message.clone().filter(|m| !m.trim().is_empty()))
            .unwrap_or_else(|| format!("failed expression: {}", self.expression.trim()))
    }
}

/// What one policy evaluation sees.
#[derive(Debug)]
pub(crate) struct Input<'a> {
    /// The new object (`None` for a delete).
    pub object: Option<&'a Value>,
    /// The stored object (`None` for a create).
    pub old: Option<&'a Value>,
    /// The AdmissionRequest without the objects.
    pub request: &'a Value,
    /// The parameter object.
    pub params: Option<&'a Value>,
    /// The request's Namespace, for namespaced resources.
    pub namespace: Option<&'a Value>,
}

/// The result of one failed validation.
#[derive(Debug, Clone)]
pub(crate) enum Decision {
    /// The expression was false.
    Deny {
        /// The message to report.
        message: String,
        /// `reason` (default `Invalid`).
        reason: Option<&'static str>,
    },
    /// The expression could not be evaluated: the failure policy decides.
    Error(String),
}

/// What a binding's validations add up to for one request.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    /// The first denial.
    pub denial: Option<ApiError>,
    /// The warnings for the client.
    pub warnings: Vec<String>,
}

impl Binding {
    /// Whether the request is one the policy's `matchConstraints` and the binding's
    /// `matchResources` both select. A selector that does not parse is an error for the
    /// failure policy.
    pub(crate) fn matches(
        &self,
        a: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        ns_labels: Option<&BTreeMap<String, String>>,
    ) -> Result<bool, crate::webhooks::Error> {
        let policy = &self.policy.matcher;
        if !policy.matches_rules(a) || !policy.matches_selectors(a, object, old, ns_labels)? {
            return Ok(false);
        }
        match &self.matcher {
            None => Ok(true),
            Some(m) => Ok(m.matches_rules(a) && m.matches_selectors(a, object, old, ns_labels)?),
        }
    }

    /// Applies the binding's `validationActions` and the policy's `failurePolicy` to the
    /// decisions of its policy, adding to `verdict`.
    pub(crate) fn enforce(
        &self,
        info: &ResourceInfo,
        name: &str,
        decisions: Vec<Decision>,
        verdict: &mut Verdict,
    ) {
        for d in decisions {
            let (message, reason) = match d {
                Decision::Deny { message, reason } => (message, reason),
                Decision::Error(_) if self.policy.ignore_failures => continue,
                Decision::Error(message) => (message, None),
            };
            if self.actions.warn {
                verdict.warnings.push(format!(
                    "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {message}",
                    self.policy.name, self.name
                ));
            }
            if self.actions.audit {
                tracing::info!(
                    policy = %self.policy.name,
                    binding = %self.name,
                    message = %message,
                    "validation.policy.admission.k8s.io/validation_failure"
                );
            }
            if self.actions.deny && verdict.denial.is_none() {
                verdict.denial = Some(self.denial(info, name, &message, reason));
            }
        }
    }

    /// A configuration failure (no parameter object, an unknown `paramKind`, a bad selector):
    /// `Fail` denies whatever the validation actions, `Ignore` lets the request through.
    pub(crate) fn config_failure(
        &self,
        info: &ResourceInfo,
        name: &str,
        error: &str,
        verdict: &mut Verdict,
    ) {
        if self.policy.ignore_failures {
            tracing::warn!(policy = %self.policy.name, binding = %self.name, %error, "policy failing open");
            return;
        }
        if verdict.denial.is_none() {
            let message = format!("failed to configure binding: {error}");
            verdict.denial = Some(self.denial(info, name, &message, None));
        }
    }

    /// Upstream's denial: `RESOURCE "NAME" is forbidden: ValidatingAdmissionPolicy 'P' with
    /// binding 'B' denied request: MSG`, with the validation's reason (default `Invalid`) and
    /// its code.
    fn denial(
        &self,
        info: &ResourceInfo,
        name: &str,
        message: &str,
        reason: Option<&'static str>,
    ) -> ApiError {
        let reason = reason.unwrap_or("Invalid");
        let message = format!(
            "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {message}",
            self.policy.name, self.name
        );
        let mut details = serde_json::Map::new();
        if !name.is_empty() {
            details.insert("name".into(), Value::String(name.into()));
        }
        if !info.group.is_empty() {
            details.insert("group".into(), Value::String(info.group.clone()));
        }
        details.insert("kind".into(), Value::String(info.plural.clone()));
        details.insert("causes".into(), serde_json::json!([{ "message": message }]));
        ApiError {
            details: Some(Value::Object(details)),
            ..ApiError::new(
                reason_code(reason),
                reason,
                format!(
                    "{} \"{name}\" is forbidden: {message}",
                    info.group_resource()
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(spec: Value) -> Policy {
        let p = serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec}))
            .expect("policy");
        Policy::parse(p, &mni_cel::Env::kubernetes())
    }

    fn run(p: &Policy, object: &Value, params: Option<&Value>) -> Option<Vec<Decision>> {
        p.evaluate(&Input {
            object: Some(object),
            old: None,
            request: &json!({"operation": "CREATE"}),
            params,
            namespace: None,
        })
    }

    fn messages(d: Option<Vec<Decision>>) -> Vec<String> {
        d.expect("applies")
            .into_iter()
            .map(|d| match d {
                Decision::Deny { message, .. } => format!("deny: {message}"),
                Decision::Error(e) => format!("error: {e}"),
            })
            .collect()
    }

    #[test]
    fn messages_come_from_the_expression_the_message_or_the_rule() {
        let p = policy(json!({
            "variables": [{"name": "n", "expression": "object.metadata.name"}],
            "validations": [
                {"expression": "variables.n != 'a'"},
                {"expression": "variables.n != 'a'", "message": "not a"},
                {"expression": "variables.n != 'a'", "messageExpression": "'name ' + variables.n"},
                {"expression": "object.missing == 1"},
                {"expression": "params == null || params.data.max == '1'"},
            ],
        }));
        let obj = json!({"metadata": {"name": "a"}});
        assert_eq!(
            messages(run(&p, &obj, None)),
            [
                "deny: failed expression: variables.n != 'a'",
                "deny: not a",
                "deny: name a",
                "error: expression 'object.missing == 1' resulted in error: no such key: missing",
            ]
        );
        let params = json!({"data": {"max": "2"}});
        assert_eq!(messages(run(&p, &obj, Some(&params))).len(), 5);
    }

    #[test]
    fn false_match_conditions_skip_the_policy() {
        let p = policy(json!({
            "matchConditions": [{"name": "only-b", "expression": "object.metadata.name == 'b'"}],
            "validations": [{"expression": "false"}],
        }));
        assert!(run(&p, &json!({"metadata": {"name": "a"}}), None).is_none());
        assert_eq!(
            messages(run(&p, &json!({"metadata": {"name": "b"}}), None)).len(),
            1
        );
    }

    #[test]
    fn reasons_map_to_codes() {
        assert_eq!(reason_code("Forbidden"), 403);
        assert_eq!(reason_code("Invalid"), 422);
        assert_eq!(known_reason(Some("Bogus")), None);
    }
}
