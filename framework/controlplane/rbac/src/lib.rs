//! Kubernetes RBAC authorization without IO, for mNi's embedded API server.
//!
//! The API server stores Roles, ClusterRoles, RoleBindings and ClusterRoleBindings as
//! `serde_json::Value`; this crate decides, with kube-apiserver's semantics and messages,
//! whether a request is allowed — so that an operator missing a permission fails in tests the
//! way it would fail on a real cluster.
//!
//! Where to start:
//!
//! - [`Authorizer::new`] builds an authorizer from a snapshot of the four RBAC kinds (ClusterRole
//!   aggregation applied, bindings resolved and indexed); rebuild it when they change.
//! - [`Authorizer::authorize`] takes request [`Attributes`] (user, verb, namespace, group,
//!   resource, subresource, name, or a non-resource path) and returns a [`Decision`]. Members
//!   of `system:masters` ([`is_superuser`]) are always allowed.
//! - [`forbidden_message`] / [`forbidden_status`] word the 403 response like kube;
//!   [`access_review_status`] and [`Authorizer::rules_for`] ([`RulesReview::to_status`]) answer
//!   SubjectAccessReviews and SelfSubjectRulesReviews.
//! - [`bootstrap_policy`] is the default policy to install at start (`cluster-admin`,
//!   discovery, basic-user, `admin`/`edit`/`view`, …).
//!
//! Modules: [`attributes`] (users, requests, decisions), [`policy`] (parsing RBAC objects),
//! [`rule`] (rule matching), [`selector`] and [`aggregate`](mod@aggregate) (ClusterRole aggregation),
//! [`authorizer`], [`review`], [`message`], [`bootstrap`].
//!
//! Nothing here panics on malformed objects: they are skipped (see
//! [`Authorizer::warnings`]), which only ever removes permissions.

pub mod aggregate;
pub mod attributes;
pub mod authorizer;
pub mod bootstrap;
pub mod message;
pub mod policy;
pub mod review;
pub mod rule;
pub mod selector;

pub use aggregate::{Aggregated, AggregationError, aggregate, aggregated_cluster_role_rules};
pub use attributes::{
    ALL_AUTHENTICATED, ALL_SERVICE_ACCOUNTS, ALL_UNAUTHENTICATED, ANONYMOUS_USER, Attributes,
    Decision, SYSTEM_MASTERS, UserInfo, is_superuser, service_account_user_name,
};
pub use authorizer::{Authorizer, SnapshotError};
pub use bootstrap::bootstrap_policy;
pub use message::{forbidden_message, forbidden_status, forbidden_status_message, go_quote};
pub use policy::{Binding, ParseError, PolicyRule, Role, RoleRef, Subject};
pub use review::{NonResourceRule, ResourceRule, RulesReview, access_review_status};
pub use rule::rule_allows;
pub use selector::{LabelSelector, SelectorError};
