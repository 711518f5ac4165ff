// posttrain dashboard: reads the URL, asks /api, draws. Plain DOM and uPlot, nothing else.
"use strict";

const main = document.getElementById("main");
const POLL_MS = 2000;
let pollTimer = null;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick" || k === "onchange") el[k] = v;
    else if (v !== null && v !== undefined && v !== false) el.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

async function api(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

function showProblems(lines) {
  const box = document.getElementById("problems");
  box.replaceChildren(...(lines || []).map((line) => h("div", { class: "problem" }, line)));
}

function fmt(v, digits = 4) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toPrecision(digits);
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

function crumbs(...links) {
  document.getElementById("crumbs").replaceChildren(...links.flatMap(([text, href]) => [" / ", href ? h("a", { href }, text) : text]));
}

// ---- runs list -------------------------------------------------------------------------

async function runsPage() {
  crumbs();
  const [dirs, notShown] = await Promise.all([api("/api/directories"), api("/api/not-shown")]);
  const rows = dirs.map((d) => {
    const href = `/${d.kind}/${d.index}`;
    let progress = "", results = "";
    if (d.kind === "run") {
      progress = `${fmt(d.step)} / ${fmt(d.steps_planned)}`;
      results = heldoutLine(d.comparison);
      if (d.seesaw_alarms.length) results += `, ${d.seesaw_alarms.length} seesaw alarm(s)`;
    } else if (d.kind === "eval") {
      progress = `${fmt(d.summary.n_attempts)} attempts`;
      results = `pass@1 ${fmt(d.summary.pass_at_1, 3)}`;
    } else {
      progress = `${fmt(d.summary.n_tasks)} tasks`;
      results = `${fmt(d.summary.quarantined)} quarantined`;
    }
    const pick = d.kind === "run" ? h("input", { type: "checkbox", class: "compare-pick", value: d.index, onclick: (e) => e.stopPropagation() }) : "";
    return h("tr", { class: "clickable run-row", "data-index": d.index, onclick: () => (location.href = href) },
      h("td", {}, pick), h("td", {}, h("a", { href }, d.name)), h("td", {}, d.kind),
      h("td", {}, h("span", { class: `status ${d.status}` }, d.status)),
      h("td", {}, progress), h("td", {}, d.model || (d.settings && d.settings.model) || ""),
      h("td", {}, (d.domains || []).join(", ")), h("td", {}, results));
  });
  showProblems([...notShown.map((p) => `not shown: ${p}`), ...dirs.flatMap((d) => d.problems.map((p) => `${d.name}: ${p}`))]);
  const compare = h("button", { id: "compare", onclick: () => {
    const picked = [...document.querySelectorAll(".compare-pick:checked")].map((c) => c.value);
    if (picked.length) location.href = `/compare?runs=${picked.join(",")}`;
  } }, "compare the ticked runs");
  main.replaceChildren(h("h2", {}, "Directories"),
    h("table", { id: "runs" }, h("tr", {}, ...["", "name", "kind", "status", "progress", "model", "domains", "results"].map((t) => h("th", {}, t))), rows),
    h("p", {}, compare));
  if (dirs.some((d) => d.status === "live")) pollTimer = setTimeout(runsPage, POLL_MS * 2);
}

// ---- held-out pass@1 by stage: base → SFT → RL, or before → after (posttrain/observe/run_story.py)

const STAGE_LABELS = { base: "base", sft: "SFT", rl: "RL", before: "before", after: "after" };
const stageLabel = (c) => STAGE_LABELS[c] || c;
const score = (v) => (typeof v === "number" ? v.toFixed(3) : "–");
const interval = (pair) => (pair ? ` [${pair[0].toFixed(2)}, ${pair[1].toFixed(2)}]` : "");

function changeText(key, change) {
  const [later, earlier] = key.split("_minus_");
  return `${stageLabel(later)} − ${stageLabel(earlier)} ${change.delta >= 0 ? "+" : ""}${change.delta.toFixed(3)}${interval(change.ci95)}`;
}

// one line for the runs list: every stage's overall score, and the first-to-last change's interval
function heldoutLine(table) {
  const overall = table.rows.find((r) => r.kind === "overall");
  if (!overall) return "";
  let line = "held-out " + table.columns.map((c) => `${stageLabel(c)} ${score(overall.values[c])}`).join(" → ");
  const whole = overall.changes[`${table.columns[table.columns.length - 1]}_minus_${table.columns[0]}`];
  if (whole && whole.ci95) line += ` (Δ 95% CI${interval(whole.ci95)})`;
  return line;
}

function storyTable(table) {
  if (!table.columns.length) return h("p", { class: "muted", id: "story" }, "held-out pass@1: no evaluation written yet");
  const label = (r) =>
    r.kind === "heldout set" ? `${r.label} (held-out set)` : r.kind === "family" ? `family ${r.label}` : r.kind === "commands needed" ? `needing ${r.label}` : r.label;
  return h("table", { id: "story" },
    h("tr", {}, h("th", {}, "held-out pass@1"), h("th", {}, "n"), ...table.columns.map((c) => h("th", {}, stageLabel(c))),
      h("th", {}, "change (paired 95% CI)")),
    table.rows.map((r) => h("tr", { class: "story-row", "data-label": r.label, "data-kind": r.kind },
      h("td", {}, label(r)), h("td", {}, r.n || ""),
      ...table.columns.map((c) => h("td", { class: "score", "data-stage": c }, score(r.values[c]),
        h("span", { class: "muted" }, interval(r.ci95[c])))),
      h("td", {}, Object.entries(r.changes).filter(([, ch]) => typeof ch.delta === "number").map(([k, ch]) => changeText(k, ch)).join("; ")))));
}

// ---- curves ----------------------------------------------------------------------------

const PALETTE = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00", "#b82e2e", "#316395"];
const colours = {};
function colourFor(key) {
  const base = key.replace(/\/(ci_low|ci_high|accuracy|weight|pass_rate|token_share)$/, "").replace(/^(reward|monitor|mixture|eval)\//, "");
  if (!(base in colours)) colours[base] = PALETTE[Object.keys(colours).length % PALETTE.length];
  return colours[base];
}

function alarmPlugin(alarmSteps) {
  return {
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx;
        ctx.save();
        ctx.strokeStyle = "#d33";
        ctx.lineWidth = 2;
        for (const step of alarmSteps) {
          const x = u.valToPos(step, "x", true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
        }
        ctx.restore();
      }],
    },
  };
}

const STEP_TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];

// The y axis around the values drawn. uPlot spans a flat series 0-100 (all-zero rewards look like
// a chart of nothing on a percent scale): a flat series gets a small axis around its value instead.
function yRange(u, min, max) {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (min === max) {
    const pad = Math.max(Math.abs(min) * 0.1, 0.05);
    return [min - pad, max + pad];
  }
  return uPlot.rangeNum(min, max, 0.1, true);
}

function makeChart(el, panel, data, alarmSteps, onStep) {
  const ci = (k) => /\/ci_(low|high)$/.test(k);
  const means = panel.means || [];
  // a mean over domains is dashed and drawn first (the server lists it first), under the domains
  const series = [{ label: "step" }, ...panel.keys.map((k) => ({
    label: k, stroke: colourFor(k), width: ci(k) ? 1 : 1.5, spanGaps: true,
    dash: ci(k) ? [4, 4] : means.includes(k) ? [8, 5] : undefined,
    points: { show: data.steps.length < 80 },
  }))];
  el.dataset.keys = JSON.stringify(panel.keys);
  el.dataset.dashed = JSON.stringify(panel.keys.filter((k) => ci(k) || means.includes(k)));
  const bands = panel.bands.map(([hi, lo]) => ({
    series: [panel.keys.indexOf(hi) + 1, panel.keys.indexOf(lo) + 1], fill: colourFor(hi) + "22",
  }));
  const opts = {
    title: panel.title, width: Math.max(420, el.clientWidth - 10), height: 230, series, bands,
    scales: { x: { time: false }, y: { range: yRange } }, axes: [{ label: "step", incrs: STEP_TICKS }, {}],
    plugins: [alarmPlugin(alarmSteps)], legend: { live: true },
    hooks: { setScale: [(u, key) => {
      if (key === "y") Object.assign(el.dataset, { yMin: u.scales.y.min, yMax: u.scales.y.max });
    }] },
  };
  const u = new uPlot(opts, [data.steps, ...panel.keys.map((k) => data.values[k])], el);
  u.over.addEventListener("click", () => {
    const idx = u.cursor.idx;
    if (idx !== null && idx !== undefined) onStep(u.data[0][idx]);
  });
  u.over.title = "click: open the samples of this step";
  return u;
}

// ---- the table of domains: one sortable row per domain, a sparkline each (domain_table.py)

const SVG = "http://www.w3.org/2000/svg";

function sparkline(points) {
  const w = 120, ht = 24, svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", w); svg.setAttribute("height", ht); svg.setAttribute("class", "spark");
  if (points.length < 2) return svg;
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(0, ...ys), y1 = Math.max(1, ...ys);
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("points", points.map(([x, y]) =>
    `${(2 + (w - 4) * (x - x0) / (x1 - x0 || 1)).toFixed(1)},${(ht - 2 - (ht - 4) * (y - y0) / (y1 - y0 || 1)).toFixed(1)}`).join(" "));
  svg.append(line);
  return svg;
}

const DOMAIN_COLUMNS = [["domain", "domain"], ["kind", "kind"], ["gate", "gate"], ["now", "pass rate now"],
  ["change", "change since start"], ["spark", "over the run"], ["samples", "samples"], ["measure", "measure"]];

function domainTable(rows) {
  let key = "domain", descending = false;
  const table = h("table", { id: "domains" });
  const order = (a, b) => {
    const x = a[key], y = b[key];
    if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1; // blanks last either way
    if (y === null || y === undefined) return -1;
    const c = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
    return descending ? -c : c;
  };
  function draw() {
    const head = h("tr", {}, ...DOMAIN_COLUMNS.map(([k, title]) => k === "spark" ? h("th", {}, title) : h("th", {
      class: "sortable", "data-key": k, "aria-sort": k === key ? (descending ? "descending" : "ascending") : null,
      onclick: () => { descending = k === key ? !descending : k === "now" || k === "change" || k === "samples"; key = k; draw(); },
    }, title, k === key ? (descending ? " ▼" : " ▲") : "")));
    const body = [...rows].sort(order).map((r) => h("tr", { class: `domain-row ${r.gate && r.gate !== "ok" ? "dropped" : ""}`, "data-domain": r.domain },
      h("td", {}, r.domain), h("td", {}, r.kind), h("td", { title: r.gate_reason || "" }, r.gate || "–"),
      h("td", { class: "num" }, fmt(r.now, 3)), h("td", { class: `num ${r.change > 0 ? "up" : r.change < 0 ? "down" : ""}` },
        r.change === null ? "–" : (r.change > 0 ? "+" : "") + r.change.toFixed(3)),
      h("td", {}, sparkline(r.spark)), h("td", { class: "num" }, r.samples), h("td", { class: "muted" }, r.measure || "–")));
    table.replaceChildren(head, ...body);
  }
  draw();
  return table;
}

async function curvesPage(index) {
  const overview = await api(`/api/directories/${index}`);
  crumbs([overview.name, null]);
  const header = h("div", {},
    h("h2", {}, overview.name, " ", h("span", { class: `status ${overview.status}`, id: "run-status" }, overview.status)),
    h("p", {}, `model ${overview.model || "?"} · ${overview.mode || "sync"} · domains ${overview.domains.length > 12 ? `${overview.domains.length} (the table below)` : overview.domains.join(", ")} · step `,
      h("b", { id: "last-step" }, fmt(overview.step)), ` / ${fmt(overview.steps_planned)} · `,
      h("a", { href: `/run/${index}/samples` }, "trajectories")),
    storyTable(overview.comparison),
    h("details", { id: "config" }, h("summary", {}, "config.toml (resolved)"), h("pre", {}, JSON.stringify(overview.config, null, 1))));
  const alarmsBox = h("div", { id: "alarms" });
  const domains = await api(`/api/runs/${index}/domains`);
  const domainsBox = h("details", { id: "domains-box", open: domains.many ? "open" : null },
    h("summary", {}, `Domains (${domains.rows.length})`, domains.many ? " — one row each; the charts show the means" : ""),
    domainTable(domains.rows));
  const charts = h("div", { class: "charts", id: "charts" });
  const latest = h("table", { class: "kv", id: "latest" });
  const more = h("select", { id: "more-metrics" });
  const added = []; // metrics on no panel that the user asked to chart
  more.onchange = () => {
    if (more.value && !added.includes(more.value)) added.push(more.value);
    more.value = "";
    draw();
  };
  main.replaceChildren(header, alarmsBox, domainsBox, charts, h("p", {}, h("label", {}, "chart another metric: ", more)),
    h("details", { open: "open" }, h("summary", {}, "Latest step: every value"), latest));

  let state = null; // {keys, data, alarms, plots}
  const openStep = (step) => (location.href = `/run/${index}/samples?step=${step}`);

  function draw() {
    charts.replaceChildren();
    const extra = added.filter((k) => state.keys.includes(k)).map((k) => ({ title: k, keys: [k], bands: [] }));
    state.panels = [...state.basePanels, ...extra];
    more.replaceChildren(h("option", { value: "" }, "(choose)"),
      ...state.unpanelled.filter((k) => !added.includes(k)).map((k) => h("option", { value: k }, k)));
    if (!state.data.steps.length) charts.append(h("p", { class: "muted", id: "no-steps" }, "no step recorded yet"));
    state.plots = state.panels.map((panel) => {
      const el = h("div", { class: "chart", "data-title": panel.title });
      charts.append(el);
      return makeChart(el, panel, state.data, state.alarms.map((a) => a.step), openStep);
    });
  }

  function fillSide() {
    alarmsBox.replaceChildren(...state.alarms.map((a) => h("div", { class: "alarm" }, `step ${a.step}: ${a.text}`)));
    const steps = state.data.steps;
    document.getElementById("last-step").textContent = steps.length ? fmt(steps[steps.length - 1]) : "–";
    const last = steps.length - 1;
    latest.replaceChildren(...state.keys.map((k) =>
      h("tr", { "data-key": k }, h("td", {}, k), h("td", { class: "value" }, last >= 0 ? fmt(state.data.values[k][last], 6) : "–"))));
  }

  async function poll() {
    const after = state && state.data.steps.length ? state.data.steps[state.data.steps.length - 1] : null;
    const m = await api(`/api/runs/${index}/metrics` + (after === null ? "" : `?after=${after}`));
    showProblems([...overview.problems, ...m.problems]);
    document.getElementById("run-status").textContent = m.status;
    document.getElementById("run-status").className = `status ${m.status}`;
    if (state && m.keys.join("|") !== state.keys.join("|")) {
      state = null; // a new metric appeared: draw again from the whole run
      if (after !== null) return poll();
    }
    if (!state) {
      state = { keys: m.keys, basePanels: m.panels, unpanelled: m.unpanelled, data: { steps: m.steps, values: m.values }, alarms: m.alarms };
      draw();
    } else if (m.steps.length) {
      state.data.steps.push(...m.steps);
      for (const k of state.keys) state.data.values[k].push(...m.values[k]);
      state.alarms.push(...m.alarms);
      state.plots.forEach((u, i) => u.setData([state.data.steps, ...state.panels[i].keys.map((k) => state.data.values[k])]));
    }
    fillSide();
    if (m.status === "live") pollTimer = setTimeout(poll, POLL_MS);
  }
  await poll();
}

// several runs overlaid: each panel of any run, with each run's series under its name
async function comparePage() {
  const indices = (new URLSearchParams(location.search).get("runs") || "").split(",").filter((x) => x !== "");
  const runs = await Promise.all(indices.map(async (i) => ({ overview: await api(`/api/directories/${i}`), metrics: await api(`/api/runs/${i}/metrics`) })));
  crumbs(["compare " + runs.map((r) => r.overview.name).join(", "), null]);
  showProblems(runs.flatMap((r) => r.metrics.problems.map((p) => `${r.overview.name}: ${p}`)));
  const titles = [...new Set(runs.flatMap((r) => r.metrics.panels.map((p) => p.title)))];
  const charts = h("div", { class: "charts", id: "charts" });
  main.replaceChildren(h("h2", {}, "Compare runs"), charts);
  for (const title of titles) {
    const parts = runs.map((r) => ({ name: r.overview.name, panel: r.metrics.panels.find((p) => p.title === title), m: r.metrics }))
      .filter((x) => x.panel);
    const tables = parts.map((x) => [x.m.steps, ...x.panel.keys.map((k) => x.m.values[k])]);
    const joined = uPlot.join(tables);
    const keys = parts.flatMap((x) => x.panel.keys.map((k) => `${x.name}: ${k}`));
    const el = h("div", { class: "chart", "data-title": title });
    charts.append(el);
    const dashes = [undefined, [6, 3], [2, 2], [8, 2, 2, 2]];
    const series = [{ label: "step" }, ...parts.flatMap((x, run) => x.panel.keys.map((k) => ({
      label: `${x.name}: ${k}`, stroke: colourFor(k), dash: dashes[run % dashes.length], width: 1.5, spanGaps: true,
    })))];
    new uPlot({ title, width: Math.max(420, el.clientWidth - 10), height: 230, series, scales: { x: { time: false }, y: { range: yRange } },
      axes: [{ label: "step", incrs: STEP_TICKS }, {}] }, joined, el);
    el.dataset.series = String(keys.length);
  }
}

// ---- trajectories ----------------------------------------------------------------------

const FILTERS = [["step", "number"], ["domain", "text"], ["task", "text"], ["min_reward", "number"], ["max_reward", "number"],
  ["passed", "select"], ["min_length", "number"], ["max_length", "number"]];

async function samplesPage(index) {
  const params = new URLSearchParams(location.search);
  const overview = await api(`/api/directories/${index}`);
  crumbs([overview.name, `/run/${index}`], ["trajectories", null]);
  const steps = await api(`/api/runs/${index}/steps`);
  const form = h("form", { class: "filters", id: "filters" });
  for (const [name, type] of FILTERS) {
    let input;
    if (name === "passed") {
      input = h("select", { name }, h("option", { value: "" }, "any"), h("option", { value: "true" }, "passed"), h("option", { value: "false" }, "failed"));
    } else if (name === "domain") {
      input = h("select", { name }, h("option", { value: "" }, "any"), ...overview.domains.map((d) => h("option", { value: d }, d)));
    } else {
      input = h("input", { name, type, step: type === "number" ? "any" : null });
    }
    input.value = params.get(name) || "";
    form.append(h("label", {}, name.replace("_", " "), input));
  }
  form.append(h("button", { type: "submit" }, "filter"));
  const table = h("table", { id: "samples" });
  const pager = h("div", {});
  const stepsLine = h("p", { class: "muted" }, `${steps.length} steps with samples; `,
    ...steps.slice(-30).map((s) => [h("a", { href: `/run/${index}/samples?step=${s.step}` }, String(s.step)), " "]));
  main.replaceChildren(h("h2", {}, `Samples of ${overview.name}`), stepsLine, form, table, pager);
  form.onsubmit = (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v !== "") q.set(k, v);
    location.search = q.toString();
  };
  const query = new URLSearchParams();
  for (const [name] of FILTERS) if (params.get(name)) query.set(name, params.get(name));
  const cursors = [0];
  async function load() {
    query.set("after", cursors[cursors.length - 1]);
    const page = await api(`/api/runs/${index}/samples?${query}`);
    const head = h("tr", {}, ...["id", "step", "domain", "task", "sample", "version", "reward", "advantage", "tokens", "finish", "text"].map((t) => h("th", {}, t)));
    table.replaceChildren(head, ...page.samples.map((s) => h("tr", {
      class: "clickable sample-row", "data-id": s.id, onclick: () => (location.href = `/run/${index}/sample/${s.id}`),
    }, h("td", {}, h("a", { href: `/run/${index}/sample/${s.id}` }, s.id)), h("td", {}, s.step), h("td", {}, s.domain), h("td", {}, s.task_id),
    h("td", {}, s.sample_index), h("td", {}, s.policy_version), h("td", {}, fmt(s.reward, 3)), h("td", {}, fmt(s.advantage, 3)),
    h("td", {}, s.length), h("td", {}, s.finish_reason), h("td", {}, s.preview))));
    if (!page.samples.length) table.append(h("tr", {}, h("td", { colspan: 11 }, "no samples match")));
    pager.replaceChildren(
      h("button", { disabled: cursors.length > 1 ? null : "disabled", onclick: () => { cursors.pop(); load(); } }, "previous"),
      " ", h("button", { id: "next-page", disabled: page.next_after === null ? "disabled" : null, onclick: () => { cursors.push(page.next_after); load(); } }, "next"));
  }
  await load();
}

// token colours: engine logprob by probability (red unlikely, green likely); trainer - engine
// difference and advantage by sign (blue above 0, red below), stronger with the magnitude
const COLOURINGS = {
  engine_logprob: (v) => `hsl(${Math.round(120 * Math.exp(v))}, 75%, 78%)`,
  difference: (v) => signed(v, 0.05),
  advantage: (v) => signed(v, 2),
  entropy: (v) => `hsl(280, 70%, ${Math.round(95 - 45 * Math.min(1, v / 2))}%)`,
  policy_version: (v, max) => `hsl(210, 70%, ${Math.round(95 - 40 * (max ? v / max : 0))}%)`,
};
function signed(v, scale) {
  const a = Math.min(1, Math.abs(v) / scale);
  return v >= 0 ? `rgba(40, 90, 220, ${0.1 + 0.6 * a})` : `rgba(220, 40, 40, ${0.1 + 0.6 * a})`;
}

const tip = h("div", { id: "tip" });
document.body.append(tip);

function tokenView(tokens, advantage, mode) {
  const box = h("div", { class: "tokens" });
  const maxVersion = Math.max(0, ...tokens.policy_version);
  tokens.text.forEach((text, i) => {
    const values = { engine_logprob: tokens.engine_logprob[i], policy_version: tokens.policy_version[i], advantage };
    if (tokens.trainer_logprob) Object.assign(values, { trainer_logprob: tokens.trainer_logprob[i], difference: tokens.difference[i] });
    if (tokens.entropy) values.entropy = tokens.entropy[i];
    const v = values[mode];
    const hover = `token ${tokens.id[i]} ${JSON.stringify(text)}\n` + Object.entries(values).map(([k, x]) => `${k}: ${fmt(x, 5)}`).join("\n");
    const span = h("span", {
      class: "tok", "data-index": i, "data-logprob": tokens.engine_logprob[i], title: hover,
      style: `background: ${v === null || v === undefined ? "transparent" : COLOURINGS[mode](v, maxVersion)}`,
    }, text);
    span.addEventListener("mousemove", (e) => {
      tip.textContent = hover; tip.style.display = "block";
      tip.style.left = `${e.clientX + 12}px`; tip.style.top = `${e.clientY + 12}px`;
    });
    span.addEventListener("mouseleave", () => (tip.style.display = "none"));
    box.append(span);
  });
  return box;
}

function colouredTokens(tokens, advantage) {
  const modes = ["engine_logprob", ...(tokens.trainer_logprob ? ["difference"] : []), ...(tokens.entropy ? ["entropy"] : []),
    "advantage", "policy_version"];
  const select = h("select", { class: "colour-by" }, ...modes.map((m) => h("option", { value: m }, m)));
  const holder = h("div", {}, tokenView(tokens, advantage, modes[0]));
  select.onchange = () => holder.replaceChildren(tokenView(tokens, advantage, select.value));
  const note = tokens.trainer_logprob ? "" : " (this store keeps the engine's logprobs; the trainer's are not stored)";
  return h("div", {}, h("label", {}, "colour by ", select), h("span", { class: "muted" }, note), holder);
}

function turnsView(turns) {
  return turns.map((t) => h("div", { class: "turn" },
    h("h3", {}, `turn ${t.index}`, t.snapshot_id ? ` · snapshot ${t.snapshot_id}` : "", t.restored_snapshot ? ` · rolled back to ${t.restored_snapshot}` : ""),
    t.tokens ? colouredTokens(t.tokens, null) : h("pre", {}, t.text),
    ...t.tool_calls.map((c) => typeof c === "string" ? h("pre", { class: "toolcall" }, c) : h("div", { class: `toolcall${c.error ? " error" : ""}` },
      h("b", {}, `tool ${c.name}`), ` exit ${fmt(c.exit_code)}`, c.error ? ` · error ${c.error}` : "",
      c.attempts > 1 ? ` · ${c.attempts} attempts` : "", c.fallback ? ` · fallback ${c.fallback}` : "",
      h("pre", { class: "arguments" }, typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments, null, 1)),
      h("pre", { class: "observation" }, c.observation))),
    t.events.length ? h("p", { class: "muted" }, "events: ", t.events.join(", ")) : null));
}

function kvTable(pairs) {
  return h("table", { class: "kv" }, ...pairs.map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, fmt(v)))));
}

async function samplePage(index, sampleId) {
  const overview = await api(`/api/directories/${index}`);
  const s = await api(`/api/runs/${index}/samples/${sampleId}`);
  crumbs([overview.name, `/run/${index}`], [`step ${s.step}`, `/run/${index}/samples?step=${s.step}`], [`sample ${s.id}`, null]);
  main.replaceChildren(
    h("h2", {}, `Sample ${s.id}: ${s.task_id}`),
    kvTable([["step", s.step], ["domain", s.domain], ["sample", s.sample_index], ["policy version", s.policy_version],
      ["reward", s.reward], ["passed", s.passed], ["advantage", s.advantage], ["finish", s.finish_reason]]),
    h("h3", {}, "Prompt"), h("pre", { id: "prompt" }, s.prompt),
    h("h3", {}, s.turns ? "First training sequence" : "Completion"), colouredTokens(s.tokens, s.advantage),
    ...(s.turns ? [h("h3", {}, "Episode"), ...turnsView(s.turns)] : []),
    ...(s.details && "constraints" in s.details && "valid" in s.details
      ? [h("p", {}, h("a", { id: "scene-link", href: `/api/runs/${index}/samples/${s.id}/scene`, target: "_blank" },
          "View the scene in 3D (the reply drawn with its constraint results)"))]
      : []),
    h("h3", {}, "Verifier"), h("pre", {}, JSON.stringify(s.details, null, 1)));
}

// ---- eval and inspect ------------------------------------------------------------------

async function evalPage(index) {
  const overview = await api(`/api/directories/${index}`);
  const r = await api(`/api/evals/${index}/results`);
  crumbs([overview.name, null]);
  showProblems([...overview.problems, ...r.problems]);
  const s = overview.summary;
  main.replaceChildren(
    h("h2", {}, overview.name, " ", h("span", { class: `status ${overview.status}` }, overview.status)),
    kvTable([["agent", overview.settings.agent], ["model", overview.settings.model], ["tasks", s.n_tasks], ["attempts", s.n_attempts],
      ["pass@1", s.pass_at_1], ["pass@k", s.pass_at_k], ["mean reward", s.mean_reward], ["tool-call accuracy", s.tool_call_accuracy],
      ["failure modes", s.failure_modes], ["tokens", s.tokens], ["cost", s.cost]]),
    h("h3", {}, "Tasks"),
    h("table", { id: "eval-tasks" }, h("tr", {}, ...["task", "category", "attempts", "passed", "mean reward", "pass@k", "mean steps"].map((t) => h("th", {}, t))),
      Object.entries(r.tasks).map(([id, t]) => h("tr", { class: "task-row" }, h("td", {}, id), h("td", {}, t.category), h("td", {}, t.attempts),
        h("td", {}, t.passed), h("td", {}, fmt(t.mean_reward, 3)), h("td", {}, fmt(t.pass_at_k)), h("td", {}, fmt(t.mean_steps, 3))))),
    h("h3", {}, "Attempts"),
    h("table", { id: "attempts" }, h("tr", {}, ...["task", "attempt", "category", "reward", "outcome", "steps", "tool calls", "episode"].map((t) => h("th", {}, t))),
      r.rows.map((row) => h("tr", { class: "attempt-row" }, h("td", {}, row.task_id), h("td", {}, row.attempt), h("td", {}, row.category),
        h("td", {}, fmt(row.reward, 3)), h("td", { class: "outcome" }, row.outcome), h("td", {}, row.steps),
        h("td", {}, `${row.tool_calls_ok}/${row.tool_calls}`),
        h("td", {}, h("a", { href: `/eval/${index}/episode?path=${encodeURIComponent(row.trajectory)}` }, "turns"))))));
  if (overview.status === "live") pollTimer = setTimeout(() => evalPage(index), POLL_MS);
}

async function episodePage(index) {
  const path = new URLSearchParams(location.search).get("path");
  const overview = await api(`/api/directories/${index}`);
  const e = await api(`/api/evals/${index}/episode?path=${encodeURIComponent(path)}`);
  crumbs([overview.name, `/eval/${index}`], [e.task_id, null]);
  main.replaceChildren(
    h("h2", {}, `Episode ${e.task_id}`),
    kvTable([["policy", e.policy], ["reward", e.reward && e.reward.value], ["passed", e.reward && e.reward.passed],
      ["stop reason", e.stop_reason], ["failure mode", e.failure_mode], ["error", e.error], ["duration s", e.duration_s], ["cost", e.cost]]),
    ...turnsView(e.turns),
    h("h3", {}, "Verifier"), h("pre", { id: "verifier" }, JSON.stringify(e.reward, null, 1)));
}

async function inspectPage(index) {
  const overview = await api(`/api/directories/${index}`);
  const r = await api(`/api/inspections/${index}/tasks`);
  crumbs([overview.name, null]);
  showProblems([...overview.problems, ...r.problems]);
  main.replaceChildren(
    h("h2", {}, overview.name),
    kvTable(Object.entries(overview.summary)),
    h("h3", {}, "Tasks"),
    h("table", { id: "inspected" }, h("tr", {}, ...["task", "verdict", "reason", "failed checks"].map((t) => h("th", {}, t))),
      r.tasks.map((t) => h("tr", { class: `task-row ${t.verdict}` }, h("td", {}, t.id), h("td", {}, t.verdict), h("td", {}, t.reason || ""),
        h("td", {}, (t.checks || []).filter((c) => c.status === "fail").map((c) => `${c.name}: ${c.summary}`).join("; "))))));
}

// ---- routing ---------------------------------------------------------------------------

const ROUTES = [
  [/^\/$/, () => runsPage()],
  [/^\/compare$/, () => comparePage()],
  [/^\/run\/(\d+)$/, (m) => curvesPage(m[1])],
  [/^\/run\/(\d+)\/samples$/, (m) => samplesPage(m[1])],
  [/^\/run\/(\d+)\/sample\/(\d+)$/, (m) => samplePage(m[1], m[2])],
  [/^\/eval\/(\d+)$/, (m) => evalPage(m[1])],
  [/^\/eval\/(\d+)\/episode$/, (m) => episodePage(m[1])],
  [/^\/inspect\/(\d+)$/, (m) => inspectPage(m[1])],
];

async function route() {
  for (const [pattern, page] of ROUTES) {
    const m = location.pathname.match(pattern);
    if (m) {
      try { await page(m); } catch (err) { main.replaceChildren(h("div", { class: "problem", id: "error" }, String(err.message || err))); }
      document.body.dataset.ready = "1";
      return;
    }
  }
  main.replaceChildren(h("div", { class: "problem" }, `no page at ${location.pathname}`));
}

route();
