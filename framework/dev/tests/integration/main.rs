//! mni-dev's integration tests, one binary: the binary run as users run it (kubectl suites, the
//! book's commands, the Python client, the process and podman runtimes, `up --with`).

mod support;

mod book;
mod kubectl;
mod kubectl_cheatsheet;
mod olm;
mod podman_runtime;
mod process_runtime;
mod python_client;
mod run_for_real_book;
mod up_with;
mod validation_rules;
