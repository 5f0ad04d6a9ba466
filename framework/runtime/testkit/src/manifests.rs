//! Checks that an operator's checked-in manifests match its code.
//!
//! [`assert_crds_checked_in`] is the whole body of a generated project's `tests/manifests.rs`:
//! every CRD the operator serves must stand, equal to what the code generates, in
//! `config/crd/bases/<group>_<plural>.yaml`.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Asserts that each of `crds` is checked in under `crate_dir/config/crd/bases/` as
/// `<group>_<plural>.yaml` and equals what the code generates (compared as JSON values, so YAML
/// formatting does not matter). Panics naming the first file that is missing or differs, and
/// `regenerate` (the command that prints the CRDs) in the message.
///
/// ```no_run
/// # fn crds() -> Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> { vec![] }
/// #[test]
/// fn checked_in_crds_match_the_code() {
///     let regenerate = "cargo run -q -p billing -- crd";
///     mni_testkit::assert_crds_checked_in(env!("CARGO_MANIFEST_DIR"), &crds(), regenerate);
/// }
/// ```
#[track_caller]
pub fn assert_crds_checked_in(
    crate_dir: impl AsRef<Path>,
    crds: &[CustomResourceDefinition],
    regenerate: &str,
) {
    let dir = crate_dir.as_ref().join("config/crd/bases");
    for crd in crds {
        let file = format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural);
        let text = std::fs::read_to_string(dir.join(&file))
            .unwrap_or_else(|e| panic!("config/crd/bases/{file}: {e}"));
        let checked_in: serde_json::Value = serde_yaml::from_str(&text)
            .unwrap_or_else(|e| panic!("config/crd/bases/{file} does not parse: {e}"));
        let from_code = serde_json::to_value(crd).expect("a CRD serializes");
        assert_eq!(
            checked_in, from_code,
            "config/crd/bases/{file} differs from the code: regenerate it from `{regenerate}`"
        );
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    };

    use super::*;

    fn crd(plural: &str) -> CustomResourceDefinition {
        CustomResourceDefinition {
            metadata: kube::api::ObjectMeta {
                name: Some(format!("{plural}.example.mni.dev")),
                ..Default::default()
            },
            spec: CustomResourceDefinitionSpec {
                group: "example.mni.dev".into(),
                names: CustomResourceDefinitionNames {
                    plural: plural.into(),
                    kind: "Widget".into(),
                    ..Default::default()
                },
                scope: "Namespaced".into(),
                ..Default::default()
            },
            status: None,
        }
    }

    fn checked_in(crds: &[CustomResourceDefinition]) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mni-testkit-manifests-{}", std::process::id()));
        let bases = dir.join("config/crd/bases");
        std::fs::create_dir_all(&bases).unwrap();
        for crd in crds {
            let file = format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural);
            std::fs::write(bases.join(file), serde_yaml::to_string(crd).unwrap()).unwrap();
        }
        dir
    }

    #[test]
    fn checked_in_crds_pass_and_a_changed_or_missing_one_fails() {
        let dir = checked_in(&[crd("widgets")]);
        assert_crds_checked_in(&dir, &[crd("widgets")], "op crd");

        let mut changed = crd("widgets");
        changed.spec.scope = "Cluster".into();
        let failed =
            std::panic::catch_unwind(|| assert_crds_checked_in(&dir, &[changed], "op crd"));
        let message = *failed.unwrap_err().downcast::<String>().unwrap();
        assert!(
            message.contains("differs from the code: regenerate it from `op crd`"),
            "{message}"
        );

        let missing =
            std::panic::catch_unwind(|| assert_crds_checked_in(&dir, &[crd("gadgets")], "op crd"));
        assert!(missing.is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
