// The network UI: lists, creates and deletes VirtualPrivateClouds through the backend's API,
// which this page's server proxies under /api; shows each subnet's free IPs and the NAT
// gateway's EIPs as Kube-OVN reports them. No framework, no build step.
"use strict";

const COLLECTION = "/api/v1/virtualprivateclouds";
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

// "web 10.0.1.0/24: 253 free" for each subnet, from the spec and the operator's status.
function subnets(item) {
  const reported = (item.status && item.status.subnets) || [];
  const list = document.createElement("ul");
  for (const subnet of item.spec.subnets) {
    const status = reported.find((s) => s.name === subnet.name);
    const free = [];
    if (status && status.v4AvailableIPs !== undefined) free.push(status.v4AvailableIPs + " IPv4");
    if (status && status.v6AvailableIPs !== undefined) free.push(status.v6AvailableIPs.toExponential(2) + " IPv6");
    const li = document.createElement("li");
    li.className = "subnet";
    li.dataset.name = subnet.name;
    li.textContent = subnet.name + " " + subnet.cidrBlock + ": " + (free.length ? free.join(", ") + " free" : "pending");
    list.append(li);
  }
  const td = document.createElement("td");
  td.className = "subnets";
  td.append(list);
  return td;
}

// "egress 172.18.0.10" for each EIP of the NAT gateway, "—" without one.
function eips(item) {
  const nat = item.status && item.status.natGateway;
  if (!item.spec.natGateway) return cell("—", "eips");
  const text = ((nat && nat.eips) || [])
    .map((e) => e.name + " " + (e.ip || "pending"))
    .join(", ");
  return cell(text || "pending", "eips");
}

function render(items) {
  rows.replaceChildren();
  for (const item of items) {
    const ready = condition(item, "Ready");
    const state = ready ? ready.status : "Pending";
    const tr = document.createElement("tr");
    tr.dataset.name = item.name;
    tr.append(
      cell(item.name, "name"),
      subnets(item),
      eips(item),
      cell(state, "status status-" + state.toLowerCase()),
      cell(ready ? ready.message : "", "message"),
      cell(item.createdAt ? new Date(item.createdAt).toLocaleString() : "", "created"),
    );
    const actions = document.createElement("td");
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "delete";
    remove.textContent = "Delete";
    remove.addEventListener("click", () => removeItem(item.name));
    actions.append(remove);
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
    showError("Cannot list VPCs: " + e.message);
  }
}

async function removeItem(name) {
  try {
    await call("DELETE", COLLECTION + "/" + encodeURIComponent(name));
    showError("");
    await refresh();
  } catch (e) {
    showError("Cannot delete " + name + ": " + e.message);
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const subnet = { name: data.get("subnet"), cidrBlock: data.get("cidrBlock") };
  if (data.get("gateway")) subnet.gateway = data.get("gateway");
  try {
    await call("POST", COLLECTION, { name: data.get("name"), spec: { subnets: [subnet] } });
    form.reset();
    showError("");
    await refresh();
  } catch (e) {
    showError("Cannot create " + data.get("name") + ": " + e.message);
  }
});

refresh();
setInterval(refresh, REFRESH_MS);
