//! Integration tests of `mni-testkit`: one binary, one module per area.

mod crds;
mod events;
mod rbac;
mod simulator;
mod start;
mod wait;
