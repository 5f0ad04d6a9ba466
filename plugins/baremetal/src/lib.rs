//! `mni-plugin-baremetal`: the built-in `baremetal.mni.dev/v1` plugin, which scaffolds mNi
//! Cloud's bare-metal service: tenants' physical servers reconciled onto Metal3
//! (`metal3.io/v1alpha1` BareMetalHost and its BMC Secret), their BMCs pre-flighted over real
//! Redfish (`mni-redfish`) before Metal3 gets them.
//!
//! `mni-scaffold --plugins baremetal/v1 new service NAME` makes a complete service whose
//! domain kind is a namespaced `Server` (a BMC address as Metal3 parses it, credentials from a
//! Secret, the boot MAC, certificate verification, desired power, an OS image with its
//! checksum, user data from a Secret, root device hints, labels for Cluster API Metal3's host
//! selectors). Its operator validates servers, pre-flights their BMCs, applies one
//! BareMetalHost and one BMC Secret per Server, deprovisions and powers the host off before
//! a Server goes (a finalizer), and reports Metal3's status; its backend and frontend serve
//! servers, their inventory and their power and provisioning actions.
//!
//! Like `vpc.mni.dev/v1` and `vm.mni.dev/v1` it is a
//! [`SpecialisedService`](mni_plugin_service::SpecialisedService). Start reading at [`v1`];
//! the templates are in `templates/baremetal/v1/`.

pub mod v1;

pub use v1::{BaremetalV1, KEY};
