//! `mni-plugin-vm`: the VM service plugin (`vm.mni.dev/v1`, on KubeVirt) as an external
//! plugin binary, served by `mni-plugin-sdk` over Kubebuilder's `v1alpha1` protocol — the
//! same plugin `mni-scaffold` has built in, installable from a catalog like any community
//! plugin (see the book's "Write and publish a service plugin").

use std::process::ExitCode;

fn main() -> ExitCode {
    mni_plugin_sdk::run(&mni_plugin_vm::VmV1::new())
}
