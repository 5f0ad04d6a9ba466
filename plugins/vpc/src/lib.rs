//! `mni-plugin-vpc`: the built-in `vpc.mni.dev/v1` plugin, which scaffolds mNi Cloud's VPC
//! service: tenants' virtual private clouds reconciled onto Kube-OVN (`kubeovn.io/v1`).
//!
//! `mni-scaffold --plugins vpc/v1 new service NAME` makes a complete service, like the default
//! bundle does, whose domain kind is a namespaced `VirtualPrivateCloud` (subnets, static
//! routes, bound namespaces, an optional NAT gateway with elastic IPs and SNAT/DNAT rules).
//! Its operator validates address plans, applies one Kube-OVN `Vpc`, its `Subnet`s and the NAT
//! objects per VirtualPrivateCloud, cleans them up through a finalizer and reports their status;
//! its backend and frontend serve VPCs and their subnets.
//!
//! Because `--plugins` replaces the chain, the plugin does the whole job: `init` and
//! `create api` run the default bundle's plugins, and `new service` runs `rust.mni.dev/v1`,
//! `kustomize.mni.dev/v1`, `service.mni.dev/v1` (told to name the domain kind
//! `VirtualPrivateCloud` and to leave its files to this plugin) and then the VPC
//! specialisation. Start reading at [`v1`]; the templates are in `templates/vpc/v1/`.

pub mod v1;

pub use v1::{KEY, VpcV1};
