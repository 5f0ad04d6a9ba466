//! `mni-dev up --with vpc,vm,baremetal`: the reference services installed through OLM in one
//! command.
//!
//! [`Selection::new`] turns the names given to `--with` into packages of the file-based
//! catalog (`vm` → `mni-vm`), refusing an empty list and unknown names and dropping
//! duplicates. The catalog is `services/catalog/catalog`, built into the binary ([`EMBEDDED`]
//! and written out by [`write_embedded`]), or the directory `--catalog` names.
//! [`Selection::subscribe`] applies what a user would with kubectl, following OLM's defaults:
//! the namespaces `olm` and `operators`, the CatalogSource [`SOURCE`] in `olm` (served from the
//! catalog directory through `mni_olm_lifecycle::CATALOG_DIR_ANNOTATION`), the global
//! OperatorGroup `global-operators` in `operators`, and one Subscription per chosen package
//! on its default channel with automatic approval. Dependencies are not subscribed here: the
//! resolver pulls them in (`vm` brings `mni-vpc`). [`Selection::wait`] then polls until every
//! Subscription in `operators` has its CSV `Succeeded`, and fails naming the CSV and its phase
//! and reason when one fails or the time is up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use include_dir::{Dir, include_dir};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::Upstream;
use mni_olm_lifecycle::resources;

/// The reference services' file-based catalog (`services/catalog/catalog`), as it was when
/// this binary was built (`build.rs` rebuilds it when the directory changes).
pub(crate) static EMBEDDED: Dir<'_> =
    include_dir!("$CARGO_MANIFEST_DIR/../../services/catalog/catalog");

/// The namespace of the CatalogSource (OLM's default catalog namespace).
pub(crate) const CATALOG_NAMESPACE: &str = "olm";
/// The namespace the operators are installed in (OLM's default, with a global OperatorGroup).
pub(crate) const OPERATORS_NAMESPACE: &str = "operators";
/// The name of the CatalogSource serving the catalog.
pub(crate) const SOURCE: &str = "mni-services";
/// The name of the OperatorGroup in [`OPERATORS_NAMESPACE`], as OLM's own install names it.
pub(crate) const OPERATOR_GROUP: &str = "global-operators";
/// The package whose operator serves the console.
pub(crate) const CONSOLE_PACKAGE: &str = "mni-platform";
/// The field manager of what `--with` applies.
const FIELD_MANAGER: &str = "mni-dev";
/// How often [`Selection::wait`] looks.
const POLL: Duration = Duration::from_millis(50);
/// How long a `ResolutionFailed` condition may stay before it is the answer: the first pass
/// may run before the catalog is loaded.
const RESOLUTION_GRACE: Duration = Duration::from_secs(10);

/// Errors of `--with`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// `--with` named nothing.
    #[error("--with names no service: give one or more of {valid}")]
    Empty {
        /// The names the catalog offers.
        valid: String,
    },
    /// A name is not a package of the catalog.
    #[error("--with {name}: no such service in the catalog {catalog}; valid: {valid}")]
    Unknown {
        /// The name given.
        name: String,
        /// The catalog directory.
        catalog: String,
        /// The names the catalog offers.
        valid: String,
    },
    /// A package has no default channel and no channels.
    #[error("--with {name}: package {package} has no default channel in the catalog")]
    NoChannel {
        /// The name given.
        name: String,
        /// Its package.
        package: String,
    },
    /// The built-in catalog could not be written out.
    #[error("writing the built-in catalog to {path}: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// The catalog directory could not be read.
    #[error("reading the catalog: {0}")]
    Catalog(#[from] mni_olm::CatalogError),
    /// The API server refused a request.
    #[error("{what}: {source}")]
    Api {
        /// What was being done.
        what: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// A ClusterServiceVersion failed.
    #[error(
        "ClusterServiceVersion {OPERATORS_NAMESPACE}/{csv} (package {package}) failed: phase {phase}, reason {reason}: {message}"
    )]
    Failed {
        /// The CSV.
        csv: String,
        /// Its package.
        package: String,
        /// Its phase.
        phase: String,
        /// Its `status.reason`.
        reason: String,
        /// Its `status.message`.
        message: String,
    },
    /// A Subscription cannot be resolved.
    #[error("Subscription {OPERATORS_NAMESPACE}/{subscription} cannot be resolved: {message}")]
    Unresolvable {
        /// The Subscription.
        subscription: String,
        /// The `ResolutionFailed` condition's message.
        message: String,
    },
    /// Not every CSV succeeded in time.
    #[error(
        "not every service was installed within {}s (--with-timeout): {pending}",
        limit.as_secs()
    )]
    Timeout {
        /// The limit.
        limit: Duration,
        /// What was still pending, one clause per Subscription.
        pending: String,
    },
}

/// One chosen package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chosen {
    /// The name given to `--with` (`vm`).
    pub(crate) name: String,
    /// The catalog package (`mni-vm`).
    pub(crate) package: String,
    /// The package's default channel.
    pub(crate) channel: String,
}

/// The packages `--with` chose, and the catalog directory they come from.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    /// The catalog directory the CatalogSource serves.
    pub(crate) catalog_dir: PathBuf,
    /// The chosen packages, in the order first given.
    pub(crate) chosen: Vec<Chosen>,
}

/// One installed CSV, as [`Selection::wait`] found it.
#[derive(Debug, Clone)]
pub(crate) struct Installed {
    /// The Subscription.
    pub(crate) subscription: String,
    /// The package.
    pub(crate) package: String,
    /// The CSV's name.
    pub(crate) csv: String,
    /// Whether a user chose it (`false`: pulled in as a dependency).
    pub(crate) chosen: bool,
    /// The CSV's owned kinds whose status has a `url` descriptor: where a web UI is found.
    pub(crate) ui_kinds: Vec<String>,
}

/// Writes [`EMBEDDED`] to `dir`, replacing what was there.
pub(crate) fn write_embedded(dir: &Path) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Write { path, source }
    };
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io(dir))?;
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    EMBEDDED.extract(dir).map_err(io(dir))
}

/// The name `--with` accepts for a package: `mni-vm` → `vm`.
fn short_name(package: &str) -> &str {
    package.strip_prefix("mni-").unwrap_or(package)
}

impl Selection {
    /// Chooses the packages `names` designate in `catalog` (read from `catalog_dir`): a name
    /// is a package's name without its `mni-` prefix, or the package's full name.
    pub(crate) fn new(
        names: &[String],
        catalog_dir: PathBuf,
        catalog: &mni_olm::Catalog,
    ) -> Result<Self, Error> {
        let valid = || {
            let names: Vec<&str> = catalog
                .packages
                .iter()
                .map(|p| short_name(&p.name))
                .collect();
            if names.is_empty() {
                "none: the catalog has no packages".to_string()
            } else {
                names.join(", ")
            }
        };
        let mut chosen: Vec<Chosen> = Vec::new();
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            let package = catalog
                .packages
                .iter()
                .find(|p| p.name == name || short_name(&p.name) == name)
                .ok_or_else(|| Error::Unknown {
                    name: name.to_string(),
                    catalog: catalog_dir.display().to_string(),
                    valid: valid(),
                })?;
            if chosen.iter().any(|c| c.package == package.name) {
                continue;
            }
            let channel = if package.default_channel.is_empty() {
                catalog
                    .channels
                    .iter()
                    .find(|c| c.package == package.name)
                    .map(|c| c.name.clone())
                    .ok_or_else(|| Error::NoChannel {
                        name: name.to_string(),
                        package: package.name.clone(),
                    })?
            } else {
                package.default_channel.clone()
            };
            chosen.push(Chosen {
                name: short_name(&package.name).to_string(),
                package: package.name.clone(),
                channel,
            });
        }
        if chosen.is_empty() {
            return Err(Error::Empty { valid: valid() });
        }
        Ok(Selection {
            catalog_dir,
            chosen,
        })
    }

    /// The upstream simulators the chosen services need, their dependencies' included: the
    /// VPC service drives Kube-OVN, the VM service KubeVirt (and the VPC service it
    /// requires), the bare-metal service Metal3.
    pub(crate) fn upstreams(&self) -> Vec<Upstream> {
        let mut upstreams = Vec::new();
        for chosen in &self.chosen {
            let needs: &[Upstream] = match chosen.package.as_str() {
                "mni-vpc" => &[Upstream::KubeOvn],
                "mni-vm" => &[Upstream::Kubevirt, Upstream::KubeOvn],
                "mni-baremetal" => &[Upstream::Metal3],
                _ => &[],
            };
            for upstream in needs {
                if !upstreams.contains(upstream) {
                    upstreams.push(*upstream);
                }
            }
        }
        upstreams
    }

    /// Whether the console's package was chosen.
    pub(crate) fn has_console(&self) -> bool {
        self.chosen.iter().any(|c| c.package == CONSOLE_PACKAGE)
    }

    /// Applies the namespaces, the CatalogSource, the OperatorGroup and a Subscription per
    /// chosen package (server-side apply, so a second `up` on the same data changes nothing).
    pub(crate) async fn subscribe(&self, client: &Client) -> Result<(), Error> {
        let mut objects = vec![
            (
                namespace(),
                json!({"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": CATALOG_NAMESPACE}}),
            ),
            (
                namespace(),
                json!({"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": OPERATORS_NAMESPACE}}),
            ),
            (
                resources::catalog_source(),
                json!({
                    "apiVersion": "operators.coreos.com/v1alpha1",
                    "kind": "CatalogSource",
                    "metadata": {
                        "name": SOURCE,
                        "namespace": CATALOG_NAMESPACE,
                        "annotations": {
                            mni_olm_lifecycle::CATALOG_DIR_ANNOTATION:
                                self.catalog_dir.display().to_string(),
                        },
                    },
                    "spec": {"sourceType": "grpc", "displayName": "mNi services"},
                }),
            ),
            (
                resources::operator_group(),
                json!({
                    "apiVersion": "operators.coreos.com/v1",
                    "kind": "OperatorGroup",
                    "metadata": {"name": OPERATOR_GROUP, "namespace": OPERATORS_NAMESPACE},
                    "spec": {},
                }),
            ),
        ];
        for chosen in &self.chosen {
            objects.push((
                resources::subscription(),
                json!({
                    "apiVersion": "operators.coreos.com/v1alpha1",
                    "kind": "Subscription",
                    "metadata": {"name": chosen.package, "namespace": OPERATORS_NAMESPACE},
                    "spec": {
                        "name": chosen.package,
                        "channel": chosen.channel,
                        "source": SOURCE,
                        "sourceNamespace": CATALOG_NAMESPACE,
                        "installPlanApproval": "Automatic",
                    },
                }),
            ));
        }
        for (resource, object) in objects {
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let api: Api<DynamicObject> = match object["metadata"]["namespace"].as_str() {
                Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
                None => Api::all_with(client.clone(), &resource),
            };
            api.patch(
                name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&object),
            )
            .await
            .map_err(|source| Error::Api {
                what: format!("applying {} {name}", resource.kind),
                source,
            })?;
        }
        Ok(())
    }

    /// Polls until every Subscription in [`OPERATORS_NAMESPACE`] (the chosen ones and those
    /// the resolver added for dependencies) has installed its CSV and the CSV is `Succeeded`.
    pub(crate) async fn wait(
        &self,
        client: &Client,
        limit: Duration,
    ) -> Result<Vec<Installed>, Error> {
        let start = Instant::now();
        let subs: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            OPERATORS_NAMESPACE,
            &resources::subscription(),
        );
        let csvs: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), OPERATORS_NAMESPACE, &resources::csv());
        let list = |what: &'static str| {
            move |source| Error::Api {
                what: format!("listing {what} in namespace {OPERATORS_NAMESPACE}"),
                source,
            }
        };
        let mut unresolved_since: BTreeMap<String, Instant> = BTreeMap::new();
        loop {
            let subs_now = subs
                .list(&ListParams::default())
                .await
                .map_err(list("Subscriptions"))?;
            let csvs_now = csvs
                .list(&ListParams::default())
                .await
                .map_err(list("ClusterServiceVersions"))?;
            let csv_by_name: BTreeMap<String, &DynamicObject> =
                csvs_now.items.iter().map(|c| (c.name_any(), c)).collect();
            let mut installed = Vec::new();
            let mut pending = Vec::new();
            for chosen in &self.chosen {
                if !subs_now
                    .items
                    .iter()
                    .any(|s| s.name_any() == chosen.package)
                {
                    pending.push(format!("Subscription {} is not there yet", chosen.package));
                }
            }
            for sub in &subs_now.items {
                let name = sub.name_any();
                let status = &sub.data["status"];
                let package = sub.data["spec"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if let Some(message) = resolution_failed(status) {
                    let since = *unresolved_since
                        .entry(name.clone())
                        .or_insert_with(Instant::now);
                    if since.elapsed() >= RESOLUTION_GRACE {
                        return Err(Error::Unresolvable {
                            subscription: name,
                            message,
                        });
                    }
                    pending.push(format!("Subscription {name}: ResolutionFailed: {message}"));
                    continue;
                }
                unresolved_since.remove(&name);
                let Some(csv_name) = status["installedCSV"]
                    .as_str()
                    .or(status["currentCSV"].as_str())
                else {
                    pending.push(format!(
                        "Subscription {name} has no CSV yet (state {})",
                        status["state"].as_str().unwrap_or("none")
                    ));
                    continue;
                };
                let Some(csv) = csv_by_name.get(csv_name) else {
                    pending.push(format!(
                        "CSV {csv_name} of Subscription {name} is not there yet"
                    ));
                    continue;
                };
                let csv_status = &csv.data["status"];
                let field = |key: &str| csv_status[key].as_str().unwrap_or_default().to_string();
                let phase = field("phase");
                match phase.as_str() {
                    "Succeeded" if status["installedCSV"] == csv_name => {
                        installed.push(Installed {
                            subscription: name.clone(),
                            chosen: self.chosen.iter().any(|c| c.package == package),
                            package,
                            csv: csv_name.to_string(),
                            ui_kinds: ui_kinds(csv),
                        });
                    }
                    "Failed" => {
                        return Err(Error::Failed {
                            csv: csv_name.to_string(),
                            package,
                            phase,
                            reason: field("reason"),
                            message: field("message"),
                        });
                    }
                    _ => pending.push(format!(
                        "CSV {csv_name} is {} (reason {}: {})",
                        if phase.is_empty() {
                            "without a phase"
                        } else {
                            &phase
                        },
                        field("reason"),
                        field("message")
                    )),
                }
            }
            if pending.is_empty() && !installed.is_empty() {
                installed.sort_by(|a, b| (!a.chosen, &a.package).cmp(&(!b.chosen, &b.package)));
                return Ok(installed);
            }
            if start.elapsed() >= limit {
                return Err(Error::Timeout {
                    limit,
                    pending: pending.join("; "),
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// The message of a true `ResolutionFailed` condition.
fn resolution_failed(status: &Value) -> Option<String> {
    status["conditions"].as_array()?.iter().find_map(|c| {
        (c["type"] == "ResolutionFailed" && c["status"] == "True")
            .then(|| c["message"].as_str().unwrap_or_default().to_string())
    })
}

/// The kinds a CSV owns whose status descriptors include `url`.
fn ui_kinds(csv: &DynamicObject) -> Vec<String> {
    csv.data["spec"]["customresourcedefinitions"]["owned"]
        .as_array()
        .map(|owned| {
            owned
                .iter()
                .filter(|crd| {
                    crd["statusDescriptors"]
                        .as_array()
                        .is_some_and(|d| d.iter().any(|d| d["path"] == "url"))
                })
                .filter_map(|crd| crd["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Where to find the console, or the services' web UIs when there is no console: one line
/// per fact, for the person who ran `up`.
pub(crate) fn console_lines(selection: &Selection, installed: &[Installed]) -> Vec<String> {
    if selection.has_console() {
        return vec![
            format!(
                "console: {CONSOLE_PACKAGE} installed it as Deployment \
                 {OPERATORS_NAMESPACE}/{CONSOLE_PACKAGE}-console behind Service \
                 {CONSOLE_PACKAGE}-console (port 80)"
            ),
            "  its pods run only with a real runtime (--runtime process or podman); else serve \
             the same page with `mni-console --listen 127.0.0.1:8070` (services/platform) and \
             this kubeconfig"
                .to_owned(),
        ];
    }
    let mut lines = vec![format!(
        "console: none ({CONSOLE_PACKAGE} was not chosen); each service serves a web UI per \
         custom resource, at the resource's status.url:"
    )];
    for i in installed {
        if !i.ui_kinds.is_empty() {
            lines.push(format!(
                "  {}: kubectl get {} -A -o custom-columns=NAME:.metadata.name,URL:.status.url",
                i.package,
                i.ui_kinds.join(",")
            ));
        }
    }
    lines
}

fn namespace() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Namespace"), "namespaces")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded() -> (tempfile::TempDir, mni_olm::Catalog) {
        let dir = tempfile::tempdir().expect("tempdir");
        write_embedded(dir.path()).expect("write");
        let catalog = mni_olm::Catalog::load(dir.path()).expect("load");
        (dir, catalog)
    }

    fn check(names: &[&str], expected: Result<&[&str], &str>) {
        let (dir, catalog) = embedded();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let got = Selection::new(&names, dir.path().to_path_buf(), &catalog);
        match (got, expected) {
            (Ok(selection), Ok(packages)) => {
                let got: Vec<&str> = selection
                    .chosen
                    .iter()
                    .map(|c| c.package.as_str())
                    .collect();
                assert_eq!(got, packages, "{names:?}");
            }
            (Err(e), Err(fragment)) => {
                let message = e.to_string();
                assert!(message.contains(fragment), "{names:?}: {message}");
            }
            (got, expected) => panic!("{names:?}: got {got:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn the_built_in_catalog_has_the_reference_services() {
        let (_dir, catalog) = embedded();
        let mut packages: Vec<&str> = catalog.packages.iter().map(|p| p.name.as_str()).collect();
        packages.sort_unstable();
        assert_eq!(
            packages,
            ["mni-baremetal", "mni-platform", "mni-vm", "mni-vpc"]
        );
    }

    #[test]
    fn names_map_to_packages_in_order_once() {
        check(
            &["vpc", "vm", "baremetal"],
            Ok(&["mni-vpc", "mni-vm", "mni-baremetal"]),
        );
        check(&["vm"], Ok(&["mni-vm"]));
        check(&["vm", "vpc", "vm", "mni-vm"], Ok(&["mni-vm", "mni-vpc"]));
        check(&[" baremetal "], Ok(&["mni-baremetal"]));
    }

    #[test]
    fn bad_names_are_refused_naming_the_valid_ones() {
        check(
            &["vm", "nosuch"],
            Err("--with nosuch: no such service in the catalog"),
        );
        check(&["nosuch"], Err("valid: baremetal, platform, vm, vpc"));
        check(
            &[],
            Err("--with names no service: give one or more of baremetal, platform, vm, vpc"),
        );
        check(&["", " "], Err("--with names no service"));
    }

    #[test]
    fn the_default_channel_is_subscribed() {
        let (dir, catalog) = embedded();
        let selection =
            Selection::new(&["vm".to_string()], dir.path().to_path_buf(), &catalog).expect("vm");
        assert_eq!(selection.chosen[0].channel, "alpha");
        assert_eq!(selection.chosen[0].name, "vm");
    }

    #[test]
    fn services_bring_their_upstream_simulators() {
        let (dir, catalog) = embedded();
        let select = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            Selection::new(&names, dir.path().to_path_buf(), &catalog)
                .expect("valid")
                .upstreams()
        };
        assert_eq!(select(&["vpc"]), [Upstream::KubeOvn]);
        assert_eq!(select(&["platform"]), []);
        assert_eq!(select(&["vm"]), [Upstream::Kubevirt, Upstream::KubeOvn]);
        assert_eq!(
            select(&["vpc", "vm", "baremetal"]),
            [Upstream::KubeOvn, Upstream::Kubevirt, Upstream::Metal3]
        );
    }

    #[test]
    fn a_failed_resolution_is_read_from_the_conditions() {
        let status = json!({"conditions": [
            {"type": "CatalogSourcesUnhealthy", "status": "False"},
            {"type": "ResolutionFailed", "status": "True", "message": "no mni-vpc"},
        ]});
        assert_eq!(resolution_failed(&status).as_deref(), Some("no mni-vpc"));
        let cleared = json!({"conditions": [{"type": "ResolutionFailed", "status": "False"}]});
        assert_eq!(resolution_failed(&cleared), None);
        assert_eq!(resolution_failed(&json!({})), None);
    }
}
