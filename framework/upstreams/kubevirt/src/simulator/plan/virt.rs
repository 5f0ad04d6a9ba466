//! virt-controller's and virt-handler's part of the plan: instances from VMs by run strategy,
//! their phases on the simulated node, virt-launcher pods, and the VMs' statuses.

use super::addresses::{attachments, mac_for};
use super::import::host_of;
use super::*;

/// The VM condition saying the template changed under a running instance.
const RESTART_REQUIRED: &str = "RestartRequired";

/// The annotation recording the VM generation an instance was started from.
const VM_GENERATION: &str = "kubevirt.io/vm-generation";

/// Why the simulated scheduler cannot place `vmi`: kube-scheduler's message.
pub(super) fn unschedulable(
    vmi: &VirtualMachineInstance,
    node: Option<&NodeInfo>,
) -> Option<String> {
    let Some(node) = node else {
        return Some("0/0 nodes are available: no node to run virtual machines on.".into());
    };
    let domain = &vmi.spec.domain;
    let requests = domain
        .resources
        .as_ref()
        .map(|r| r.requests.clone())
        .unwrap_or_default();
    let mut reasons = Vec::new();
    let cpu = match requests.get("cpu") {
        Some(q) => match quantity::value(q) {
            Ok(v) => v,
            Err(e) => return Some(format!("spec.domain.resources.requests.cpu: {e}")),
        },
        #[allow(clippy::cast_precision_loss, reason = "vCPU counts are small")]
        None => domain.cpu.clone().unwrap_or_default().vcpus() as f64,
    };
    if cpu > node.cpu {
        reasons.push("1 Insufficient cpu");
    }
    let memory = requests
        .get("memory")
        .map(|q| ("spec.domain.resources.requests.memory", q))
        .or_else(|| {
            domain
                .memory
                .as_ref()
                .and_then(|m| m.guest.as_ref())
                .map(|q| ("spec.domain.memory.guest", q))
        });
    if let Some((field, q)) = memory {
        match quantity::value(q) {
            Ok(v) if v > node.memory => reasons.push("1 Insufficient memory"),
            Ok(_) => {}
            Err(e) => return Some(format!("{field}: {e}")),
        }
    }
    if vmi
        .spec
        .node_selector
        .iter()
        .any(|(k, v)| node.labels.get(k) != Some(v))
    {
        reasons.push("1 node(s) didn't match Pod's node affinity/selector");
    }
    (!reasons.is_empty()).then(|| {
        format!(
            "0/1 nodes are available: {}. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            reasons.join(", ")
        )
    })
}

/// The pull error of the instance's first container disk on a host under `.invalid`.
pub(super) fn image_pull_failure(vmi: &VirtualMachineInstance) -> Option<String> {
    vmi.spec.volumes.iter().find_map(|v| {
        let image = &v.container_disk.as_ref()?.image;
        let host = host_of(image);
        (host.contains('.') && host.ends_with(".invalid")).then(|| {
            format!("failed to pull image {image:?}: dial tcp: lookup {host}: no such host")
        })
    })
}

pub(super) fn plan_instance(
    vmi: &VirtualMachineInstance,
    snapshot: &Snapshot,
    ipam: &mut Ipam<'_>,
    now: &Time,
    writes: &mut Vec<Write>,
) {
    if vmi.metadata.deletion_timestamp.is_some() {
        return;
    }
    let current = vmi.status.clone().unwrap_or_default();
    let existing = current.conditions.as_slice();
    let mut desired = current.clone();
    let phase = current.phase;
    let uid = vmi.uid().unwrap_or_default();
    let launcher = snapshot.launchers.iter().find(|p| {
        p.labels().get(CREATED_BY_LABEL) == Some(&uid)
            && p.namespace() == vmi.namespace()
            && p.metadata.deletion_timestamp.is_none()
    });
    let enter = |desired: &mut VirtualMachineInstanceStatus, phase: InstancePhase| {
        desired.phase = Some(phase);
        desired.phase_transition_timestamps.push(PhaseTransition {
            phase: Some(phase),
            phase_transition_timestamp: Some(now.clone()),
        });
    };
    match phase {
        None | Some(InstancePhase::Unknown) => enter(&mut desired, InstancePhase::Pending),
        Some(InstancePhase::Pending) => {
            enter(&mut desired, InstancePhase::Scheduling);
            desired.conditions = vec![kv_condition(
                existing,
                crate::v1::READY,
                false,
                "GuestNotRunning",
                "Guest VM is not reported as running",
                now,
            )];
        }
        Some(InstancePhase::Scheduling) => match unschedulable(vmi, snapshot.node.as_ref()) {
            Some(message) => {
                desired.conditions = vec![
                    kv_condition(
                        existing,
                        crate::v1::READY,
                        false,
                        "GuestNotRunning",
                        "Guest VM is not reported as running",
                        now,
                    ),
                    kv_condition(
                        existing,
                        crate::v1::POD_SCHEDULED,
                        false,
                        "Unschedulable",
                        &message,
                        now,
                    ),
                ];
            }
            None => {
                enter(&mut desired, InstancePhase::Scheduled);
                desired.node_name = snapshot.node.as_ref().map(|n| n.name.clone());
                desired.qos_class = Some("Burstable".into());
                desired.conditions = vec![
                    kv_condition(
                        existing,
                        crate::v1::READY,
                        false,
                        "GuestNotRunning",
                        "Guest VM is not reported as running",
                        now,
                    ),
                    kv_condition(existing, crate::v1::POD_SCHEDULED, true, "", "", now),
                ];
            }
        },
        Some(InstancePhase::Scheduled) => {
            let ready_false = |reason: &str, message: &str| {
                vec![
                    kv_condition(existing, crate::v1::READY, false, reason, message, now),
                    kv_condition(existing, crate::v1::POD_SCHEDULED, true, "", "", now),
                ]
            };
            if let Some(message) = image_pull_failure(vmi) {
                desired.conditions = ready_false("ErrImagePull", &message);
            } else if launcher.is_none() {
                // The guest starts in its virt-launcher pod, created below.
            } else {
                match interfaces(vmi, snapshot, ipam) {
                    Err((reason, message)) => {
                        desired.conditions = ready_false(reason, &message);
                    }
                    Ok(interfaces) => {
                        enter(&mut desired, InstancePhase::Running);
                        desired.interfaces = interfaces;
                        desired.conditions = vec![
                            kv_condition(existing, crate::v1::READY, true, "", "", now),
                            kv_condition(existing, crate::v1::POD_SCHEDULED, true, "", "", now),
                            kv_condition(existing, "AgentConnected", true, "", "", now),
                        ];
                    }
                }
            }
        }
        Some(_) => {}
    }
    let placed = matches!(
        desired.phase,
        Some(InstancePhase::Scheduled | InstancePhase::Running)
    );
    match launcher {
        None if placed => {
            writes.push(Write::Create {
                kind: Kind::Pod,
                namespace: vmi.namespace().unwrap_or_default(),
                body: launcher_for(vmi, snapshot),
            });
        }
        Some(pod) => {
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                desired.active_pods = [(pod.uid().unwrap_or_default(), node)].into();
            }
            let running = desired.phase == Some(InstancePhase::Running);
            let ip = desired.interfaces.iter().find_map(|i| i.ip_address.clone());
            let pod_status = launcher_status(pod, running, ip.as_deref(), now);
            push_status(
                writes,
                Kind::Pod,
                pod,
                &pod.status.clone().unwrap_or_default(),
                &pod_status,
                false,
            );
        }
        None => {}
    }
    let step = desired.phase != phase;
    push_status(
        writes,
        Kind::VirtualMachineInstance,
        vmi,
        &current,
        &desired,
        step,
    );
}

/// virt-controller's virt-launcher pod for an instance, bound to the simulated node: the
/// instance's annotations (Kube-OVN reads its attachments from them), its claims as volumes
/// (so `WaitForFirstConsumer` claims see their consumer), owned by the instance.
pub(super) fn launcher_for(vmi: &VirtualMachineInstance, snapshot: &Snapshot) -> Value {
    let name = vmi.name_any();
    let uid = vmi.uid().unwrap_or_default();
    let suffix: String = uid
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(5)
        .collect::<String>()
        .to_ascii_lowercase();
    let mut annotations = vmi.annotations().clone();
    annotations.insert("kubevirt.io/domain".into(), name.clone());
    let claims: Vec<Value> = vmi
        .spec
        .volumes
        .iter()
        .filter_map(|v| {
            let claim = v.data_volume.as_ref().map(|d| d.name.clone()).or_else(|| {
                v.persistent_volume_claim
                    .as_ref()
                    .map(|p| p.claim_name.clone())
            })?;
            Some(json!({"name": v.name, "persistentVolumeClaim": {"claimName": claim}}))
        })
        .collect();
    let requests = vmi
        .spec
        .domain
        .resources
        .as_ref()
        .map(|r| to_json(&r.requests))
        .unwrap_or_else(|| json!({}));
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("virt-launcher-{name}-{suffix}"),
            "namespace": vmi.namespace(),
            "labels": {
                LAUNCHER_LABEL.0: LAUNCHER_LABEL.1,
                CREATED_BY_LABEL: uid,
                VM_NAME_LABEL: name,
            },
            "annotations": annotations,
            "ownerReferences": [owner_reference(vmi)],
        },
        "spec": {
            "nodeName": snapshot.node.as_ref().map(|n| n.name.clone()),
            "restartPolicy": "Never",
            "containers": [{
                "name": "compute",
                "image": "quay.io/kubevirt/virt-launcher:v1.6.0",
                "resources": {"requests": requests},
            }],
            "volumes": claims,
        },
    })
}

/// The status the simulated kubelet reports for a virt-launcher pod: `Running` and ready
/// with the instance's first address once the instance runs, `Pending` before.
pub(super) fn launcher_status(
    pod: &Pod,
    running: bool,
    ip: Option<&str>,
    now: &Time,
) -> k8s_openapi::api::core::v1::PodStatus {
    let current = pod.status.clone().unwrap_or_default();
    let since = |type_: &str, status: &str| {
        current
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == type_ && c.status == status)
            .and_then(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| now.clone())
    };
    let ready = if running { "True" } else { "False" };
    let mut status = json!({
        "phase": if running { "Running" } else { "Pending" },
        "qosClass": "Burstable",
        "hostIP": "10.245.0.1",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": since("PodScheduled", "True")},
            {"type": "Ready", "status": ready, "lastTransitionTime": since("Ready", ready)},
        ],
    });
    if running {
        status["startTime"] = json!(current.start_time.clone().unwrap_or_else(|| now.clone()));
        if let Some(ip) = ip {
            status["podIP"] = json!(ip);
            status["podIPs"] = json!([{"ip": ip}]);
        }
    }
    serde_json::from_value(status).unwrap_or_default()
}

/// The instance's interfaces with their addresses, or why one cannot get an address.
pub(super) fn interfaces(
    vmi: &VirtualMachineInstance,
    snapshot: &Snapshot,
    ipam: &mut Ipam<'_>,
) -> Result<Vec<InstanceInterface>, (&'static str, String)> {
    let attachments = attachments(vmi, &snapshot.subnets).map_err(|m| ("InvalidNetwork", m))?;
    let owner = key(vmi);
    let mut out = Vec::new();
    for (i, a) in attachments.iter().enumerate() {
        let ip = match &a.pool {
            Some(pool) => Some(ipam.allocate(&owner, pool, a.fixed.as_deref())?),
            None => None,
        };
        let mac = vmi
            .spec
            .domain
            .devices
            .interfaces
            .iter()
            .find(|x| x.name == a.interface)
            .and_then(|x| x.mac_address.clone())
            .or_else(|| ip.map(mac_for));
        out.push(InstanceInterface {
            name: Some(a.interface.clone()),
            ip_address: ip.map(|ip| ip.to_string()),
            ip_addresses: ip.map(|ip| ip.to_string()).into_iter().collect(),
            mac,
            interface_name: Some(format!("eth{i}")),
            info_source: Some("domain, guest-agent".into()),
        });
    }
    Ok(out)
}

/// The DataVolumes a VM's instance needs: its templates and its `dataVolume` volumes.
pub(super) fn data_volume_names(vm: &VirtualMachine) -> BTreeSet<String> {
    vm.spec
        .data_volume_templates
        .iter()
        .filter_map(|t| t.metadata.name.clone())
        .chain(
            vm.spec
                .template
                .spec
                .volumes
                .iter()
                .filter_map(|v| v.data_volume.as_ref().map(|d| d.name.clone())),
        )
        .collect()
}

pub(super) fn plan_virtual_machine(
    vm: &VirtualMachine,
    dvs: &BTreeMap<Key, &DataVolume>,
    vmis: &BTreeMap<Key, &VirtualMachineInstance>,
    now: &Time,
    writes: &mut Vec<Write>,
) {
    let (namespace, name) = key(vm);
    let current = vm.status.clone().unwrap_or_default();
    let existing = current.conditions.as_slice();
    let strategy = vm.spec.effective_run_strategy();
    let vmi = vmis.get(&(namespace.clone(), name.clone())).copied();
    let live = vmi.filter(|v| v.metadata.deletion_timestamp.is_none());
    let deleting = vm.metadata.deletion_timestamp.is_some();

    // DataVolume templates: created with the VM, whatever its run strategy.
    for template in &vm.spec.data_volume_templates {
        let Some(dv_name) = template.metadata.name.clone() else {
            continue;
        };
        if deleting || dvs.contains_key(&(namespace.clone(), dv_name.clone())) {
            continue;
        }
        writes.push(Write::Create {
            kind: Kind::DataVolume,
            namespace: namespace.clone(),
            body: json!({
                "apiVersion": format!("{}/{}", cdi::GROUP, cdi::VERSION),
                "kind": "DataVolume",
                "metadata": {
                    "name": dv_name,
                    "namespace": namespace,
                    "labels": template.metadata.labels,
                    "annotations": template.metadata.annotations,
                    "ownerReferences": [owner_reference(vm)],
                },
                "spec": to_json(&template.spec),
            }),
        });
    }
    let mut waiting_for = Vec::new();
    let mut failed = Vec::new();
    for dv_name in data_volume_names(vm) {
        let phase = dvs
            .get(&(namespace.clone(), dv_name.clone()))
            .and_then(|d| d.status.as_ref())
            .and_then(|s| s.phase);
        match phase {
            Some(DataVolumePhase::Succeeded) => {}
            Some(DataVolumePhase::Failed) => failed.push(dv_name),
            _ => waiting_for.push(dv_name),
        }
    }
    let volumes_ready = waiting_for.is_empty() && failed.is_empty();

    // Run strategy and start/stop requests.
    let mut requests = current.state_change_requests.clone();
    let mut want = match strategy {
        RunStrategy::Always | RunStrategy::RerunOnFailure | RunStrategy::Once => true,
        RunStrategy::Halted => false,
        RunStrategy::Manual => live.is_some(),
    };
    while let Some(request) = requests.first() {
        match request.action {
            StateChangeAction::Stop if vmi.is_some() => {
                want = false;
                break;
            }
            StateChangeAction::Stop => {
                requests.remove(0);
            }
            StateChangeAction::Start if vmi.is_none() => {
                want = true;
                if volumes_ready {
                    requests.remove(0);
                }
                break;
            }
            StateChangeAction::Start if live.is_some() => {
                requests.remove(0);
            }
            StateChangeAction::Start => {
                want = false;
                break;
            }
        }
    }
    if !deleting {
        if want && vmi.is_none() && volumes_ready {
            writes.push(Write::Create {
                kind: Kind::VirtualMachineInstance,
                namespace: namespace.clone(),
                body: instance_for(vm),
            });
        }
        if !want && live.is_some() {
            writes.push(Write::Delete {
                kind: Kind::VirtualMachineInstance,
                namespace: namespace.clone(),
                name: name.clone(),
            });
        }
    }

    let vmi_status = vmi.and_then(|v| v.status.clone()).unwrap_or_default();
    let vmi_ready = vmi.is_some() && is_condition_true(&vmi_status.conditions, crate::v1::READY);
    let vmi_ready_reason =
        find_condition(&vmi_status.conditions, crate::v1::READY).and_then(|c| c.reason.clone());
    let unschedulable = find_condition(&vmi_status.conditions, crate::v1::POD_SCHEDULED)
        .filter(|c| c.status == "False")
        .cloned();
    let printable = if deleting {
        PrintableStatus::Terminating
    } else if vmi.is_some() && live.is_none() {
        PrintableStatus::Stopping
    } else if !failed.is_empty() {
        PrintableStatus::DataVolumeError
    } else if vmi.is_some() {
        if vmi_status.phase == Some(InstancePhase::Running) {
            PrintableStatus::Running
        } else if unschedulable.is_some() {
            PrintableStatus::ErrorUnschedulable
        } else if vmi_ready_reason.as_deref() == Some("ErrImagePull") {
            PrintableStatus::ErrImagePull
        } else {
            PrintableStatus::Starting
        }
    } else if want && !volumes_ready {
        PrintableStatus::Provisioning
    } else if want {
        PrintableStatus::Starting
    } else {
        PrintableStatus::Stopped
    };
    let mut conditions = Vec::new();
    if vmi.is_none() {
        conditions.push(kv_condition(
            existing,
            crate::v1::READY,
            false,
            "VMINotExists",
            "VMI does not exist",
            now,
        ));
    } else if vmi_ready {
        conditions.push(kv_condition(existing, crate::v1::READY, true, "", "", now));
    } else {
        let message = find_condition(&vmi_status.conditions, crate::v1::READY)
            .and_then(|c| c.message.clone())
            .unwrap_or_default();
        conditions.push(kv_condition(
            existing,
            crate::v1::READY,
            false,
            vmi_ready_reason.as_deref().unwrap_or("GuestNotRunning"),
            &message,
            now,
        ));
    }
    if let Some(c) = unschedulable {
        conditions.push(kv_condition(
            existing,
            crate::v1::POD_SCHEDULED,
            false,
            c.reason.as_deref().unwrap_or(""),
            c.message.as_deref().unwrap_or(""),
            now,
        ));
    }
    // A template changed under a running instance: KubeVirt does not apply it until the
    // instance restarts, and says so.
    let stale = live.is_some_and(|v| to_json(&v.spec) != to_json(&vm.spec.template.spec));
    if stale {
        conditions.push(kv_condition(
            existing,
            RESTART_REQUIRED,
            true,
            "",
            "a non-live-updatable field was changed in the template spec",
            now,
        ));
    }
    if !data_volume_names(vm).is_empty() {
        conditions.push(if volumes_ready {
            kv_condition(
                existing,
                "DataVolumesReady",
                true,
                "AllDVsReady",
                "All of the VMI's DVs are bound and ready",
                now,
            )
        } else if !failed.is_empty() {
            kv_condition(
                existing,
                "DataVolumesReady",
                false,
                "DataVolumeError",
                &format!("DataVolume(s) failed: {}", failed.join(", ")),
                now,
            )
        } else {
            kv_condition(
                existing,
                "DataVolumesReady",
                false,
                "NotAllDVsReady",
                &format!(
                    "Not all of the VMI's DVs are ready: {}",
                    waiting_for.join(", ")
                ),
                now,
            )
        });
    }
    let desired = VirtualMachineStatus {
        printable_status: Some(printable),
        created: vmi.is_some(),
        ready: vmi_ready,
        conditions,
        run_strategy: Some(strategy),
        observed_generation: live
            .and_then(|v| v.annotations().get(VM_GENERATION))
            .and_then(|g| g.parse().ok())
            .or(vm.metadata.generation),
        desired_generation: vm.metadata.generation,
        state_change_requests: requests,
    };
    push_status(writes, Kind::VirtualMachine, vm, &current, &desired, false);
}

/// The instance virt-controller creates for a VM: same name, the template's metadata and
/// spec, owned by the VM.
pub(super) fn instance_for(vm: &VirtualMachine) -> Value {
    let mut annotations = vm
        .spec
        .template
        .metadata
        .clone()
        .unwrap_or_default()
        .annotations;
    annotations.insert(
        VM_GENERATION.into(),
        vm.metadata.generation.unwrap_or(0).to_string(),
    );
    let meta = vm.spec.template.metadata.clone().unwrap_or_default();
    let mut labels = meta.labels.clone();
    labels.insert(VM_NAME_LABEL.into(), vm.name_any());
    json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {
            "name": vm.name_any(),
            "namespace": vm.namespace(),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(vm)],
        },
        "spec": to_json(&vm.spec.template.spec),
    })
}
