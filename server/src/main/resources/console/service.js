// A service: its settings, instances (offline, drain, weight, metadata) and subscribers.

import { api, esc, failed, main, say, state } from './common.js';
import { t } from './i18n.js';

export async function servicePage(group, name) {
  const key = { namespaceId: state.ns, groupName: group, serviceName: name };
  // Grants may name some services only (admin@ns/orders*): ask for this one.
  const may = await api('GET', '/roster/v1/admin/permissions', key);
  const admin = may.service.admin;
  const shown = new Map(); // each instance's metadata as last rendered, by ip:port:cluster
  main.innerHTML = `
    <p><a href="#/services">← Services</a></p>
    <h1>${esc(name)} <span class="muted">${esc(group)}</span>
      ${admin ? '<button type="button" class="danger" id="delete-service">Delete service</button>' : ''}</h1>
    <p id="service-note" class="error" role="alert"></p>
    <form class="settings" id="settings">
      <label for="threshold">Protect threshold</label>
      <input id="threshold" name="protectThreshold" type="number" min="0" max="1" step="0.05" ${admin ? '' : 'disabled'}>
      <label for="metadata">Metadata (JSON)</label>
      <textarea id="metadata" name="metadata" rows="2" ${admin ? '' : 'disabled'}></textarea>
      <span></span><span>${admin ? '<button class="primary" type="submit">Save settings</button>' : ''} <span id="trigger"></span></span>
    </form>
    <h2>Health checks</h2>
    <p class="muted">How the server probes each cluster's persistent instances.</p>
    <div class="table-wrap"><table>
      <thead><tr><th>Cluster</th><th>Check</th><th>HTTP path</th>${admin ? '<th>Actions</th>' : ''}</tr></thead>
      <tbody id="checks"></tbody></table></div>
    <h2>Instances</h2>
    <form class="kv" id="metadata-editor" hidden>
      <h3 id="metadata-of"></h3>
      <div id="metadata-rows"></div>
      <p class="muted">${PRESERVED}.* keys (the heartbeat's settings) are not shown here and are kept as they are.</p>
      <div class="bar"><button type="button" id="metadata-add">Add a key</button>
        <button class="primary" type="submit">Save metadata</button><button type="button" id="metadata-cancel">Cancel</button></div>
    </form>
    <div class="bar"><label>Cluster <select id="cluster" aria-label="Cluster"><option value="">all</option></select></label></div>
    <p id="drain" role="status"></p>
    <div class="table-wrap cards"><table>
      <thead><tr><th>Address</th><th>Cluster</th><th>Health</th><th>Traffic</th><th class="num">Weight</th>
        <th>Metadata</th><th>Owner</th>${admin ? '<th>Actions</th>' : ''}</tr></thead>
      <tbody id="instances"></tbody></table></div>
    <h2>Subscribers</h2>
    <div class="table-wrap"><table>
      <thead><tr><th>Client</th><th>Address</th><th>Protocol</th><th class="num">Unacked pushes</th></tr></thead>
      <tbody id="subscribers"></tbody></table></div>`;
  const settings = document.getElementById('settings');
  settings.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await api('PUT', '/nacos/v3/admin/ns/service',
        { ...key, protectThreshold: settings.protectThreshold.value, metadata: settings.metadata.value || '{}' });
      say('Settings saved');
    } catch (e) { failed(e); }
  });
  const render = async (change) => {
    let detail = null;
    try {
      detail = await api('GET', '/nacos/v3/admin/ns/service', key);
    } catch (e) {
      if (e.status !== 404) throw e;
    }
    if (detail && (!change || change.kind === 'settings' || document.activeElement?.form !== settings)) {
      settings.protectThreshold.value = detail.protectThreshold;
      settings.metadata.value = JSON.stringify(detail.metadata);
    }
    document.getElementById('trigger').innerHTML = detail && detail.triggerFlag
      ? '<span class="tag warn">threshold fired: consumers get every instance</span>' : '';
    showChecks(detail ? detail.clusterMap : {}, admin);
    const clusterSelect = document.getElementById('cluster');
    const clusters = detail ? Object.keys(detail.clusterMap).sort() : [];
    const chosen = clusterSelect.value;
    clusterSelect.innerHTML = '<option value="">all</option>'
      + clusters.map((c) => `<option ${c === chosen ? 'selected' : ''}>${esc(c)}</option>`).join('');
    const instances = await api('GET', '/nacos/v3/admin/ns/instance/list', { ...key, clusterName: chosen });
    shown.clear();
    for (const i of instances) shown.set(`${i.ip}:${i.port}:${i.clusterName}`, i.metadata);
    document.getElementById('instances').innerHTML = instances.map((i) => `
      <tr data-instance="${esc(i.ip)}:${i.port}">
        <td>${esc(i.ip)}:${i.port}</td>
        <td>${esc(i.clusterName)}</td>
        <td><span class="tag ${i.healthy ? 'ok' : 'bad'}">${i.healthy ? 'healthy' : 'unhealthy'}</span></td>
        <td><span class="tag ${i.enabled ? 'ok' : 'bad'}">${i.enabled ? 'online' : 'offline'}</span></td>
        <td class="num">${i.weight}</td>
        <td><code>${esc(Object.entries(i.metadata).map(([k, v]) => k + '=' + v).join(', '))}</code>
          ${admin ? `<button data-action="metadata" data-ip="${esc(i.ip)}" data-port="${i.port}"
            data-cluster="${esc(i.clusterName)}">Edit</button>` : ''}</td>
        <td class="owner" title="${esc(i.owner.id)}">${esc(i.owner.kind)} <span class="muted">${esc(i.owner.id)}</span></td>
        ${admin ? `<td>
          <button data-action="${i.enabled ? 'offline' : 'online'}" data-ip="${esc(i.ip)}" data-port="${i.port}"
            data-cluster="${esc(i.clusterName)}" class="${i.enabled ? 'danger' : ''}">${i.enabled ? 'Offline' : 'Online'}</button>
          ${i.enabled ? `<button data-action="drain" data-ip="${esc(i.ip)}" data-port="${i.port}"
            data-cluster="${esc(i.clusterName)}">Drain</button>` : ''}
          <input type="number" min="0" max="10000" step="0.1" value="${i.weight}" aria-label="Weight of ${esc(i.ip)}:${i.port}" class="w-5">
          <button data-action="weight" data-ip="${esc(i.ip)}" data-port="${i.port}" data-cluster="${esc(i.clusterName)}">Set weight</button>
        </td>` : ''}
      </tr>`).join('') || `<tr><td colspan="8" class="muted">No instances</td></tr>`;
    const subs = await api('GET', '/nacos/v3/admin/ns/service/subscribers', { ...key, pageSize: 100 });
    document.getElementById('subscribers').innerHTML = subs.pageItems.map((s) => `
      <tr><td>${esc(s.clientId)}</td><td>${esc(s.address)}</td><td>${esc(s.protocol)}</td><td class="num">${s.unackedPushes}</td></tr>`)
      .join('') || '<tr><td colspan="4" class="muted">No subscribers on this member</td></tr>';
  };
  const editor = metadataEditor(shown);
  document.getElementById('checks').addEventListener('click', async (ev) => {
    const b = ev.target.closest('button[data-check]');
    if (!b) return;
    const row = b.closest('tr');
    const type = row.querySelector('select').value;
    const checker = type === 'HTTP' ? { type, path: row.querySelector('input').value || '/' } : { type };
    try {
      await api('PUT', '/nacos/v1/ns/cluster', { ...key, clusterName: b.dataset.check, healthChecker: JSON.stringify(checker) });
      say(`Health check of ${b.dataset.check} saved`);
    } catch (e) { failed(e); }
  });
  document.getElementById('delete-service')?.addEventListener('click', async () => {
    if (!confirm(t(`Delete the service ${name}? Only a service without instances is deleted.`))) return;
    try {
      await api('DELETE', '/nacos/v1/ns/service', key);
      say(`Service ${name} deleted`);
      location.hash = '#/services';
    } catch (e) {
      if (e.login) failed(e);
      else document.getElementById('service-note').textContent = e.message; // why, until the page changes
    }
  });
  document.getElementById('cluster').addEventListener('change', () => render().catch(failed));
  document.getElementById('instances').addEventListener('click', async (ev) => {
    const b = ev.target.closest('button[data-action]');
    if (!b) return;
    const instance = { ...key, ip: b.dataset.ip, port: b.dataset.port, clusterName: b.dataset.cluster };
    try {
      if (b.dataset.action === 'drain') {
        const where = `${instance.ip}:${instance.port}`;
        if (!confirm(t(`Drain ${where}? It goes out of traffic now, and this page waits until every subscriber has acknowledged.`))) return;
        const drain = await api('POST', '/roster/v1/admin/drain', instance);
        document.getElementById('drain').textContent = `Draining ${where}…`;
        state.drainId = drain.id;
        const seen = state.drains.get(drain.id); // its events may have come before the answer
        if (seen) state.onDrain(seen);
      } else if (b.dataset.action === 'metadata') {
        editor.open(instance, shown.get(`${instance.ip}:${instance.port}:${instance.clusterName}`) || {});
      } else if (b.dataset.action === 'weight') {
        await api('PUT', '/nacos/v3/admin/ns/instance', { ...instance, weight: b.previousElementSibling.value });
      } else {
        await api('PUT', '/nacos/v3/admin/ns/instance', { ...instance, enabled: b.dataset.action === 'online' });
      }
    } catch (e) { failed(e); }
  });
  state.onDrain = (d) => {
    if (d.id !== state.drainId) return;
    const where = `${d.ip}:${d.port}`;
    const line = document.getElementById('drain');
    if (!line) return;
    if (d.state === 'started' || d.state === 'acked') {
      line.textContent = `Draining ${where}: ${d.acked} of ${d.notified} subscribers acknowledged…`;
    } else if (d.state === 'done') {
      line.textContent = d.acked === d.notified
        ? `Drained ${where}: all ${d.notified} subscriber${d.notified === 1 ? '' : 's'} acknowledged.`
        : `Drained ${where}: ${d.acked} of ${d.notified} acknowledged; ${d.timedOut} did not in time, ${d.disconnected} went away.`;
    } else if (d.state === 'not-registered') {
      line.textContent = `${where} is not registered.`;
    } else if (d.state === 'failed') {
      line.textContent = `Drain of ${where} failed: ${d.message}`;
    }
  };
  state.refresh = (change) => {
    if (!change || change.kind === 'restored' || (change.name === name && change.groupName === group)) {
      render(change).catch(failed);
    }
  };
  await render();
}

// The keys of the heartbeat's settings (preserved.heart.beat.timeout...): kept as they are.
const PRESERVED = 'preserved';
const preserved = (k) => k.startsWith(PRESERVED + '.');

// An instance's metadata as key/value rows, sent as a JSON object (any string value, "," and "="
// included); the preserved.* keys it does not show are sent back as the instance has them.
function metadataEditor(shown) {
  const form = document.getElementById('metadata-editor');
  const rows = document.getElementById('metadata-rows');
  let target = null;
  const addRow = (k = '', v = '') => {
    const row = document.createElement('div');
    row.className = 'kv-row';
    row.innerHTML = `<input type="text" class="kv-key" aria-label="Key" value="${esc(k)}">
      <input type="text" class="kv-value" aria-label="Value" value="${esc(v)}">
      <button type="button" class="kv-remove">Remove</button>`;
    row.querySelector('.kv-remove').addEventListener('click', () => row.remove());
    rows.append(row);
    return row;
  };
  const close = () => { form.hidden = true; target = null; };
  document.getElementById('metadata-add').addEventListener('click', () => addRow().querySelector('input').focus());
  document.getElementById('metadata-cancel').addEventListener('click', close);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!target) return;
    const edited = {};
    for (const row of rows.querySelectorAll('.kv-row')) {
      const k = row.querySelector('.kv-key').value.trim();
      const v = row.querySelector('.kv-value').value;
      if (!k && !v) continue;
      if (!k) { say(`A key is empty (its value: "${v}")`); return; }
      if (preserved(k)) { say(`The key ${k} is the heartbeat's: it is kept as it is, not edited here`); return; }
      if (k in edited) { say(`The key ${k} is there twice`); return; }
      edited[k] = v;
    }
    // The preserved keys as the instance has them now, not as they were when the editor opened.
    const now = shown.get(`${target.ip}:${target.port}:${target.clusterName}`) || {};
    const kept = Object.fromEntries(Object.entries(now).filter(([k]) => preserved(k)));
    try {
      await api('PUT', '/nacos/v3/admin/ns/instance', { ...target, metadata: JSON.stringify({ ...edited, ...kept }) });
      say('Metadata saved');
      close();
    } catch (e) { failed(e); }
  });
  return {
    open(instance, metadata) {
      target = instance;
      document.getElementById('metadata-of').textContent = `Metadata of ${instance.ip}:${instance.port}`;
      rows.innerHTML = '';
      for (const [k, v] of Object.entries(metadata)) if (!preserved(k)) addRow(k, v);
      if (!rows.children.length) addRow();
      form.hidden = false;
      rows.querySelector('input').focus();
    },
  };
}

// Each cluster's health check (TCP, HTTP with a path, or none), saved with Nacos's PUT /nacos/v1/ns/cluster.
// Shown again only when it changed and nothing in it is being edited.
function showChecks(clusterMap, admin) {
  const body = document.getElementById('checks');
  const shown = JSON.stringify(clusterMap);
  if (body.dataset.shown === shown || body.contains(document.activeElement)) return;
  body.dataset.shown = shown;
  body.innerHTML = Object.values(clusterMap).sort((a, b) => a.clusterName.localeCompare(b.clusterName)).map((c) => {
    const check = c.healthChecker || { type: 'TCP' };
    const name = esc(c.clusterName);
    return `<tr data-cluster="${name}"><td>${name}</td>
      <td>${admin ? `<select aria-label="Check of ${name}">${['TCP', 'HTTP', 'NONE'].map((t) =>
        `<option ${t === check.type ? 'selected' : ''}>${t}</option>`).join('')}</select>` : esc(check.type)}</td>
      <td>${admin ? `<input type="text" aria-label="HTTP path of ${name}" value="${esc(check.path || '')}" class="w-10">`
        : esc(check.path || '')}</td>
      ${admin ? `<td><button data-check="${name}">Save check</button></td>` : ''}</tr>`;
  }).join('') || `<tr><td colspan="4" class="muted">No clusters</td></tr>`;
}
