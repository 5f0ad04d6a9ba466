//! Writing a kubeconfig that kubectl and kube-rs use unchanged.

use std::io::Write;
use std::path::Path;

/// Renders a kubeconfig with one cluster, one user and one current context.
pub fn render(server_url: &str, token: &str, namespace: &str) -> String {
    let doc = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "mni-dev", "cluster": {"server": server_url}}],
        "users": [{"name": "mni-admin", "user": {"token": token}}],
        "contexts": [{"name": "mni-dev", "context": {"cluster": "mni-dev", "user": "mni-admin", "namespace": namespace}}],
        "current-context": "mni-dev",
        "preferences": {},
    });
    serde_yaml::to_string(&doc).unwrap_or_default()
}

/// Writes the kubeconfig atomically (temp file, then rename), readable by its owner only.
pub fn write(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_parses_and_names_the_server() {
        let text = render("http://127.0.0.1:1234", "t0k", "default");
        let v: serde_json::Value = serde_yaml::from_str(&text).expect("yaml");
        assert_eq!(
            v["clusters"][0]["cluster"]["server"],
            "http://127.0.0.1:1234"
        );
        assert_eq!(v["current-context"], "mni-dev");
    }
}
