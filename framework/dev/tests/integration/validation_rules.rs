//! CRD validation rules (`x-kubernetes-validations`, CEL) through kubectl against `mni-dev up`:
//! the book's `Network` CRD is installed, then valid and invalid objects are applied and
//! kubectl's exact error output is pinned, including transition rules (`oldSelf`) on update.

use crate::support;

use std::path::Path;

use support::dev::Dev;

fn example(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../book/src/examples");
    std::fs::read_to_string(root.join(name)).expect("example")
}

#[test]
fn validation_rules_through_kubectl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    assert_eq!(
        dev.try_apply(&example("network-crd.yaml")).as_deref(),
        Ok("customresourcedefinition.apiextensions.k8s.io/networks.vpc.example.com created\n")
    );
    let out = dev.kubectl(&[
        "wait",
        "--for=condition=Established",
        "crd/networks.vpc.example.com",
        "--timeout=30s",
    ]);
    assert!(out.status.success());

    // A valid address plan is accepted.
    assert_eq!(
        dev.try_apply(&example("network.yaml")).as_deref(),
        Ok("network.vpc.example.com/prod created\n")
    );

    // A gateway outside its subnet: the messageExpression, at the rule's fieldPath.
    assert_eq!(
        dev.try_apply(&example("network-bad.yaml")),
        Err("The Network \"staging\" is invalid: spec.subnets[0].gateway: Invalid value: \"object\": gateway 10.1.9.1 is outside 10.1.1.0/24\n".to_string())
    );

    // Several failed rules at once; the subnet outside the VPC is reported at spec.subnets.
    let several = "apiVersion: vpc.example.com/v1\nkind: Network\nmetadata: {name: dev}\nspec:\n  cidr: 10.2.0.1/16\n  subnets:\n  - {name: a, cidr: 10.3.0.0/24}\n";
    assert_eq!(
        dev.try_apply(several),
        Err("The Network \"dev\" is invalid: \n* spec.subnets: Invalid value: \"object\": every subnet must be inside spec.cidr\n* spec.cidr: Invalid value: \"string\": must be a network address such as 10.0.0.0/16\n".to_string())
    );

    // Transition rules: the VPC CIDR is immutable, a subnet's CIDR cannot change (Forbidden),
    // subnets are correlated by name, so reordering them and adding one is fine.
    let changed = example("network.yaml").replace("cidr: 10.0.0.0/16", "cidr: 10.9.0.0/16");
    assert_eq!(
        dev.try_apply(&changed),
        Err("The Network \"prod\" is invalid: \n* spec.subnets: Invalid value: \"object\": every subnet must be inside spec.cidr\n* spec.cidr: Invalid value: \"string\": cidr is immutable\n".to_string())
    );
    let moved = example("network.yaml").replace("10.0.2.0/24", "10.0.3.0/24");
    assert_eq!(
        dev.try_apply(&moved),
        Err("The Network \"prod\" is invalid: spec.subnets[1]: Forbidden: a subnet's cidr cannot change\n".to_string())
    );
    let reordered = "apiVersion: vpc.example.com/v1\nkind: Network\nmetadata: {name: prod}\nspec:\n  cidr: 10.0.0.0/16\n  subnets:\n  - {name: db, cidr: 10.0.2.0/24}\n  - {name: web, cidr: 10.0.1.0/24, gateway: 10.0.1.1}\n  - {name: cache, cidr: 10.0.4.0/24}\n";
    assert_eq!(
        dev.try_apply(reordered).as_deref(),
        Ok("network.vpc.example.com/prod configured\n")
    );

    // A CRD whose rule does not compile is refused with kube-apiserver's message.
    let broken = example("network-crd.yaml")
        .replace("networks.vpc.example.com", "brokens.vpc.example.com")
        .replace(
            "{plural: networks, singular: network, kind: Network}",
            "{plural: brokens, singular: broken, kind: Broken}",
        )
        .replace("rule: \"self == oldSelf\"", "rule: \"self ==\"");
    let err = dev
        .try_apply(&broken)
        .expect_err("a rule that does not compile");
    assert!(
        err.starts_with("The CustomResourceDefinition \"brokens.vpc.example.com\" is invalid: spec.validation.openAPIV3Schema.properties[spec].properties[cidr].x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{Rule:\"self ==\", Message:\"cidr is immutable\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:8: Syntax error:"),
        "{err}"
    );

    // Status updates run the rules too, with the old object for transition rules.
    let pool_crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: pools.vpc.example.com}\nspec:\n  group: vpc.example.com\n  scope: Namespaced\n  names: {plural: pools, singular: pool, kind: Pool}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    subresources: {status: {}}\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {type: object, properties: {size: {type: integer}}}\n          status:\n            type: object\n            properties: {used: {type: integer}}\n            x-kubernetes-validations:\n            - {rule: \"!has(self.used) || !has(oldSelf.used) || self.used >= oldSelf.used\", message: used never decreases}\n";
    assert!(dev.try_apply(pool_crd).is_ok());
    let out = dev.kubectl(&[
        "wait",
        "--for=condition=Established",
        "crd/pools.vpc.example.com",
        "--timeout=30s",
    ]);
    assert!(out.status.success());
    assert!(
        dev.try_apply(
            "apiVersion: vpc.example.com/v1\nkind: Pool\nmetadata: {name: p}\nspec: {size: 4}\n"
        )
        .is_ok()
    );
    let status = |used: u32| {
        dev.kubectl(&[
            "patch",
            "pool",
            "p",
            "--subresource=status",
            "--type=merge",
            "-p",
            &format!("{{\"status\":{{\"used\":{used}}}}}"),
        ])
    };
    assert!(status(3).status.success());
    let out = status(2);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "The Pool \"p\" is invalid: status: Invalid value: \"object\": used never decreases\n"
    );
}
