//! `mni-plugin-vm`: the built-in `vm.mni.dev/v1` plugin, which scaffolds mNi Cloud's VM
//! service: tenants' virtual machines reconciled onto KubeVirt (`kubevirt.io/v1`) and CDI
//! (`cdi.kubevirt.io/v1beta1`), attached to subnets of the VPC service's VirtualPrivateClouds.
//!
//! `mni-scaffold --plugins vm/v1 new service NAME` makes a complete service, like the default
//! bundle does, whose domain kind is a namespaced `Instance` (an instance type or explicit
//! cores and memory, a boot disk from a container disk image or an HTTP(S) import, data
//! disks, cloud-init with SSH keys from a Secret, a run strategy, the pod network or a VPC
//! subnet with an optional fixed address). Its operator validates instances, applies one
//! KubeVirt VirtualMachine (with DataVolume templates) and a cloud-init Secret per Instance,
//! waits for the VPC subnet it names and reports KubeVirt's status; its backend and frontend
//! serve instances and their power actions.
//!
//! Because `--plugins` replaces the chain, the plugin does the whole job, like
//! `vpc.mni.dev/v1`: `init` and `create api` run the default bundle's plugins, and
//! `new service` runs `rust.mni.dev/v1`, `kustomize.mni.dev/v1`, `service.mni.dev/v1` (told
//! to name the domain kind `Instance` and to leave its files to this plugin) and then the VM
//! specialisation. Start reading at [`v1`]; the templates are in `templates/vm/v1/`.

pub mod v1;

pub use v1::{KEY, VmV1};
