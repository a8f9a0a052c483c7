// Roster console: a page over the admin API (docs/admin-api.md), following the registry's
// change stream so that what it shows stays current without a refresh.

const main = document.getElementById('main');
const nsSelect = document.getElementById('namespace');
const who = document.getElementById('who');
const logoutButton = document.getElementById('logout');
const statusLine = document.getElementById('status');

const state = {
  ns: sessionStorage.getItem('roster.ns') || 'public',
  token: sessionStorage.getItem('roster.token') || '',
  perms: null,
  events: null,
  refresh: null, // what the change stream re-renders: (event) => void
  onDrain: null, // what shows a drain's progress: (drain) => void
  drains: new Map(), // the last event of each drain, by id
  drainId: null, // the drain this page started
  pending: null,
};

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
    this.login = status === 403 && /^accessToken: /.test(message || '');
  }
}

async function api(method, path, params = {}) {
  const query = new URLSearchParams(params);
  const init = { method, headers: {} };
  let url = path;
  if (state.token) init.headers.Authorization = 'Bearer ' + state.token;
  if (method === 'GET') {
    if ([...query].length) url += '?' + query;
  } else {
    init.body = query;
  }
  const response = await fetch(url, init);
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = { code: response.status, message: text };
  }
  if (!response.ok || body.code !== 0) throw new ApiError(response.status, body.message);
  return body.data;
}

const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

function say(message) {
  statusLine.textContent = message;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { statusLine.textContent = ''; }, 3000);
}

function failed(e) {
  if (e instanceof ApiError && e.login) {
    showLogin(e.message);
    return;
  }
  say(e.message || String(e));
}

// --- login ---

function showLogin(reason) {
  closeEvents();
  state.refresh = null;
  who.textContent = '';
  logoutButton.hidden = true;
  main.innerHTML = `
    <form class="login" id="login">
      <h1>Log in to Roster</h1>
      <label>User <input type="text" name="username" autocomplete="username" required></label>
      <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
      <button class="primary" type="submit">Log in</button>
      <p class="error" id="login-error">${state.token ? 'Your session has ended; log in again.' : ''}</p>
    </form>`;
  const form = document.getElementById('login');
  form.username.focus();
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const response = await fetch('/nacos/v1/auth/users/login?' + new URLSearchParams({ username: form.username.value }),
      { method: 'POST', body: new URLSearchParams({ password: form.password.value }) });
    if (!response.ok) {
      document.getElementById('login-error').textContent = 'Wrong user or password.';
      return;
    }
    const login = await response.json();
    state.token = login.accessToken;
    sessionStorage.setItem('roster.token', state.token);
    route();
  });
}

logoutButton.addEventListener('click', () => {
  sessionStorage.removeItem('roster.token');
  state.token = '';
  state.perms = null;
  showLogin('');
});

// --- the change stream ---

// Server-sent events read with fetch, not EventSource: an EventSource cannot send the
// Authorization header, and a token in its URL would reach history, proxies and logs. The stream
// is read as it arrives; when it ends (the server closes a stream that falls behind, or restarts)
// it is opened again after a pause that grows to 30 s and starts over once one opens.
function openEvents() {
  closeEvents();
  const controller = new AbortController();
  const stream = { controller, retry: null, delay: 1000 };
  state.events = stream;
  const dispatch = (block) => {
    let type = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue; // a comment: the server's ping
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) onEvent(type, data.join('\n'));
  };
  const connect = async () => {
    try {
      const headers = { Accept: 'text/event-stream' };
      if (state.token) headers.Authorization = 'Bearer ' + state.token;
      const response = await fetch('/roster/v1/admin/events?' + new URLSearchParams({ namespaceId: state.ns }),
        { headers, cache: 'no-store', signal: controller.signal });
      if (!response.ok) throw new Error('the change stream answered ' + response.status);
      stream.delay = 1000;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered = (buffered + value).replace(/\r\n?/g, '\n');
        let end;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          dispatch(buffered.slice(0, end));
          buffered = buffered.slice(end + 2);
        }
      }
    } catch (e) {
      if (controller.signal.aborted) return;
    }
    if (controller.signal.aborted) return;
    stream.retry = setTimeout(connect, stream.delay);
    stream.delay = Math.min(stream.delay * 2, 30000);
  };
  connect();
}

function onEvent(type, data) {
  if (type === 'service') {
    const change = JSON.parse(data);
    if (!state.refresh) return;
    // Changes that come together are shown together.
    clearTimeout(state.pending);
    state.pending = setTimeout(() => state.refresh && state.refresh(change), 15);
  } else if (type === 'drain') {
    const drain = JSON.parse(data);
    state.drains.set(drain.id, drain);
    if (state.onDrain) state.onDrain(drain);
  }
}

function closeEvents() {
  if (state.events) {
    clearTimeout(state.events.retry);
    state.events.controller.abort();
  }
  state.events = null;
}

// --- pages ---

// A page of rows with a search box (and more filters: name → value) and a pager, at #/ROUTE?q=...&page=N.
function listPage(route, title, search, placeholder, headers, filters = {}) {
  main.innerHTML = `
    <h1>${title}</h1>
    <form class="bar" id="search">
      <input type="search" name="q" value="${esc(search)}" placeholder="${placeholder}" aria-label="${placeholder}">
      ${Object.entries(filters).map(([name, value]) => `<input type="search" name="${name}" value="${esc(value)}"
        placeholder="${name[0].toUpperCase() + name.slice(1)}" aria-label="Filter by ${name}" class="w-10">`).join('')}
      <button type="submit">Search</button>
      <span class="muted" id="count"></span>
    </form>
    <div class="table-wrap"><table><thead><tr>${headers}</tr></thead><tbody id="rows"></tbody></table></div>
    <div class="pager"><button id="prev">Previous</button><span id="page"></span><button id="next">Next</button></div>`;
  document.getElementById('search').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params = { q: ev.target.q.value };
    for (const name of Object.keys(filters)) params[name] = ev.target[name].value;
    location.hash = `#/${route}?` + new URLSearchParams(params);
  });
}

function showPager(route, search, pageNo, data, noun, filters = {}) {
  document.getElementById('count').textContent = `${data.totalCount} ${noun}`;
  const pages = Math.max(1, data.pagesAvailable);
  document.getElementById('page').textContent = `Page ${pageNo} of ${pages}`;
  const go = (n) => { location.hash = `#/${route}?` + new URLSearchParams({ q: search, ...filters, page: n }); };
  const prev = document.getElementById('prev');
  const next = document.getElementById('next');
  prev.disabled = pageNo <= 1;
  next.disabled = pageNo >= pages;
  prev.onclick = () => go(pageNo - 1);
  next.onclick = () => go(pageNo + 1);
}

async function servicesPage(query) {
  const search = query.get('q') || '';
  const group = query.get('group') || '';
  const pageNo = Number(query.get('page') || '1');
  listPage('services', 'Services', search, 'Search services',
    '<th>Service</th><th>Group</th><th class="num">Instances</th><th class="num">Healthy</th>'
    + '<th class="num">Subscribers</th><th>Protection</th>', { group });
  const render = async () => {
    const data = await api('GET', '/nacos/v3/admin/ns/service/list',
      { namespaceId: state.ns, serviceNameParam: search, groupNameParam: group, pageNo, pageSize: 20 });
    document.getElementById('rows').innerHTML = data.pageItems.map((s) => `
      <tr data-service="${esc(s.name)}">
        <td><a href="#/service/${encodeURIComponent(s.groupName)}/${encodeURIComponent(s.name)}">${esc(s.name)}</a></td>
        <td>${esc(s.groupName)}</td>
        <td class="num">${s.ipCount}</td>
        <td class="num">${s.healthyInstanceCount}</td>
        <td class="num">${s.subscriberCount}</td>
        <td>${s.triggerFlag ? '<span class="tag warn" title="Too few healthy instances: consumers get every instance">threshold fired</span>' : ''}</td>
      </tr>`).join('') || '<tr><td colspan="6" class="muted">No services</td></tr>';
    showPager('services', search, pageNo, data, 'services', { group });
  };
  state.refresh = () => render().catch(failed);
  await render();
}

async function servicePage(group, name) {
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

async function connectionsPage(query) {
  const search = query.get('q') || '';
  const pageNo = Number(query.get('page') || '1');
  listPage('connections', 'Connections', search, 'Client, name, namespace or address',
    '<th>Client</th><th>Protocol</th><th>Address</th><th>Namespace</th><th class="num">Instances</th>'
    + '<th class="num">Subscriptions</th><th>Connected</th>');
  const render = async () => {
    const data = await api('GET', '/roster/v1/admin/connections', { search, pageNo, pageSize: 50 });
    document.getElementById('rows').innerHTML = data.pageItems.map((c) => `
      <tr><td>${esc(c.clientId)} <span class="muted">${esc(c.clientName)} ${esc(c.clientVersion)}</span></td>
        <td>${esc(c.protocol)}</td><td>${esc(c.address)}</td><td>${esc(c.namespace)}</td>
        <td class="num">${c.instanceCount}</td><td class="num">${c.subscriptionCount}</td>
        <td>${new Date(c.connectedAt).toLocaleString()}</td></tr>`).join('')
      || '<tr><td colspan="7" class="muted">No connections</td></tr>';
    showPager('connections', search, pageNo, data, 'connections');
  };
  state.refresh = () => render().catch(failed);
  await render();
}

async function membersPage() {
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

// --- routing ---

async function loadNamespaces() {
  let names = [state.ns];
  if (state.perms && state.perms.serverAdmin) {
    names = (await api('GET', '/roster/v1/admin/namespaces')).map((n) => n.namespace);
  }
  if (!names.includes(state.ns)) names.unshift(state.ns);
  nsSelect.innerHTML = names.map((n) => `<option ${n === state.ns ? 'selected' : ''}>${esc(n)}</option>`).join('');
}

nsSelect.addEventListener('change', () => {
  state.ns = nsSelect.value;
  sessionStorage.setItem('roster.ns', state.ns);
  state.perms = null;
  location.hash = '#/services';
  route();
});

async function route() {
  const [path, search] = (location.hash.slice(1) || '/services').split('?');
  const query = new URLSearchParams(search || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('active', a.dataset.nav === (parts[0] === 'service' ? 'services' : parts[0])));
  try {
    if (!state.perms) {
      state.perms = await api('GET', '/roster/v1/admin/permissions', { namespaceId: state.ns });
      who.textContent = state.perms.identity ? 'Signed in as ' + state.perms.identity : '';
      logoutButton.hidden = !state.token;
      await loadNamespaces();
    }
    if (!state.events) openEvents();
    if (parts[0] === 'service' && parts.length === 3) await servicePage(parts[1], parts[2]);
    else if (parts[0] === 'connections') await connectionsPage(query);
    else if (parts[0] === 'members') await membersPage();
    else if (parts[0] === 'manage' && window.rosterManage) {
      state.refresh = null;
      await window.rosterManage(main, state.perms);
    }
    else await servicesPage(query);
  } catch (e) {
    failed(e);
  }
}

window.addEventListener('hashchange', route);
route();
