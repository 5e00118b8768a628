// The dashboard of `shoal serve --dashboard`: polls /api/status every
// second and redraws. Plain DOM and SVG; charts by Chart.js (embedded from
// Debian's libjs-chart.js, served by the same server).
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const POLL_MS = 1000;
const COLORS = ['#4f8bd6', '#e07b39', '#3fa34d', '#b75fc2', '#c9a227',
                '#d64f6f', '#2aa7a7', '#7b6fd6'];

function el(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function bytes(b) {
  const u = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(1) : b.toFixed(0)) + ' ' + u[i];
}

function ms(v) { return v > 0 ? v.toFixed(1) + ' ms' : '-'; }

function link(d) {
  const parts = [];
  if (d.link_bandwidth_bps > 0) parts.push((d.link_bandwidth_bps / 1e6).toFixed(0) + ' Mbit/s');
  if (d.link_latency_s > 0) parts.push((d.link_latency_s * 1e3).toFixed(1) + ' ms');
  return parts.length ? 'link ' + parts.join(', ') : 'link unshaped';
}

function duration(s) {
  if (s < 120) return s.toFixed(0) + ' s';
  if (s < 7200) return (s / 60).toFixed(0) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

function setText(id, v) { document.getElementById(id).textContent = v; }

function clock(unixMs) { return new Date(unixMs).toLocaleTimeString(); }

// A worker samples its ready queue after a task joins it
// (runtime/task_scheduler.cc), so the task itself is counted: a mean of
// 1.0 is no task ahead of it. Shown: the tasks already waiting, mean - 1;
// null when no task became ready in the window.
function waitingAhead(d) {
  return d.queue_mean > 0 ? Math.max(0, d.queue_mean - 1) : null;
}

// What a task's rows say besides its layers: its scheme and, for one part
// of a layer split over devices (spatial, lop, ...), which part: the boxes
// of such a plan otherwise repeat the same names.
function taskTag(t) {
  if (t.parts > 1) return `${t.scheme} ${t.part}/${t.parts}`;
  return t.scheme && t.scheme !== 'pipeline' ? t.scheme : '';
}

// "spatial: 1 split into 3 parts; whole: 1 task" for the plan's note.
function schemesNote(p) {
  const by = {};
  for (const t of p.tasks) {
    const s = t.scheme || 'other';
    by[s] = by[s] || {tasks: 0, layers: new Set(), parts: 1};
    by[s].tasks++;
    by[s].layers.add(t.layer);
    by[s].parts = Math.max(by[s].parts, t.parts || 1);
  }
  return Object.entries(by).map(([s, b]) => b.parts > 1
      ? `${s}: ${b.layers.size} split${b.layers.size > 1 ? 's' : ''} into ${b.parts} parts`
      : `${s}: ${b.tasks} task${b.tasks > 1 ? 's' : ''}`).join('; ');
}

// The cluster: one box per device of the cluster file, coloured by state.
function drawCluster(s) {
  const svg = document.getElementById('cluster');
  svg.replaceChildren();
  const w = 190, h = 74, gap = 16;
  svg.setAttribute('viewBox', `0 0 ${Math.max(1, s.devices.length) * (w + gap)} ${h + 4}`);
  svg.style.maxWidth = (s.devices.length * (w + gap)) + 'px';
  const fill = {serving: '#e6f4ea', joining: '#ddf4ff', down: '#ffebe9', removed: '#f0f0f0'};
  s.devices.forEach((d, i) => {
    const g = el('g', {class: 'device', 'data-name': d.name,
                       transform: `translate(${i * (w + gap) + 2},2)`});
    g.appendChild(el('rect', {width: w, height: h, rx: 6, fill: fill[d.state] || '#fff',
                              stroke: '#8c959f'}));
    g.appendChild(el('text', {x: 10, y: 20, 'font-weight': 'bold'}, d.name));
    g.appendChild(el('text', {x: w - 10, y: 20, 'text-anchor': 'end',
                              class: 'state-' + d.state}, d.state));
    g.appendChild(el('text', {x: 10, y: 40, 'font-size': 12, fill: '#57606a'}, d.address));
    g.appendChild(el('text', {x: 10, y: 60, 'font-size': 12, fill: '#57606a'}, link(d)));
    svg.appendChild(g);
  });
}

// The plan: a column per plan device holding its layers, and an arrow per
// directed link labelled with the bytes it carries per request.
function drawPlan(s) {
  const svg = document.getElementById('plan');
  svg.replaceChildren();
  const p = s.plan;
  if (!p) {
    setText('plan-note', 'no plan deployed');
    svg.setAttribute('viewBox', '0 0 10 10');
    return;
  }
  // Each device's layers, task by task (a replicated task on each
  // replica), each row tagged with its task's scheme and part.
  const perDevice = p.devices.map(() => []);
  for (const t of p.tasks) {
    const layers = t.layers.length ? t.layers : [t.name];
    const tag = taskTag(t);
    const title = `${t.name}: ${t.scheme}` +
        (t.parts > 1 ? `, part ${t.part} of ${t.parts}` : '') +
        (t.output_shape ? `, output ${t.output_shape}` : '');
    for (const d of t.devices) {
      for (const l of layers) perDevice[d].push({text: l, tag, title});
      for (let k = layers.length; k < t.nodes; k++) perDevice[d].push({text: '', tag, title});
    }
  }
  const maxRows = 12;
  const colW = 200, gap = 90, rowH = 16, top = 30;
  const rows = Math.min(maxRows, Math.max(1, ...perDevice.map(l => l.length)));
  const boxH = rows * rowH + 30;
  const linkRows = p.links.length;
  const height = top + boxH + 30 + linkRows * 18;
  const width = p.devices.length * (colW + gap);
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.style.maxWidth = width + 'px';
  const defs = el('defs', {});
  const marker = el('marker', {id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5,
                               markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse'});
  marker.appendChild(el('path', {d: 'M0,0 L10,5 L0,10 z', fill: '#57606a'}));
  defs.appendChild(marker);
  svg.appendChild(defs);
  const x0 = i => i * (colW + gap) + 10;
  p.devices.forEach((name, i) => {
    const g = el('g', {class: 'plan-device', 'data-name': name});
    g.appendChild(el('rect', {x: x0(i), y: top, width: colW, height: boxH, rx: 6,
                              fill: '#fff', stroke: COLORS[i % COLORS.length], 'stroke-width': 2}));
    let title = name;
    if (i === p.input_device) title += '  (input)';
    if (i === p.output_device) title += '  (output)';
    g.appendChild(el('text', {x: x0(i) + 8, y: top - 8, 'font-weight': 'bold'}, title));
    const layers = perDevice[i];
    layers.slice(0, rows).forEach((l, k) => {
      const last = k === rows - 1 && layers.length > rows;
      const row = el('text', {x: x0(i) + 8, y: top + 20 + k * rowH, 'font-size': 12,
                              class: 'plan-row'},
                     last ? `... and ${layers.length - rows + 1} more` : l.text);
      if (!last && l.tag) {
        row.appendChild(el('tspan', {fill: '#607080', class: 'plan-tag'}, '  ' + l.tag));
      }
      if (!last) row.appendChild(el('title', {}, l.title));
      g.appendChild(row);
    });
    svg.appendChild(g);
  });
  // Links, one lane each below the boxes: from the sender's column to the
  // receiver's, labelled with bytes per request.
  const base = top + boxH + 24;
  p.links.forEach((l, k) => {
    const y = base + k * 18;
    const xa = x0(l.from) + colW / 2, xb = x0(l.to) + colW / 2;
    const dir = xb > xa ? 1 : -1;
    svg.appendChild(el('path', {d: `M${xa},${top + boxH} L${xa},${y} L${xb - dir * 4},${y} L${xb},${top + boxH + 4}`,
                                fill: 'none', stroke: COLORS[l.from % COLORS.length],
                                'stroke-width': 1.5, 'marker-end': 'url(#arrow)'}));
    svg.appendChild(el('text', {x: (xa + xb) / 2, y: y - 3, 'text-anchor': 'middle',
                                'font-size': 11, class: 'link-bytes'},
                       `${p.devices[l.from]} → ${p.devices[l.to]}: ${bytes(l.bytes)}`));
  });
  setText('plan-note', `${p.tasks.length} tasks on ${p.devices.length} devices (` +
          `${schemesNote(p)}), ` +
          `${bytes(p.links.reduce((a, l) => a + l.bytes, 0))} between devices per request`);
}

function drawDevices(s) {
  const body = document.querySelector('#devices tbody');
  body.replaceChildren();
  for (const d of s.devices) {
    const tr = document.createElement('tr');
    const util = Math.round(100 * (d.utilisation || 0));
    const ahead = waitingAhead(d);
    const cells = [d.name, d.state, d.share.toFixed(2), ms(d.predicted_ms),
                   ms(d.measured_ms), null, ahead === null ? '-' : ahead.toFixed(1)];
    cells.forEach((c, i) => {
      const td = document.createElement('td');
      if (i === 1) td.className = 'state-' + d.state;
      if (i === 5) {
        const bar = document.createElement('span');
        bar.className = 'bar';
        bar.style.width = (util * 0.6) + 'px';
        td.appendChild(bar);
        td.appendChild(document.createTextNode(util + ' %'));
      } else {
        td.textContent = c;
      }
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
}

function drawReplans(s) {
  const body = document.querySelector('#replans tbody');
  body.replaceChildren();
  for (const r of s.replans.slice().reverse()) {
    const tr = document.createElement('tr');
    const shares = r.devices.map((d, i) =>
        `${d} ${r.old_shares[i].toFixed(2)}→${r.new_shares[i].toFixed(2)}`).join(', ');
    const cells = [r.generation, clock(r.unix_ms), r.kind,
                   r.reason, r.strategy, shares, r.switch_ms.toFixed(0) + ' ms'];
    for (const c of cells) {
      const td = document.createElement('td');
      td.textContent = c;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

// Rows of `cells` (arrays of text), newest first, into the table `id`; the
// note `emptyId` shows when there are none.
function fillTable(id, emptyId, rows) {
  const body = document.querySelector(`#${id} tbody`);
  body.replaceChildren();
  for (const cells of rows) {
    const tr = document.createElement('tr');
    for (const c of cells) {
      const td = document.createElement('td');
      td.textContent = c;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  document.getElementById(id).hidden = rows.length === 0;
  document.getElementById(emptyId).hidden = rows.length > 0;
}

// Re-plans asked for (a slow device, a device gone or back, by hand) that
// did not switch: declined by the judgement (the same plan, or too small a
// gain) or failed (planning or deploying); why, as the log says it.
function drawNotMade(s) {
  const rows = (s.replans_not_made || []).slice().reverse().map(r => [
    clock(r.unix_ms), r.kind, r.outcome, r.reason, r.why,
    r.current_ms !== undefined ? `${ms(r.current_ms)} → ${ms(r.new_ms)}` : '']);
  fillTable('not-made', 'not-made-empty', rows);
}

// The latest failed requests with their errors, beside the count above.
function drawErrors(s) {
  const errors = s.request_errors || [];
  const rows = errors.slice().reverse().map(e => [
    clock(e.unix_ms), e.request !== undefined ? e.request : 'refused',
    e.client || '', e.error]);
  fillTable('errors', 'errors-empty', rows);
  setText('errors-note', errors.length < s.failed
      ? `the latest ${errors.length} of ${s.failed}, newest first`
      : 'newest first');
}

const charts = {};

function chart(id, config) {
  if (typeof Chart === 'undefined') return null;  // the page still works
  if (!charts[id]) {
    config.options = Object.assign({animation: false, maintainAspectRatio: false,
                                    responsive: true}, config.options || {});
    charts[id] = new Chart(document.getElementById(id), config);
  }
  return charts[id];
}

function drawCharts(s) {
  const load = chart('load-chart', {
    type: 'bar',
    data: {labels: [], datasets: [
      {label: 'busy %', data: [], backgroundColor: '#4f8bd6', yAxisID: 'y'},
      {label: 'tasks waiting ahead (mean)', data: [], backgroundColor: '#e07b39',
       yAxisID: 'q'}]},
    options: {scales: {y: {min: 0, max: 100, title: {display: true, text: 'busy %'}},
                       q: {min: 0, suggestedMax: 1, position: 'right',
                           grid: {drawOnChartArea: false},
                           title: {display: true,
                                   text: 'tasks waiting ahead of a ready one'}}}}});
  if (load) {
    const serving = s.devices.filter(d => d.state === 'serving');
    load.data.labels = serving.map(d => d.name);
    load.data.datasets[0].data = serving.map(d => 100 * (d.utilisation || 0));
    load.data.datasets[1].data = serving.map(waitingAhead);
    load.update();
  }
  const hist = chart('histogram-chart', {
    type: 'bar',
    data: {labels: [], datasets: [{label: 'requests by latency', data: [],
                                   backgroundColor: '#3fa34d'}]},
    options: {scales: {x: {title: {display: true, text: 'latency up to'}}}}});
  if (hist) {
    const b = s.latency.buckets;
    hist.data.labels = b.map(x => x.le_s === null ? '+Inf'
                                   : x.le_s < 1 ? (x.le_s * 1e3) + ' ms' : x.le_s + ' s');
    hist.data.datasets[0].data = b.map((x, i) => x.count - (i ? b[i - 1].count : 0));
    hist.update();
  }
  const history = chart('history-chart', {
    type: 'line',
    data: {labels: [], datasets: [
      {label: 'p50 ms', data: [], borderColor: '#4f8bd6', backgroundColor: '#4f8bd6',
       pointRadius: 2, spanGaps: false},
      {label: 'p95 ms', data: [], borderColor: '#d64f6f', backgroundColor: '#d64f6f',
       pointRadius: 2, spanGaps: false},
      {label: 'requests/s', data: [], borderColor: '#8c959f', pointRadius: 0,
       yAxisID: 'r', borderDash: [4, 3]}]},
    options: {scales: {y: {min: 0, title: {display: true, text: 'ms'}},
                       r: {min: 0, position: 'right', grid: {drawOnChartArea: false},
                           title: {display: true, text: 'requests/s'}}}}});
  if (history) {
    const h = s.latency.history.slice(-300);
    history.data.labels = h.map(p => new Date(p.unix_s * 1000).toLocaleTimeString());
    history.data.datasets[0].data = h.map(p => p.count ? p.p50_ms : null);
    history.data.datasets[1].data = h.map(p => p.count ? p.p95_ms : null);
    history.data.datasets[2].data = h.map(p => p.count);
    history.update();
  }
}

function draw(s) {
  setText('model', s.model);
  setText('generation', s.generation);
  setText('strategy', s.strategy);
  setText('answered', s.answered);
  setText('failed', s.failed);
  setText('retried', s.retried);
  setText('in-flight', s.in_flight);
  // The last second with requests in it, of those finished.
  const busy = s.latency.history.filter(p => p.count > 0);
  const last = busy.length ? busy[busy.length - 1] : null;
  setText('p50', last ? ms(last.p50_ms) : '-');
  setText('p95', last ? ms(last.p95_ms) : '-');
  setText('uptime', duration(s.uptime_s));
  drawCluster(s);
  drawPlan(s);
  drawDevices(s);
  drawReplans(s);
  drawNotMade(s);
  drawErrors(s);
  drawCharts(s);
}

async function poll() {
  const c = document.getElementById('connection');
  try {
    const r = await fetch('api/status', {cache: 'no-store'});
    if (!r.ok) throw new Error('HTTP ' + r.status);
    draw(await r.json());
    c.textContent = 'live';
    c.className = 'ok';
  } catch (e) {
    c.textContent = 'no answer from shoal serve (' + e.message + ')';
    c.className = 'lost';
  }
  setTimeout(poll, POLL_MS);
}

// The form: the chosen image is POSTed to api/classify (the model's image
// route on this server) and its top classes shown.
async function classify(ev) {
  ev.preventDefault();
  const file = document.getElementById('classify-file').files[0];
  const status = document.getElementById('classify-status');
  const body = document.querySelector('#classify-result tbody');
  if (!file) return;
  document.getElementById('classify-preview').src = URL.createObjectURL(file);
  status.textContent = 'sending ' + file.name + ' ...';
  status.className = '';
  body.replaceChildren();
  document.getElementById('classify-note').textContent = '';
  const t0 = performance.now();
  try {
    const r = await fetch('api/classify?top_k=5', {
      method: 'POST', body: file, cache: 'no-store',
      headers: {'Content-Type': 'application/octet-stream'}});
    const j = await r.json();
    if (!r.ok) throw new Error(j.error || ('HTTP ' + r.status));
    for (const c of j.classes) {
      const tr = document.createElement('tr');
      for (const v of [c.index, c.name || '', c.score.toFixed(4)]) {
        const td = document.createElement('td');
        td.textContent = v;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    status.textContent = 'answered in ' + ms(performance.now() - t0);
    document.getElementById('classify-note').textContent = j.note || '';
  } catch (e) {
    status.textContent = e.message;
    status.className = 'error';
  }
}

document.getElementById('classify-form').addEventListener('submit', classify);
poll();
