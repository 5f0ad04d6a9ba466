// The metal UI: the inventory of Servers through the backend's API, which this page's
// server proxies under /api — state, power and hardware as Metal3 inspected it, refreshed
// every few seconds so power and provisioning changes show without a reload — and their
// actions: power on, power off, reboot (Metal3 tries a soft power-off, then a hard one;
// status.reboot shows how far it got), provision the image of the image form, deprovision,
// delete.
// No framework, no build step.
"use strict";

const COLLECTION = "/api/v1/servers";
const REFRESH_MS = 2000;

const form = document.getElementById("create-form");
const imageForm = document.getElementById("image-form");
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
    const readiness = ready ? ready.status : "Pending";
    const status = item.status || {};
    const hw = status.hardware || {};
    const tr = document.createElement("tr");
    tr.dataset.name = item.name;
    tr.append(
      cell(item.name, "name"),
      cell(status.state || "", "state"),
      cell(status.power || "", "power"),
      cell([hw.manufacturer, hw.model].filter(Boolean).join(" "), "model"),
      cell(hw.cpus ? String(hw.cpus) : "", "cpus"),
      cell(hw.memory || "", "memory"),
      cell((hw.nics || []).map((n) => n.mac).filter(Boolean).join(", "), "nics"),
      cell(item.spec.image ? item.spec.image.url : "", "image"),
      cell(readiness, "status status-" + readiness.toLowerCase()),
      cell(message(ready, status.reboot), "message"),
    );
    const actions = document.createElement("td");
    const path = COLLECTION + "/" + encodeURIComponent(item.name);
    actions.append(
      button("Power on", "power-on", () => act("POST", path + "/power-on", item.name)),
      button("Power off", "power-off", () => act("POST", path + "/power-off", item.name)),
      button("Reboot", "reboot", () => act("POST", path + "/reboot", item.name)),
      button("Provision", "provision", () => act("POST", path + "/provision", item.name, image())),
      button("Deprovision", "deprovision", () => act("POST", path + "/deprovision", item.name)),
      button("Delete", "delete", () => act("DELETE", path, item.name)),
    );
    tr.append(actions);
    rows.append(tr);
  }
  empty.hidden = items.length > 0;
}

// The Ready condition's message, and how the last reboot went once it is over.
function message(ready, reboot) {
  const text = ready ? ready.message : "";
  if (!reboot || reboot.phase === "Rebooting") return text;
  const last = reboot.phase === "Completed"
    ? "last rebooted " + reboot.completedAt
    : "reboot refused: " + (reboot.message || "");
  return text ? text + " (" + last + ")" : last;
}

// The image of the image form, as the provision route takes it.
function image() {
  const data = new FormData(imageForm);
  const body = { url: data.get("url") };
  if (data.get("checksum")) body.checksum = data.get("checksum");
  if (data.get("checksumType")) body.checksumType = data.get("checksumType");
  return body;
}

async function refresh() {
  try {
    const list = await call("GET", COLLECTION);
    render(list.items);
  } catch (e) {
    showError("Cannot list servers: " + e.message);
  }
}

async function act(method, path, name, body) {
  try {
    await call(method, path, body);
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
    bmc: {
      address: data.get("address"),
      credentialsName: data.get("credentials"),
      disableCertificateVerification: data.get("insecure") === "on",
    },
    bootMACAddress: data.get("mac"),
    online: false,
  };
  try {
    await call("POST", COLLECTION, { name: data.get("name"), spec });
    form.reset();
    showError("");
    await refresh();
  } catch (e) {
    showError("Cannot register " + data.get("name") + ": " + e.message);
  }
});

refresh();
setInterval(refresh, REFRESH_MS);
