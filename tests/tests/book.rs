//! Runs every `$ ` command of the book chapters "Your first operator", "Build your first
//! service", "Give a tenant a VPC", "Give a tenant a virtual machine", "Bring your own bare
//! metal" and "Install the mNi platform and onboard tenants", in order, each chapter in one bash
//! session in a temporary directory, with the `mni-scaffold` and `mni-dev` binaries of this build
//! (and `mni-platform`, built from `services/platform`) and kubectl on PATH — and checks what
//! the chapter says happens.

use std::sync::Mutex;

use mni_chapter::Session;

/// The VPC and VM chapters both build a service named `network` (for two domains) into the
/// shared target directory, where Cargo puts both `network-operator` binaries at the same path:
/// run at once, one chapter's `cargo run` could start the other's operator, which watches
/// kinds its cluster does not serve. They take turns.
static NETWORK_PROJECT: Mutex<()> = Mutex::new(());

/// Runs the chapter's commands; returns stdout and stderr, or panics with both.
fn run_chapter(file: &str) -> (String, String) {
    run_chapter_in(file, |_| {})
}

/// [`run_chapter`], with `prepare` given the chapter's working directory first.
fn run_chapter_in(file: &str, prepare: impl FnOnce(&std::path::Path)) -> (String, String) {
    let root = mni_tests::repo_root();
    let chapter = std::fs::read_to_string(root.join("book/src").join(file))
        .unwrap_or_else(|e| panic!("book/src/{file}: {e}"));
    let bins = mni_tests::book::bin_dir();
    for bin in ["mni-scaffold", "mni-dev"] {
        assert!(
            bins.join(bin).is_file(),
            "{bin} is built with the workspace tests (cargo nextest run --workspace): {}",
            bins.display()
        );
    }
    let commands: Vec<String> = mni_chapter::console_steps(&chapter)
        .into_iter()
        .map(|s| s.command)
        .collect();
    assert!(commands.len() >= 10, "{file}: {commands:?}");

    let tmp = tempfile::tempdir().expect("tempdir");
    prepare(tmp.path());
    // The session stops the background jobs (mni-dev, the operator) however the script ends.
    let mut session = Session::new(tmp.path())
        .path_first(&bins)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("CARGO_NET_OFFLINE", "true")
        .env("RUST_LOG", "warn")
        .env_remove("KUBECONFIG")
        .env_remove("MNI_PLUGINS_PATH");
    for cmd in &commands {
        session.push_command(cmd);
        if cmd.starts_with("mkdir ") {
            // Pre-seed the lock file with the versions mNi is tested with, so the project's
            // `cargo build` reuses the workspace's compiled dependencies (as a CI cache would).
            session.push_line(&format!(
                "cp {} Cargo.lock",
                root.join("Cargo.lock").display()
            ));
        }
    }
    let out = session
        .run_with(|c| {
            mni_tests::clean_cargo_env(c);
        })
        .expect("bash runs");
    assert!(
        out.success(),
        "{file}\nscript:\n{}\n{out}",
        session.script()
    );
    eprintln!(
        "{file}: the script ran {:?}; what it left running stopped in {:?}",
        out.ran_for, out.stopped_in
    );
    // What a chapter starts stops on SIGTERM, as a Pod's containers must.
    assert!(out.stragglers.is_empty(), "{file}\n{out}");
    (out.stdout, out.stderr)
}

#[track_caller]
fn expect_all(stdout: &str, stderr: &str, expected: &[&str]) {
    for e in expected {
        assert!(
            stdout.contains(e) || stderr.contains(e),
            "missing {e:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}

#[test]
fn first_operator_chapter_commands_run() {
    let (stdout, stderr) = run_chapter("first-operator.md");
    expect_all(
        &stdout,
        &stderr,
        &[
            "create src/controllers/guestbook.rs",
            "exit code 2",
            "resource webapp/v1, Kind=Guestbook already exists",
            "nothing was written",
            "test a_guestbook_becomes_ready ... ok",
            "test checked_in_crds_match_the_code ... ok",
            "customresourcedefinition.apiextensions.k8s.io/guestbooks.webapp.example.com created",
            "guestbook.webapp.example.com/guestbook-sample condition met",
            "guestbook-sample   True",
            "deployment \"guestbook-controller-manager\" successfully rolled out",
        ],
    );
}

#[test]
fn first_service_chapter_commands_run() {
    let (stdout, stderr) = run_chapter("first-service.md");
    expect_all(
        &stdout,
        &stderr,
        &[
            "create services/billing/backend/src/main.rs",
            "create services/billing/frontend/assets/index.html",
            "billing.billing.example.com/billing-sample condition met",
            "deployment.apps/billing-sample-backend",
            "networkpolicy.networking.k8s.io/billing-sample-backend",
            "deployment \"billing-sample-frontend\" successfully rolled out",
            "billing-sample-frontend   3/3",
            "backend",
            "billingaccount.billing.example.com/acme condition met",
            "\"acme\"",
            "ACME Inc.",
            "billing.billing.example.com \"billing-sample\" deleted",
        ],
    );
}

#[test]
fn vpc_chapter_commands_run() {
    let (stdout, stderr) = {
        let _turn = NETWORK_PROJECT.lock().unwrap_or_else(|e| e.into_inner());
        run_chapter("vpc.md")
    };
    expect_all(
        &stdout,
        &stderr,
        &[
            "create operator/src/controllers/virtual_private_cloud.rs",
            "virtualprivatecloud.network.example.com/virtualprivatecloud-sample condition met",
            "virtualprivatecloud-sample   tenant-a-virtualprivatecloud-sample",
            "web 245 1.8446744073709552e+19",
            "db 253 ",
            "egress 172.19.0.",
            "subnet.kubeovn.io/tenant-a-virtualprivatecloud-sample-web",
            "iptablesdnatrule.kubeovn.io/tenant-a-virtualprivatecloud-sample-web-https",
            "spec.subnets: Invalid value: \"object\": subnet web: cidrBlock 10.0.1.0/24,fd00:10:1::/64 overlaps subnet cache (10.0.1.128/25)",
            "spec.subnets[1].cidrBlock: Forbidden: subnet db: cidrBlock is immutable (it was 10.0.2.0/24)",
            "\"code\":422,\"reason\":\"Invalid\",\"message\":\"VirtualPrivateCloud \\\"virtualprivatecloud-sample\\\" is invalid: subnet web: cidrBlock 10.0.1.0/24,fd00:10:1::/64 overlaps subnet cache (10.0.1.128/25)\"",
            "HTTP 422",
            "HTTP 201",
            "virtualprivatecloud.network.example.com \"virtualprivatecloud-sample\" deleted",
            "No resources found",
        ],
    );
    // The Kube-OVN objects were there while the VPC was, and are gone after it.
    assert_eq!(stderr.matches("No resources found").count(), 1, "{stderr}");
}

#[test]
fn vm_chapter_commands_run() {
    let (stdout, stderr) = {
        let _turn = NETWORK_PROJECT.lock().unwrap_or_else(|e| e.into_inner());
        run_chapter("vm.md")
    };
    expect_all(
        &stdout,
        &stderr,
        &[
            "create operator/src/controllers/instance.rs",
            "instance.compute.mni.dev/instance-sample condition met",
            "Running 10.0.1.20 mni-dev-kubevirt",
            "ssh_authorized_keys:",
            "alice@example.com",
            "instanceType: unknown instance type t2.micro",
            "instance.compute.mni.dev \"instance-sample\" deleted",
            "No resources found",
        ],
    );
}

#[test]
fn baremetal_chapter_commands_run() {
    let (stdout, stderr) = run_chapter("baremetal.md");
    expect_all(
        &stdout,
        &stderr,
        &[
            "create operator/src/controllers/server.rs",
            "server.metal.mni.dev/rack-1 condition met",
            "available Off Sushy Emulator 52:54:00:00:00:01",
            "baremetalhost.metal3.io/rack-1",
            "\"PowerState\": \"On\"",
            "\"PowerState\": \"Off\"",
            "reboot reboot-1 hard: Completed",
            "bootMACAddress: 52:54:00 is not a MAC address",
            "image.url: cannot change the image of a provisioned server",
            "server.metal.mni.dev \"rack-1\" deleted",
            "No resources found",
        ],
    );
}

/// Builds the platform's binaries, `mni-platform` and `mni-console`, from `services/platform`
/// (its own workspace, with mNi's lock file, as scripts/golden.sh builds it) into the
/// directory of this build's binaries, where the chapter finds them on PATH.
fn build_platform() {
    let root = mni_tests::repo_root();
    let project = root.join("services/platform");
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).expect("copy Cargo.lock");
    let target = mni_tests::book::bin_dir()
        .parent()
        .expect("target/<profile>")
        .to_path_buf();
    let status = mni_tests::clean_cargo_env(&mut std::process::Command::new(env!("CARGO")))
        .args([
            "build",
            "--offline",
            "--bin",
            "mni-platform",
            "--bin",
            "mni-console",
        ])
        .arg("--manifest-path")
        .arg(project.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "building mni-platform and mni-console failed"
    );
}

#[test]
fn tenants_chapter_commands_run() {
    build_platform();
    let (stdout, stderr) = run_chapter_in("tenants.md", |dir| {
        // The chapter is run beside a checkout of mNi, `mni/`.
        std::os::unix::fs::symlink(mni_tests::repo_root(), dir.join("mni")).expect("symlink");
    });
    expect_all(
        &stdout,
        &stderr,
        &[
            "clusterserviceversion.operators.coreos.com/mni-platform.v0.1.0 condition met",
            "clusterserviceversion.operators.coreos.com/mni-vm.v0.1.0 condition met",
            "customresourcedefinition.apiextensions.k8s.io/tenants.platform.mni.dev\n",
            "clusterrole.rbac.authorization.k8s.io/mni-platform-tenant-viewer\n",
            "deployment.apps/mni-platform-controller-manager\ndeployment.apps/mni-platform-console\nservice/mni-platform-console\n",
            "tenant.platform.mni.dev/tenant-sample condition met",
            "tenant-sample            [\"tenant-tenant-sample\"]",
            "resourcequota/",
            "limitrange/",
            "networkpolicy.networking.k8s.io/",
            "rolebinding.rbac.authorization.k8s.io/",
            "virtualprivatecloud.network.mni.dev/default",
            "{\"pods\":\"20\",\"requests.cpu\":\"4\",\"requests.memory\":\"8Gi\"}",
            "tenant.platform.mni.dev/dev condition met",
            "[\"tenant-tenant-sample-dev\"] [\"tenant-sample\",\"dev\"]",
            "tenant.platform.mni.dev/qa condition met",
            "QuotaExceedsParent: spec.quota.pods: the sub-tenants of \"tenant-sample\" would ask for 21 together, more than its quota of 20",
            "namespaces \"tenant-tenant-sample-qa\" not found",
            "instance.compute.mni.dev/web created",
            "User \"alice\" cannot create resource \"instances\" in API group \"compute.mni.dev\" in the namespace \"default\"",
            "{\"name\":\"mni-platform.v0.1.0\",\"namespace\":\"operators\",\"displayName\":\"Mni Platform\",\"version\":\"0.1.0\",\"kinds\":[\"Tenant\"]}",
            "{\"name\":\"mni-vpc.v0.1.0\",\"namespace\":\"operators\",\"displayName\":\"Mni Vpc\",\"version\":\"0.1.0\",\"kinds\":[\"Network\",\"VirtualPrivateCloud\"]}",
            "{\"name\":\"tenant-sample\",\"namespaces\":[\"tenant-tenant-sample\"],\"ready\":\"True\"}",
            "tenant.platform.mni.dev \"qa\" deleted",
            "tenant.platform.mni.dev/tenant-sample",
        ],
    );
    // can-i: yes in the tenant's namespace and its sub-tenant's, no elsewhere.
    let answers: Vec<&str> = stdout
        .lines()
        .filter(|l| *l == "yes" || *l == "no")
        .collect();
    assert_eq!(answers, ["yes", "no", "no", "yes"], "{stdout}");
    assert!(
        !stdout.contains("tenant.platform.mni.dev/dev\n"),
        "{stdout}"
    );
}
