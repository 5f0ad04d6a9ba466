// The console page: fills the two tables from /api/services and /api/tenants. Text only
// (textContent), never HTML: names and messages come from the cluster.
"use strict";

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.appendChild(td);
  return td;
}

async function fill(name, render) {
  const body = document.querySelector(`#${name} tbody`);
  const error = document.getElementById(`${name}-error`);
  try {
    const response = await fetch(`/api/${name}`, { headers: { Accept: "application/json" } });
    const data = await response.json();
    if (!response.ok) {
      throw new Error(data.message || `HTTP ${response.status}`);
    }
    body.replaceChildren();
    if (data.length === 0) {
      const row = body.insertRow();
      const td = cell(row, `No ${name} yet.`);
      td.colSpan = 5;
      td.className = "empty";
    }
    for (const item of data) {
      render(body.insertRow(), item);
    }
    error.hidden = true;
  } catch (e) {
    error.textContent = `Cannot list ${name}: ${e.message}`;
    error.hidden = false;
  }
}

function service(row, s) {
  row.dataset.name = s.name;
  cell(row, s.displayName);
  cell(row, s.version);
  cell(row, s.kinds.join(", "));
  cell(row, s.namespace);
  const td = cell(row, "");
  if (s.consoleUrl) {
    const a = document.createElement("a");
    a.href = s.consoleUrl;
    a.rel = "noopener noreferrer";
    a.textContent = "Open";
    td.appendChild(a);
  } else {
    td.textContent = "—";
  }
}

function tenant(row, t) {
  row.dataset.name = t.name;
  cell(row, t.name);
  cell(row, t.parent || "—");
  cell(row, t.namespaces.join(", "));
  const ready = cell(row, t.ready === "True" ? "Ready" : `${t.ready} ${t.message || ""}`.trim());
  ready.className = t.ready === "True" ? "ok" : "not-ready";
}

function refresh() {
  fill("services", service);
  fill("tenants", tenant);
}

refresh();
setInterval(refresh, 10000);
