//! The query and path parameters kube-apiserver documents, with its descriptions.

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    /// A path template segment (`{name}`, `{namespace}`).
    Path,
    /// A query parameter.
    Query,
}

/// One parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Param {
    pub(crate) name: &'static str,
    pub(crate) location: Location,
    /// `string`, `boolean` or `integer`.
    pub(crate) ty: &'static str,
    pub(crate) description: String,
}

fn query(name: &'static str, ty: &'static str, description: &str) -> Param {
    Param {
        name,
        location: Location::Query,
        ty,
        description: description.to_owned(),
    }
}

/// `{name}`.
pub(crate) fn name(kind: &str) -> Param {
    Param {
        name: "name",
        location: Location::Path,
        ty: "string",
        description: format!("name of the {kind}"),
    }
}

/// `{namespace}`.
pub(crate) fn namespace() -> Param {
    Param {
        name: "namespace",
        location: Location::Path,
        ty: "string",
        description: "object name and auth scope, such as for teams and projects".into(),
    }
}

/// `pretty`.
pub(crate) fn pretty() -> Param {
    query(
        "pretty",
        "string",
        "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
    )
}

fn dry_run() -> Param {
    query(
        "dryRun",
        "string",
        "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed",
    )
}

fn field_manager(patch: bool) -> Param {
    let text = if patch {
        "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch)."
    } else {
        "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint."
    };
    query("fieldManager", "string", text)
}

fn field_validation() -> Param {
    query(
        "fieldValidation",
        "string",
        "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.",
    )
}

fn force() -> Param {
    query(
        "force",
        "boolean",
        "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.",
    )
}

/// Parameters of POST/PUT (`patch == false`) and PATCH (`patch == true`).
pub(crate) fn write(patch: bool) -> Vec<Param> {
    let mut params = vec![dry_run(), field_manager(patch), field_validation()];
    if patch {
        params.push(force());
    }
    params
}

fn allow_watch_bookmarks() -> Param {
    query(
        "allowWatchBookmarks",
        "boolean",
        "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.",
    )
}

fn continue_() -> Param {
    query(
        "continue",
        "string",
        "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token.",
    )
}

fn field_selector() -> Param {
    query(
        "fieldSelector",
        "string",
        "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
    )
}

fn label_selector() -> Param {
    query(
        "labelSelector",
        "string",
        "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
    )
}

fn limit() -> Param {
    query(
        "limit",
        "integer",
        "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results.",
    )
}

fn resource_version() -> Param {
    query(
        "resourceVersion",
        "string",
        "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset",
    )
}

fn resource_version_match() -> Param {
    query(
        "resourceVersionMatch",
        "string",
        "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset",
    )
}

fn send_initial_events() -> Param {
    query(
        "sendInitialEvents",
        "boolean",
        "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `\"k8s.io/initial-events-end\": \"true\"` annotation. Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes (subsequent to the RV) to objects watched.",
    )
}

fn timeout_seconds() -> Param {
    query(
        "timeoutSeconds",
        "integer",
        "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
    )
}

fn watch() -> Param {
    query(
        "watch",
        "boolean",
        "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.",
    )
}

/// Operation-level parameters of a collection GET (list/watch).
pub(crate) fn list() -> Vec<Param> {
    vec![
        allow_watch_bookmarks(),
        continue_(),
        field_selector(),
        label_selector(),
        limit(),
        resource_version(),
        resource_version_match(),
        send_initial_events(),
        timeout_seconds(),
        watch(),
    ]
}

/// Path-level parameters of the all-namespaces and watch paths (list parameters plus pretty).
pub(crate) fn list_path_level() -> Vec<Param> {
    let mut params = list();
    params.insert(5, pretty());
    params
}

fn grace_period_seconds() -> Param {
    query(
        "gracePeriodSeconds",
        "integer",
        "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.",
    )
}

fn ignore_store_read_error() -> Param {
    query(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "boolean",
        "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it",
    )
}

fn orphan_dependents() -> Param {
    query(
        "orphanDependents",
        "boolean",
        "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both.",
    )
}

fn propagation_policy() -> Param {
    query(
        "propagationPolicy",
        "string",
        "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
    )
}

/// Operation-level parameters of DELETE on an item.
pub(crate) fn delete() -> Vec<Param> {
    vec![
        dry_run(),
        grace_period_seconds(),
        ignore_store_read_error(),
        orphan_dependents(),
        propagation_policy(),
    ]
}

/// Operation-level parameters of DELETE on a collection.
pub(crate) fn delete_collection() -> Vec<Param> {
    vec![
        continue_(),
        dry_run(),
        field_selector(),
        grace_period_seconds(),
        ignore_store_read_error(),
        label_selector(),
        limit(),
        orphan_dependents(),
        propagation_policy(),
        resource_version(),
        resource_version_match(),
        send_initial_events(),
        timeout_seconds(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_has_field_validation_and_force() {
        let names: Vec<&str> = write(true).iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["dryRun", "fieldManager", "fieldValidation", "force"]
        );
        let path_level: Vec<&str> = list_path_level().iter().map(|p| p.name).collect();
        assert_eq!(path_level[5], "pretty");
        assert_eq!(path_level.len(), 11);
    }
}
