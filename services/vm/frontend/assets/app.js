// The compute UI: lists, creates, starts, stops, restarts and deletes Instances through the
// backend's API, which this page's server proxies under /api; shows each instance's phase
// (KubeVirt's printableStatus) and address, refreshed every few seconds, so power changes
// show without a reload. No framework, no build step.
"use strict";

const COLLECTION = "/api/v1/instances";
const REFRESH_MS = 2000;

const form = document.getElementById("create-form");
const rows = document.querySelector("#items tbody");
const empty = document.getElementById("empty");
const errorBox = document.getElementById("error");

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = !message;
}

// Calls the API; resolves to the JSON body, rejects with the API's error message.
async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!response.ok) {
    throw new Error((json && json.error && json.error.message) || response.statusText);
  }
  return json;
}

function condition(item, type) {
  const conditions = (item.status && item.status.conditions) || [];
  return conditions.find((c) => c.type === type);
}

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function network(item) {
  const vpc = item.spec.network && item.spec.network.vpc;
  return vpc ? vpc.name + "/" + vpc.subnet : "pod network";
}

function button(label, className, action) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = className;
  b.textContent = label;
  b.addEventListener("click", action);
  return b;
}

function render(items) {
  rows.replaceChildren();
  for (const item of items) {
    const ready = condition(item, "Ready");
    const state = ready ? ready.status : "Pending";
    const status = item.status || {};
    const size = item.spec.instanceType ||
      (item.spec.resources ? item.spec.resources.cores + " cores, " + item.spec.resources.memory : "");
    const tr = document.createElement("tr");
    tr.dataset.name = item.name;
    tr.append(
      cell(item.name, "name"),
      cell(size, "type"),
      cell(status.phase || "Pending", "phase"),
      cell(status.ipAddress || "", "ip"),
      cell(network(item), "network"),
      cell(state, "status status-" + state.toLowerCase()),
      cell(ready ? ready.message : "", "message"),
      cell(item.createdAt ? new Date(item.createdAt).toLocaleString() : "", "created"),
    );
    const actions = document.createElement("td");
    const path = COLLECTION + "/" + encodeURIComponent(item.name);
    actions.append(
      button("Start", "start", () => act("POST", path + "/start", item.name)),
      button("Stop", "stop", () => act("POST", path + "/stop", item.name)),
      button("Restart", "restart", () => act("POST", path + "/restart", item.name)),
      button("Delete", "delete", () => act("DELETE", path, item.name)),
    );
    tr.append(actions);
    rows.append(tr);
  }
  empty.hidden = items.length > 0;
}

async function refresh() {
  try {
    const list = await call("GET", COLLECTION);
    render(list.items);
  } catch (e) {
    showError("Cannot list instances: " + e.message);
  }
}

async function act(method, path, name) {
  try {
    await call(method, path);
    showError("");
    await refresh();
  } catch (e) {
    showError("Cannot change " + name + ": " + e.message);
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const spec = {
    instanceType: data.get("instanceType"),
    bootDisk: { image: data.get("image") },
  };
  if (data.get("sshKeys")) spec.cloudInit = { sshKeys: { name: data.get("sshKeys") } };
  if (data.get("vpc")) spec.network = { vpc: { name: data.get("vpc"), subnet: data.get("subnet") } };
  try {
    await call("POST", COLLECTION, { name: data.get("name"), spec });
    form.reset();
    showError("");
    await refresh();
  } catch (e) {
    showError("Cannot create " + data.get("name") + ": " + e.message);
  }
});

refresh();
setInterval(refresh, REFRESH_MS);
