// This member's connections, and the cluster's members.

import { api, esc, failed, listPage, main, showPager, state } from './common.js';

export async function connectionsPage(query) {
  const search = query.get('q') || '';
  const pageNo = Number(query.get('page') || '1');
  listPage('connections', 'Connections', search, 'Client, name, namespace or address',
    '<th>Client</th><th>Protocol</th><th>Address</th><th>Namespace</th><th class="num">Instances</th>'
    + '<th class="num">Subscriptions</th><th>Connected</th>');
  const render = async () => {
    const data = await api('GET', '/roster/v1/admin/connections', { search, pageNo, pageSize: 50 });
    document.getElementById('rows').innerHTML = data.pageItems.map((c) => `
      <tr data-connection="${esc(c.connectionId)}">
        <td><a href="#/connection/${encodeURIComponent(c.connectionId)}">${esc(c.clientId)}</a> <span class="muted">${esc(c.clientName)} ${esc(c.clientVersion)}</span></td>
        <td>${esc(c.protocol)}</td><td>${esc(c.address)}</td><td>${esc(c.namespace)}</td>
        <td class="num">${c.instanceCount}</td><td class="num">${c.subscriptionCount}</td>
        <td>${new Date(c.connectedAt).toLocaleString()}</td></tr>`).join('')
      || '<tr><td colspan="7" class="muted">No connections</td></tr>';
    showPager('connections', search, pageNo, data, 'connections');
  };
  state.refresh = () => render().catch(failed);
  await render();
}

// One connection: who it is, and the instances it owns and the services it subscribes to.
export async function connectionPage(id) {
  main.innerHTML = `<p><a href="#/connections">← Connections</a></p><h1>Connection <span class="muted">${esc(id)}</span></h1>
    <dl class="settings" id="connection"></dl>
    <h2>Owned instances</h2>
    <div class="table-wrap"><table><thead><tr><th>Service</th><th>Group</th><th>Address</th><th>Cluster</th></tr></thead>
      <tbody id="connection-instances"></tbody></table></div>
    <h2>Subscriptions</h2>
    <div class="table-wrap"><table><thead><tr><th>Service</th><th>Group</th><th>Namespace</th></tr></thead>
      <tbody id="connection-subscriptions"></tbody></table></div>`;
  const render = async () => {
    const c = await api('GET', '/roster/v1/admin/connection', { connectionId: id });
    const fields = [['Client id', c.clientId], ['Client', `${c.clientName} ${c.clientVersion}`], ['Address', c.address],
      ['Protocol', c.protocol], ['Namespace', c.namespace], ['Connected', new Date(c.connectedAt).toLocaleString()],
      ['Unacked pushes', c.unackedPushes]];
    document.getElementById('connection').innerHTML = fields.map(([k, v]) => `<dt>${k}</dt><dd>${esc(v)}</dd>`).join('');
    const service = (s) => `<a href="#/service/${encodeURIComponent(s.groupName)}/${encodeURIComponent(s.serviceName)}">${esc(s.serviceName)}</a>`;
    document.getElementById('connection-instances').innerHTML = c.instances.map((i) => `
      <tr><td>${service(i)}</td><td>${esc(i.groupName)}</td><td>${esc(i.ip)}:${i.port}</td><td>${esc(i.clusterName)}</td></tr>`)
      .join('') || '<tr><td colspan="4" class="muted">None</td></tr>';
    document.getElementById('connection-subscriptions').innerHTML = c.subscriptions.map((s) => `
      <tr data-subscription="${esc(s.groupName)}@@${esc(s.serviceName)}"><td>${service(s)}</td><td>${esc(s.groupName)}</td>
        <td>${esc(s.namespaceId)}</td></tr>`).join('') || '<tr><td colspan="3" class="muted">None</td></tr>';
  };
  state.refresh = () => render().catch(failed);
  await render();
}

export async function membersPage() {
  main.innerHTML = `<h1>Members</h1><p id="writable"></p>
    <div class="table-wrap"><table>
      <thead><tr><th>Member</th><th>Role</th><th>Client address</th><th>Health</th><th class="num">Lag</th>
        <th class="num">Last contact</th><th class="num">Sessions</th></tr></thead>
      <tbody id="rows"></tbody></table></div>`;
  const render = async () => {
    const data = await api('GET', '/roster/v1/admin/members');
    document.getElementById('writable').innerHTML = data.writable ? '<span class="tag ok">takes writes</span>'
      : `<span class="tag bad">read-only</span> ${esc(data.unwritableReason)}`;
    document.getElementById('rows').innerHTML = data.members.map((m) => `
      <tr><td>${esc(m.id)}${m.self ? ' <span class="muted">(this member)</span>' : ''}</td><td>${esc(m.role)}</td>
        <td>${esc(m.clientAddress)}</td><td><span class="tag ${m.down ? 'bad' : 'ok'}">${m.down ? 'down' : 'up'}</span></td>
        <td class="num">${m.lag ?? ''}</td><td class="num">${m.lastContactMs == null ? '' : m.lastContactMs + ' ms'}</td>
        <td class="num">${m.sessions ?? ''}</td></tr>`).join('');
  };
  state.refresh = null;
  await render();
}
