// The ledger UI: lists, creates and deletes LedgerAccounts through the backend's API,
// which this page's server proxies under /api. No framework, no build step.
"use strict";

const COLLECTION = "/api/v1/ledgeraccounts";
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

function readyCondition(item) {
  const conditions = (item.status && item.status.conditions) || [];
  return conditions.find((c) => c.type === "Ready");
}

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function render(items) {
  rows.replaceChildren();
  for (const item of items) {
    const ready = readyCondition(item);
    const tr = document.createElement("tr");
    tr.dataset.name = item.name;
    tr.append(
      cell(item.name, "name"),
      cell(item.spec.displayName, "display-name"),
      cell(ready ? ready.status : "Pending", "status status-" + (ready ? ready.status : "Pending").toLowerCase()),
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
    showError("Cannot list LedgerAccounts: " + e.message);
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
  const spec = { displayName: data.get("displayName") };
  if (data.get("description")) spec.description = data.get("description");
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
