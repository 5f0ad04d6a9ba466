// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:network
pub mod network;
// +mni:fragment-end:controller-modules:network
// +mni:fragment:controller-modules:virtual_private_cloud
pub mod virtual_private_cloud;
// +mni:fragment-end:controller-modules:virtual_private_cloud
// +mni:fragment:controller-modules:kube_ovn_orphans
pub mod kube_ovn_orphans;
// +mni:fragment-end:controller-modules:kube_ovn_orphans
// +mni:scaffold:controller-modules
