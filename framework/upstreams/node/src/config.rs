//! What a pod's containers see besides their command: the environment (`env`, `envFrom`,
//! `valueFrom` Secrets, ConfigMaps and the downward API), the ServiceAccount credentials and
//! the ConfigMap, Secret and downward API volumes, written as files.
//!
//! Host processes share the host's file system, so nothing is mounted. Each pod gets a
//! directory, `PODS/<uid>/`, whose `root/` stands for the container's file system: a volume
//! mounted at `/etc/config` is written to `root/etc/config/`, the ServiceAccount's `token`,
//! `ca.crt` and `namespace` to `root/var/run/secrets/kubernetes.io/serviceaccount/`. Every
//! container gets `MNI_ROOT` (that directory) and `MNI_MOUNT_<PATH>` per mount (`/etc/config`
//! → `MNI_MOUNT_ETC_CONFIG`); `root/` is also `HOME` and the default working directory. As in-cluster clients cannot find the credentials at the fixed
//! path, `KUBECONFIG` points at `PODS/<uid>/kubeconfig`, which names the API server, its CA
//! and the token file: kube-rs's `Config::infer()` (and client-go, and kubectl) read it
//! unchanged. `KUBERNETES_SERVICE_HOST`/`PORT` name the API server as well.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, Secret, ServiceAccount};
use kube::api::PostParams;
use kube::{Api, Client};

/// Errors of resolving a pod's configuration; the `Missing*` ones are kubelet's
/// `CreateContainerConfigError`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// A Secret the pod needs does not exist.
    #[error("secret \"{0}\" not found")]
    MissingSecret(String),
    /// A ConfigMap the pod needs does not exist.
    #[error("configmap \"{0}\" not found")]
    MissingConfigMap(String),
    /// The pod's ServiceAccount does not exist.
    #[error("serviceaccount \"{0}\" not found")]
    MissingServiceAccount(String),
    /// A container must not run as root and would (kubelet's `runAsNonRoot` check).
    #[error("{0}")]
    RunsAsRoot(String),
    /// A key is missing from a Secret or ConfigMap.
    #[error("couldn't find key {key} in {kind} {namespace}/{name}")]
    MissingKey {
        /// `Secret` or `ConfigMap`.
        kind: &'static str,
        /// The namespace.
        namespace: String,
        /// The object.
        name: String,
        /// The key.
        key: String,
    },
    /// The API server could not be asked.
    #[error("reading {what}: {source}")]
    Api {
        /// What was read.
        what: String,
        /// The cause.
        #[source]
        source: Box<kube::Error>,
    },
    /// A file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// How the pod reaches the API server.
#[derive(Debug, Clone, Default)]
pub struct ApiAccess {
    /// The server's URL, as clients outside use it (`https://127.0.0.1:6443`).
    pub url: String,
    /// The CA that signed the server's certificate (PEM); `None` over plain HTTP.
    pub ca_pem: Option<String>,
}

/// Everything resolved for one pod.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// The environment of each container, by name.
    pub(crate) env: BTreeMap<String, BTreeMap<String, String>>,
}

/// Reads what a pod refers to, caching nothing: each start sees fresh values.
pub(crate) struct Resolver<'a> {
    pub(crate) client: &'a Client,
    pub(crate) pod: &'a Pod,
    pub(crate) pod_ip: &'a str,
    pub(crate) host_ip: &'a str,
    pub(crate) node: &'a str,
    pub(crate) dir: &'a Path,
    pub(crate) access: &'a ApiAccess,
}

fn api_err(what: String) -> impl FnOnce(kube::Error) -> Error {
    move |e| Error::Api {
        what,
        source: Box::new(e),
    }
}

fn write(path: &Path, data: &[u8]) -> Result<(), Error> {
    let err = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    // Only when changed, so a reader never sees a half-written file needlessly.
    if std::fs::read(path).is_ok_and(|old| old == data) {
        return Ok(());
    }
    let tmp = path.with_extension("mni-tmp");
    std::fs::write(&tmp, data).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// `MNI_MOUNT_<PATH>` for a mount path.
pub fn mount_env(path: &str) -> String {
    let mut name: String = path
        .trim_matches('/')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    name.insert_str(0, "MNI_MOUNT_");
    name
}

impl Resolver<'_> {
    fn ns(&self) -> &str {
        self.pod.metadata.namespace.as_deref().unwrap_or("default")
    }

    async fn secret(&self, name: &str) -> Result<Secret, Error> {
        Api::<Secret>::namespaced(self.client.clone(), self.ns())
            .get_opt(name)
            .await
            .map_err(api_err(format!("secret {name}")))?
            .ok_or_else(|| Error::MissingSecret(name.to_string()))
    }

    async fn config_map(&self, name: &str) -> Result<ConfigMap, Error> {
        Api::<ConfigMap>::namespaced(self.client.clone(), self.ns())
            .get_opt(name)
            .await
            .map_err(api_err(format!("configmap {name}")))?
            .ok_or_else(|| Error::MissingConfigMap(name.to_string()))
    }

    /// The pod's data as a ConfigMap's or Secret's, decoded.
    async fn data(
        &self,
        kind: &'static str,
        name: &str,
    ) -> Result<BTreeMap<String, Vec<u8>>, Error> {
        Ok(if kind == "Secret" {
            let s = self.secret(name).await?;
            let mut d: BTreeMap<String, Vec<u8>> = s
                .data
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.0))
                .collect();
            for (k, v) in s.string_data.unwrap_or_default() {
                d.insert(k, v.into_bytes());
            }
            d
        } else {
            let c = self.config_map(name).await?;
            let mut d: BTreeMap<String, Vec<u8>> = c
                .data
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.into_bytes()))
                .collect();
            for (k, v) in c.binary_data.unwrap_or_default() {
                d.insert(k, v.0);
            }
            d
        })
    }

    /// A downward API field of the pod.
    fn field(&self, path: &str) -> String {
        let m = &self.pod.metadata;
        let spec = self.pod.spec.as_ref();
        match path {
            "metadata.name" => m.name.clone().unwrap_or_default(),
            "metadata.namespace" => self.ns().to_string(),
            "metadata.uid" => m.uid.clone().unwrap_or_default(),
            "spec.nodeName" => self.node.to_string(),
            "spec.serviceAccountName" => spec
                .and_then(|s| s.service_account_name.clone())
                .unwrap_or_else(|| "default".into()),
            "status.podIP" | "status.podIPs" => self.pod_ip.to_string(),
            "status.hostIP" | "status.hostIPs" => self.host_ip.to_string(),
            other => {
                let (map, key) = if let Some(k) = other.strip_prefix("metadata.labels['") {
                    (m.labels.as_ref(), k)
                } else if let Some(k) = other.strip_prefix("metadata.annotations['") {
                    (m.annotations.as_ref(), k)
                } else {
                    return String::new();
                };
                let key = key.trim_end_matches("']");
                map.and_then(|l| l.get(key)).cloned().unwrap_or_default()
            }
        }
    }

    /// The environment of `c`, in kubelet's order: the service variables first, then
    /// `envFrom`, then `env` (later entries win; `$(VAR)` refers to earlier ones).
    async fn env(&self, c: &Container) -> Result<BTreeMap<String, String>, Error> {
        let mut env = BTreeMap::new();
        let url = self.access.url.trim_end_matches('/');
        let hostport = url.split("://").nth(1).unwrap_or(url);
        let (host, port) = hostport.rsplit_once(':').unwrap_or((hostport, "443"));
        for (k, v) in [
            ("KUBERNETES_SERVICE_HOST", host),
            ("KUBERNETES_SERVICE_PORT", port),
            ("KUBERNETES_SERVICE_PORT_HTTPS", port),
            ("POD_IP", self.pod_ip),
            (
                "HOSTNAME",
                self.pod.metadata.name.as_deref().unwrap_or_default(),
            ),
        ] {
            env.insert(k.to_string(), v.to_string());
        }
        env.insert(
            "KUBECONFIG".into(),
            self.dir.join("kubeconfig").display().to_string(),
        );
        env.insert(
            "MNI_ROOT".into(),
            self.dir.join("root").display().to_string(),
        );
        // Tools that keep files under HOME (kubectl's cache) keep them in the pod.
        env.insert("HOME".into(), self.dir.join("root").display().to_string());
        for m in c.volume_mounts.iter().flatten() {
            let host = self
                .dir
                .join("root")
                .join(m.mount_path.trim_start_matches('/'));
            env.insert(mount_env(&m.mount_path), host.display().to_string());
        }
        for from in c.env_from.iter().flatten() {
            let prefix = from.prefix.clone().unwrap_or_default();
            let (kind, name, optional) = if let Some(s) = &from.secret_ref {
                ("Secret", s.name.clone(), s.optional == Some(true))
            } else if let Some(cm) = &from.config_map_ref {
                ("ConfigMap", cm.name.clone(), cm.optional == Some(true))
            } else {
                continue;
            };
            match self.data(kind, &name).await {
                Ok(d) => {
                    for (k, v) in d {
                        env.insert(format!("{prefix}{k}"), String::from_utf8_lossy(&v).into());
                    }
                }
                Err(Error::MissingSecret(_) | Error::MissingConfigMap(_)) if optional => {}
                Err(e) => return Err(e),
            }
        }
        for e in c.env.iter().flatten() {
            let value = if let Some(v) = &e.value {
                expand(v, &env)
            } else if let Some(from) = &e.value_from {
                if let Some(f) = &from.field_ref {
                    self.field(&f.field_path)
                } else if let Some(s) = &from.secret_key_ref {
                    match self.key("Secret", &s.name, &s.key).await {
                        Ok(v) => v,
                        Err(_) if s.optional == Some(true) => continue,
                        Err(e) => return Err(e),
                    }
                } else if let Some(cm) = &from.config_map_key_ref {
                    match self.key("ConfigMap", &cm.name, &cm.key).await {
                        Ok(v) => v,
                        Err(_) if cm.optional == Some(true) => continue,
                        Err(e) => return Err(e),
                    }
                } else {
                    String::new()
                }
            } else {
                String::new()
            };
            env.insert(e.name.clone(), value);
        }
        Ok(env)
    }

    async fn key(&self, kind: &'static str, name: &str, key: &str) -> Result<String, Error> {
        let data = self.data(kind, name).await?;
        data.get(key)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .ok_or_else(|| Error::MissingKey {
                kind,
                namespace: self.ns().to_string(),
                name: name.to_string(),
                key: key.to_string(),
            })
    }

    /// Writes the volumes the containers mount under `root/<mount path>`.
    pub(crate) async fn volumes(&self) -> Result<(), Error> {
        let spec = self.pod.spec.clone().unwrap_or_default();
        let root = self.dir.join("root");
        for c in spec
            .init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
        {
            for m in c.volume_mounts.iter().flatten() {
                let Some(v) = spec.volumes.iter().flatten().find(|v| v.name == m.name) else {
                    continue;
                };
                let target = root.join(m.mount_path.trim_start_matches('/'));
                let (kind, name, items, optional) = if let Some(s) = &v.secret {
                    (
                        "Secret",
                        s.secret_name.clone().unwrap_or_default(),
                        s.items.clone(),
                        s.optional == Some(true),
                    )
                } else if let Some(cm) = &v.config_map {
                    (
                        "ConfigMap",
                        cm.name.clone(),
                        cm.items.clone(),
                        cm.optional == Some(true),
                    )
                } else {
                    // emptyDir and the rest: a directory of the pod.
                    std::fs::create_dir_all(&target).map_err(|source| Error::Write {
                        path: target.clone(),
                        source,
                    })?;
                    continue;
                };
                let data = match self.data(kind, &name).await {
                    Ok(d) => d,
                    Err(Error::MissingSecret(_) | Error::MissingConfigMap(_)) if optional => {
                        BTreeMap::new()
                    }
                    Err(e) => return Err(e),
                };
                let files: Vec<(String, Vec<u8>)> = match items {
                    Some(items) => items
                        .iter()
                        .filter_map(|i| Some((i.path.clone(), data.get(&i.key)?.clone())))
                        .collect(),
                    None => data.into_iter().collect(),
                };
                let files = match &m.sub_path {
                    Some(sub) if !sub.is_empty() => files
                        .into_iter()
                        .filter(|(p, _)| p == sub)
                        .map(|(_, d)| (String::new(), d))
                        .collect(),
                    _ => files,
                };
                for (path, d) in files {
                    let file = if path.is_empty() {
                        target.clone()
                    } else {
                        target.join(path)
                    };
                    write(&file, &d)?;
                }
            }
        }
        Ok(())
    }

    /// Writes the ServiceAccount's token, the CA and the namespace, and the kubeconfig.
    pub(crate) async fn credentials(&self) -> Result<(), Error> {
        let spec = self.pod.spec.as_ref();
        let sa = spec
            .and_then(|s| s.service_account_name.clone())
            .unwrap_or_else(|| "default".into());
        let sa_dir = self
            .dir
            .join("root/var/run/secrets/kubernetes.io/serviceaccount");
        let automount = spec.and_then(|s| s.automount_service_account_token) != Some(false);
        let token_path = sa_dir.join("token");
        if automount {
            let api: Api<ServiceAccount> = Api::namespaced(self.client.clone(), self.ns());
            let req = TokenRequest {
                spec: Some(TokenRequestSpec {
                    expiration_seconds: Some(3600),
                    ..Default::default()
                }),
                ..Default::default()
            };
            // The API server's namespace controller gives every namespace its `default`
            // account as the namespace is written; a missing one is the pod's error.
            let token = api
                .create_token_request(&sa, &PostParams::default(), &req)
                .await;
            let token = match token {
                Ok(t) => t,
                Err(kube::Error::Api(s)) if s.code == 404 => {
                    return Err(Error::MissingServiceAccount(sa));
                }
                Err(e) => return Err(api_err(format!("a token of serviceaccount {sa}"))(e)),
            };
            let token = token.status.and_then(|s| s.token).unwrap_or_default();
            write(&token_path, token.as_bytes())?;
            write(&sa_dir.join("namespace"), self.ns().as_bytes())?;
            if let Some(ca) = &self.access.ca_pem {
                write(&sa_dir.join("ca.crt"), ca.as_bytes())?;
            }
        }
        let ca = self.access.ca_pem.as_ref().map_or(String::new(), |ca| {
            format!(
                "    certificate-authority-data: {}\n",
                base64::engine::general_purpose::STANDARD.encode(ca)
            )
        });
        let user = if automount {
            format!("    tokenFile: {}\n", token_path.display())
        } else {
            "    {}\n".to_string()
        };
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: mni\n  cluster:\n    server: {}\n{ca}users:\n- name: {sa}\n  user:\n{user}contexts:\n- name: in-cluster\n  context:\n    cluster: mni\n    user: {sa}\n    namespace: {}\ncurrent-context: in-cluster\n",
            self.access.url,
            self.ns()
        );
        write(&self.dir.join("kubeconfig"), kubeconfig.as_bytes())
    }

    /// Resolves everything: credentials and volumes written, the environments computed.
    pub(crate) async fn resolve(&self) -> Result<Resolved, Error> {
        self.credentials().await?;
        self.volumes().await?;
        let spec = self.pod.spec.clone().unwrap_or_default();
        let mut out = Resolved::default();
        for c in spec
            .init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
        {
            out.env.insert(c.name.clone(), self.env(c).await?);
        }
        Ok(out)
    }
}

/// Expands `$(VAR)` from `env` as kubelet does (`$$` escapes; unknown names stay as they are).
pub(crate) fn expand(s: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('(')
            && let Some(end) = inner.find(')')
        {
            let name = &inner[..end];
            match env.get(name) {
                Some(v) => out.push_str(v),
                None => {
                    out.push_str("$(");
                    out.push_str(name);
                    out.push(')');
                }
            }
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_expand_as_kubelet_does() {
        let env: BTreeMap<String, String> = [("A".to_string(), "1".to_string())].into();
        assert_eq!(expand("x$(A)y", &env), "x1y");
        assert_eq!(expand("$(B)", &env), "$(B)");
        assert_eq!(expand("$$(A)", &env), "$(A)");
        assert_eq!(expand("cost $5", &env), "cost $5");
    }

    #[test]
    fn mount_paths_name_variables() {
        assert_eq!(mount_env("/etc/config"), "MNI_MOUNT_ETC_CONFIG");
        assert_eq!(mount_env("/var/run/app.d/"), "MNI_MOUNT_VAR_RUN_APP_D");
    }
}
