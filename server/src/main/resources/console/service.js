// A service: its settings, instances (offline, drain, weight, metadata) and subscribers.

import { api, esc, failed, main, say, state } from './common.js';

export async function servicePage(group, name) {
  const key = { namespaceId: state.ns, groupName: group, serviceName: name };
  const admin = state.perms && state.perms.admin;
  main.innerHTML = `
    <p><a href="#/services">← Services</a></p>
    <h1>${esc(name)} <span class="muted">${esc(group)}</span></h1>
    <form class="settings" id="settings">
      <label for="threshold">Protect threshold</label>
      <input id="threshold" name="protectThreshold" type="number" min="0" max="1" step="0.05" ${admin ? '' : 'disabled'}>
      <label for="metadata">Metadata (JSON)</label>
      <textarea id="metadata" name="metadata" rows="2" ${admin ? '' : 'disabled'}></textarea>
      <span></span><span>${admin ? '<button class="primary" type="submit">Save settings</button>' : ''} <span id="trigger"></span></span>
    </form>
    <h2>Instances</h2>
    <div class="bar"><label>Cluster <select id="cluster" aria-label="Cluster"><option value="">all</option></select></label></div>
    <p id="drain" role="status"></p>
    <div class="table-wrap"><table>
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
    const clusterSelect = document.getElementById('cluster');
    const clusters = detail ? Object.keys(detail.clusterMap).sort() : [];
    const chosen = clusterSelect.value;
    clusterSelect.innerHTML = '<option value="">all</option>'
      + clusters.map((c) => `<option ${c === chosen ? 'selected' : ''}>${esc(c)}</option>`).join('');
    const instances = await api('GET', '/nacos/v3/admin/ns/instance/list', { ...key, clusterName: chosen });
    document.getElementById('instances').innerHTML = instances.map((i) => `
      <tr data-instance="${esc(i.ip)}:${i.port}">
        <td>${esc(i.ip)}:${i.port}</td>
        <td>${esc(i.clusterName)}</td>
        <td><span class="tag ${i.healthy ? 'ok' : 'bad'}">${i.healthy ? 'healthy' : 'unhealthy'}</span></td>
        <td><span class="tag ${i.enabled ? 'ok' : 'bad'}">${i.enabled ? 'online' : 'offline'}</span></td>
        <td class="num">${i.weight}</td>
        <td>${admin ? `<input type="text" value="${esc(Object.entries(i.metadata).map(([k, v]) => k + '=' + v).join(','))}"
            aria-label="Metadata of ${esc(i.ip)}:${i.port}" class="w-12">
          <button data-action="metadata" data-ip="${esc(i.ip)}" data-port="${i.port}" data-cluster="${esc(i.clusterName)}">Save</button>`
          : `<code>${esc(Object.entries(i.metadata).map(([k, v]) => k + '=' + v).join(', '))}</code>`}</td>
        <td>${esc(i.owner.kind)} <span class="muted">${esc(i.owner.id)}</span></td>
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
  document.getElementById('cluster').addEventListener('change', () => render().catch(failed));
  document.getElementById('instances').addEventListener('click', async (ev) => {
    const b = ev.target.closest('button[data-action]');
    if (!b) return;
    const instance = { ...key, ip: b.dataset.ip, port: b.dataset.port, clusterName: b.dataset.cluster };
    try {
      if (b.dataset.action === 'drain') {
        const where = `${instance.ip}:${instance.port}`;
        if (!confirm(`Drain ${where}? It goes out of traffic now, and this page waits until every subscriber has acknowledged.`)) return;
        const drain = await api('POST', '/roster/v1/admin/drain', instance);
        document.getElementById('drain').textContent = `Draining ${where}…`;
        state.drainId = drain.id;
        const seen = state.drains.get(drain.id); // its events may have come before the answer
        if (seen) state.onDrain(seen);
      } else if (b.dataset.action === 'metadata') {
        await api('PUT', '/nacos/v3/admin/ns/instance', { ...instance, metadata: b.previousElementSibling.value });
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
