// The StreamFlow web console: plain JavaScript over the broker's own HTTP API (/v3, /api,
// /metrics), served from the broker binary. No framework, no build step.
"use strict";

let clusterId = null;
const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function showError(msg) {
  const p = $("#error");
  p.textContent = msg;
  p.hidden = !msg;
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = text; }
  if (!r.ok) {
    const msg = data && data.message ? data.message : `HTTP ${r.status}`;
    throw new Error(`${method} ${path}: ${msg}${data && data.kafka_error ? " (" + data.kafka_error + ")" : ""}`);
  }
  return data;
}

const v3 = (suffix) => `/v3/clusters/${encodeURIComponent(clusterId)}${suffix}`;
const enc = encodeURIComponent;

function fill(table, rows) {
  const tbody = $("tbody", table);
  tbody.replaceChildren(...rows);
}

function status(text, cls) {
  return el("span", { class: cls }, text);
}

// ---- brokers ----
async function showBrokers() {
  const d = await api("GET", "/api/nodes");
  fill($("#brokers-table"), d.nodes.map((n) => el("tr", {},
    el("td", {}, n.id),
    el("td", { class: "mono" }, n.host ? `${n.host}:${n.port}` : "-"),
    el("td", {}, n.rack || ""),
    el("td", {}, status(n.status, n.status === "UP" ? "ok" : n.status === "DOWN" ? "bad" : "warn")),
    el("td", {}, n.controller ? "yes" : ""),
    el("td", {}, n.leader_partitions),
    el("td", {}, status(n.under_replicated_partitions, n.under_replicated_partitions ? "warn" : "")),
    el("td", {}, status(n.offline_partitions, n.offline_partitions ? "bad" : "")))));
}

// ---- topics ----
async function partitionsOf(topic) {
  return (await api("GET", v3(`/topics/${enc(topic)}/partitions`))).data;
}

async function sizesHere() {
  const r = await fetch("/metrics");
  const sizes = {};
  if (!r.ok) return sizes;
  for (const line of (await r.text()).split("\n")) {
    const m = /^streamflow_partition_size_bytes\{topic="([^"]*)",partition="(\d+)"\} (\d+)/.exec(line);
    if (m) sizes[`${m[1]}/${m[2]}`] = Number(m[3]);
  }
  return sizes;
}

async function showTopics() {
  const topics = (await api("GET", v3("/topics"))).data;
  const parts = await Promise.all(topics.map((t) => partitionsOf(t.topic_name)));
  fill($("#topics-table"), topics.map((t, i) => {
    const under = parts[i].filter((p) => p.isr.length < p.replicas.length).length;
    return el("tr", { class: "click", "data-topic": t.topic_name, onclick: () => showTopic(t.topic_name) },
      el("td", {}, t.topic_name), el("td", {}, t.partitions_count),
      el("td", {}, t.replication_factor), el("td", {}, status(under, under ? "warn" : "")));
  }));
  fillTopicSelects(topics.map((t) => t.topic_name));
}

async function showTopic(topic) {
  const [parts, sizes, configs] = await Promise.all([partitionsOf(topic), sizesHere(),
    api("GET", v3(`/topics/${enc(topic)}/configs`))]);
  $("#topic-detail").hidden = false;
  $("#topic-title").textContent = topic;
  fill($("#partitions-table"), parts.map((p) => el("tr", {},
    el("td", {}, p.partition_id),
    el("td", {}, p.leader ? p.leader.related.split("/").pop() : status("none", "bad")),
    el("td", {}, p.replicas.join(", ")),
    el("td", {}, status(p.isr.join(", "), p.isr.length < p.replicas.length ? "warn" : "")),
    el("td", {}, sizes[`${topic}/${p.partition_id}`] ?? "-"))));
  fill($("#configs-table"), configs.data.map((c) => {
    const input = el("input", { value: c.value ?? "", "data-config": c.name });
    const save = el("button", { type: "button", onclick: () => setConfig(topic, c.name, input.value) }, "Save");
    const reset = el("button", { type: "button", onclick: () => resetConfig(topic, c.name) }, "Reset");
    return el("tr", {}, el("td", { class: "mono" }, c.name),
      el("td", {}, c.is_read_only ? (c.value ?? "") : input),
      el("td", {}, c.source), el("td", {}, c.is_read_only ? "" : save, " ",
        c.source === "DYNAMIC_TOPIC_CONFIG" ? reset : ""));
  }));
}

async function setConfig(topic, name, value) {
  await run(async () => {
    await api("PUT", v3(`/topics/${enc(topic)}/configs/${enc(name)}`), { value });
    await showTopic(topic);
  });
}

async function resetConfig(topic, name) {
  await run(async () => {
    await api("DELETE", v3(`/topics/${enc(topic)}/configs/${enc(name)}`));
    await showTopic(topic);
  });
}

function fillTopicSelects(names) {
  for (const sel of document.querySelectorAll(".topic-select")) {
    const keep = sel.value;
    sel.replaceChildren(...names.map((n) => el("option", { value: n }, n)));
    if (names.includes(keep)) sel.value = keep;
  }
}

// ---- groups ----
async function showGroups() {
  const groups = (await api("GET", v3("/consumer-groups"))).data;
  fill($("#groups-table"), groups.map((g) => el("tr",
    { class: "click", "data-group": g.consumer_group_id, onclick: () => showGroup(g.consumer_group_id) },
    el("td", {}, g.consumer_group_id), el("td", {}, g.state),
    el("td", {}, g.coordinator.related.split("/").pop()))));
}

async function showGroup(group) {
  const [members, lags] = await Promise.all([
    api("GET", v3(`/consumer-groups/${enc(group)}/consumers`)).catch(() => ({ data: [] })),
    api("GET", v3(`/consumer-groups/${enc(group)}/lags`))]);
  const owned = await Promise.all(members.data.map((m) =>
    api("GET", v3(`/consumer-groups/${enc(group)}/consumers/${enc(m.consumer_id)}/assignments`))
      .then((a) => a.data).catch(() => [])));
  $("#group-detail").hidden = false;
  $("#group-title").textContent = group;
  fill($("#members-table"), members.data.map((m, i) => el("tr", {},
    el("td", { class: "mono" }, m.consumer_id), el("td", {}, m.client_id), el("td", {}, m.host),
    el("td", {}, owned[i].map((a) => `${a.topic_name}/${a.partition_id}`).join(", ")))));
  fill($("#lags-table"), lags.data.map((l) => el("tr", {},
    el("td", {}, l.topic_name), el("td", {}, l.partition_id), el("td", {}, l.current_offset),
    el("td", {}, l.log_end_offset), el("td", {}, status(l.lag, l.lag > 0 ? "warn" : "ok")),
    el("td", { class: "mono" }, l.consumer_id || ""))));
}

// ---- records ----
function bytesOf(b64) {
  if (b64 === null || b64 === undefined) return null;
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function render(bytes, hex) {
  if (bytes === null) return el("em", {}, "null");
  if (hex) return el("pre", {}, Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" "));
  try {
    return el("pre", {}, new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    return el("pre", {}, Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" "));
  }
}

async function browse(form) {
  const f = new FormData(form);
  const hex = f.get("hex") === "on";
  let q = `limit=${enc(f.get("limit") || 20)}&encoding=base64`;
  if (f.get("timestamp")) q += `&timestamp=${Date.parse(f.get("timestamp") + "Z")}`;
  else q += `&offset=${enc(f.get("offset") || 0)}`;
  const d = await api("GET", `/api/topics/${enc(f.get("topic"))}/partitions/${enc(f.get("partition") || 0)}/events?${q}`);
  $("#browse-range").textContent = `offsets ${d.low_offset} to ${d.high_offset - 1} in the partition`;
  fill($("#records-table"), d.events.map((e) => el("tr", { "data-offset": e.offset },
    el("td", {}, e.offset),
    el("td", { class: "mono" }, new Date(e.timestamp).toISOString()),
    el("td", {}, render(bytesOf(e.key), hex)),
    el("td", {}, Object.entries(e.headers).map(([k, v]) => `${k}=${v === null ? "null" :
      new TextDecoder().decode(bytesOf(v))}`).join(", ")),
    el("td", { class: "value" }, render(bytesOf(e.value), hex)))));
}

// ---- produce ----
async function produce(form) {
  const f = new FormData(form);
  const body = { value: f.get("value") };
  if (f.get("key")) body.key = f.get("key");
  if (f.get("partition") !== "") body.partition = Number(f.get("partition"));
  if (f.get("headers")) {
    body.headers = {};
    for (const kv of f.get("headers").split(",")) {
      const i = kv.indexOf("=");
      if (i > 0) body.headers[kv.slice(0, i).trim()] = kv.slice(i + 1).trim();
    }
  }
  const r = await api("POST", `/api/topics/${enc(f.get("topic"))}/events`, body);
  $("#produce-result").textContent = `written to ${r.topic_name} partition ${r.partition_id} at offset ${r.offset}`;
}

// ---- navigation ----
const views = { brokers: showBrokers, topics: showTopics, groups: showGroups,
  records: showTopics, produce: showTopics };

async function run(fn) {
  try {
    showError("");
    await fn();
  } catch (e) {
    showError(e.message);
  }
}

async function show() {
  const name = (location.hash || "#brokers").slice(1);
  const view = views[name] ? name : "brokers";
  for (const s of document.querySelectorAll("main section")) s.hidden = s.id !== `view-${view}`;
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === view);
  await run(views[view]);
  document.body.dataset.loaded = view;
}

async function start() {
  await run(async () => {
    const c = (await api("GET", "/v3/clusters")).data[0];
    clusterId = c.cluster_id;
    $("#cluster").textContent = `cluster ${c.cluster_id}` +
      (c.controller ? `, controller ${c.controller.related.split("/").pop()}` : ", no controller");
  });
  $("#create-topic").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    run(async () => {
      await api("POST", "/api/topics", { name: f.get("name"),
        partitions: f.get("partitions") ? Number(f.get("partitions")) : undefined,
        replication_factor: f.get("replication_factor") ? Number(f.get("replication_factor")) : undefined });
      ev.target.reset();
      await showTopics();
    });
  });
  $("#browse").addEventListener("submit", (ev) => { ev.preventDefault(); run(() => browse(ev.target)); });
  $("#produce-form").addEventListener("submit", (ev) => { ev.preventDefault(); run(() => produce(ev.target)); });
  window.addEventListener("hashchange", show);
  await show();
}

start();
