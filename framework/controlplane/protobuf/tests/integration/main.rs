//! The protobuf codec's integration tests, one binary; fixtures stay in tests/fixtures.

mod kubectl_fixtures;
mod malformed;
mod round_trip;
