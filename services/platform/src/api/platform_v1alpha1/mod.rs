// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! API group `platform.mni.dev`, version `v1alpha1`.

// +mni:fragment:kinds:tenant
mod tenant;
pub use tenant::{
    QUANTITY_PATTERN, QuotaQuantity, Tenant, TenantLimits, TenantQuotaStatus, TenantSpec,
    TenantStatus,
};
// +mni:fragment-end:kinds:tenant
// +mni:scaffold:kinds
