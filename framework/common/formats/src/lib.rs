//! The formats of Kubernetes values that every layer of mNi checks, written once.
//!
//! - [`names`]: DNS-1123 labels and subdomains and DNS-1035 labels, the shapes of object
//!   names, namespaces, API groups and service names.
//! - [`cron`]: CronJob schedules, parsed and stepped as kube-controller-manager does.
//! - [`net`]: IP addresses and CIDRs ([`net::Cidr`]), with the arithmetic of networks.
//! - [`quantity`]: resource quantities (`500m`, `1.5Gi`), exact, added, compared and printed
//!   as apimachinery does.
//!
//! This crate has no dependencies and does no IO; the API server (for its messages), the
//! runtime, the upstream simulators, the scaffolder and the generated services all use it, so a
//! name or a CIDR is accepted or refused the same way everywhere.
//!
//! ```
//! use mni_formats::{names, net::Cidr};
//!
//! assert!(names::is_dns1123_label("billing"));
//! assert!(!names::is_dns1123_label("Billing"));
//! let cidr = Cidr::parse("10.0.1.5/24").unwrap();
//! assert_eq!(cidr.masked().to_string(), "10.0.1.0/24");
//! assert!(cidr.contains("10.0.1.200".parse().unwrap()));
//! ```

pub mod cron;
pub mod names;
pub mod net;
pub mod quantity;
