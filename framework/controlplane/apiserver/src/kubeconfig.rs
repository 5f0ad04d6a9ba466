//! Writing a kubeconfig that kubectl and kube-rs use unchanged.

use std::path::Path;

/// Renders a kubeconfig with one cluster, one user and one current context; `ca_pem` is the
/// CA to trust for an `https` server.
pub fn render(server_url: &str, token: &str, namespace: &str, ca_pem: Option<&str>) -> String {
    use base64::Engine;
    let mut cluster = serde_json::json!({"server": server_url});
    if let Some(ca) = ca_pem {
        cluster["certificate-authority-data"] =
            serde_json::json!(base64::engine::general_purpose::STANDARD.encode(ca));
    }
    let doc = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "mni-dev", "cluster": cluster}],
        "users": [{"name": "mni-admin", "user": {"token": token}}],
        "contexts": [{"name": "mni-dev", "context": {"cluster": "mni-dev", "user": "mni-admin", "namespace": namespace}}],
        "current-context": "mni-dev",
        "preferences": {},
    });
    serde_yaml::to_string(&doc).unwrap_or_default()
}

/// Writes the kubeconfig atomically (temp file, then rename), readable by its owner only.
pub fn write(path: &Path, contents: &str) -> std::io::Result<()> {
    crate::tls::write_private(path, contents.as_bytes(), 0o600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_parses_and_names_the_server() {
        let text = render("http://127.0.0.1:1234", "t0k", "default", None);
        let v: serde_json::Value = serde_yaml::from_str(&text).expect("yaml");
        assert_eq!(
            v["clusters"][0]["cluster"]["server"],
            "http://127.0.0.1:1234"
        );
        assert_eq!(v["current-context"], "mni-dev");
    }
}
