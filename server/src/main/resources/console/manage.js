// Roster console, the Manage page (docs/console.md): namespaces (list with counts, create, edit,
// delete) and, for an admin of every namespace, the auth file's users, tokens and grants, over
// /roster/v1/admin/namespaces and /identities (docs/admin-api.md). app.js routes #/manage here
// through window.rosterManage; this file keeps its own small copies of the helpers it needs.

const token = () => sessionStorage.getItem('roster.token') || '';

async function api(method, path, params = {}) {
  const query = new URLSearchParams(params);
  const init = { method, headers: {} };
  let url = path;
  if (token()) init.headers.Authorization = 'Bearer ' + token();
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
  if (!response.ok || body.code !== 0) {
    const e = new Error(body.message || String(response.status));
    e.status = response.status;
    throw e;
  }
  return body.data;
}

const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

function show(id, message, error) {
  const el = document.getElementById(id);
  el.textContent = message;
  el.className = error ? 'error' : 'muted';
}

async function renderNamespaces() {
  const list = await api('GET', '/roster/v1/admin/namespaces');
  document.getElementById('ns-rows').innerHTML = list.map((n) => `
    <tr data-namespace="${esc(n.namespace)}">
      <td><code>${esc(n.namespace)}</code></td>
      <td><input type="text" class="w-12" name="name" value="${esc(n.name)}" aria-label="Name of ${esc(n.namespace)}"
        ${n.namespace === 'public' ? 'disabled' : ''}></td>
      <td><input type="text" class="w-12" name="description" value="${esc(n.description)}"
        aria-label="Description of ${esc(n.namespace)}" ${n.namespace === 'public' ? 'disabled' : ''}></td>
      <td class="num">${n.serviceCount}</td>
      <td class="num">${n.instanceCount}</td>
      <td>${n.namespace === 'public' ? '' : `<button data-act="save">Save</button>
        <button class="danger" data-act="delete">Delete</button>`}</td>
    </tr>`).join('');
}

async function renderIdentities() {
  const data = await api('GET', '/roster/v1/admin/identities');
  document.getElementById('id-member').textContent = `the auth file of member ${data.member}`;
  document.getElementById('id-rows').innerHTML = data.identities.map((i) => `
    <tr data-identity="${esc(i.name)}">
      <td>${esc(i.name)}</td>
      <td>${esc(i.kind)}</td>
      <td>${i.grants.map((g) => `<span class="tag">${esc(g)}
        <button class="link" data-act="revoke" data-grant="${esc(g)}" aria-label="Remove ${esc(g)} from ${esc(i.name)}">×</button></span>`).join(' ')}
        <input type="text" class="w-10" name="grant" placeholder="read@prod" aria-label="Grant for ${esc(i.name)}">
        <button data-act="grant">Add grant</button></td>
      <td>${i.kind === 'user' ? `<input type="password" class="w-10" name="password" aria-label="New password of ${esc(i.name)}"
        autocomplete="new-password"> <button data-act="reset">Reset password</button>` : ''}
        <button class="danger" data-act="remove">Remove</button></td>
    </tr>`).join('');
}

async function managePage(main, perms) {
  const admin = perms && perms.serverAdmin;
  main.innerHTML = `
    <h1>Manage</h1>
    <h2>Namespaces</h2>
    <form class="bar" id="ns-create">
      <input type="text" name="id" placeholder="Namespace id" aria-label="Namespace id" required>
      <input type="text" name="name" placeholder="Name" aria-label="Namespace name">
      <input type="text" name="description" placeholder="Description" aria-label="Namespace description">
      <button class="primary" type="submit">Create namespace</button>
    </form>
    <p id="ns-message" class="muted"></p>
    <div class="table-wrap"><table><thead><tr><th>Id</th><th>Name</th><th>Description</th>
      <th class="num">Services</th><th class="num">Instances</th><th></th></tr></thead><tbody id="ns-rows"></tbody></table></div>
    ${admin ? `
    <h2>Users and tokens <span class="muted" id="id-member"></span></h2>
    <form class="bar" id="id-add">
      <select name="kind" aria-label="Kind"><option value="user">user</option><option value="token">token</option></select>
      <input type="text" name="name" placeholder="Name" aria-label="Identity name" required>
      <input type="password" name="password" placeholder="Password (users)" aria-label="Password" autocomplete="new-password">
      <input type="text" name="grants" placeholder="read@prod,write@prod/orders-*" aria-label="Grants">
      <button class="primary" type="submit">Add</button>
    </form>
    <p id="id-message" class="muted"></p>
    <div class="table-wrap"><table><thead><tr><th>Name</th><th>Kind</th><th>Grants</th><th></th></tr></thead>
      <tbody id="id-rows"></tbody></table></div>` : ''}`;

  document.getElementById('ns-create').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = ev.target;
    try {
      await api('POST', '/roster/v1/admin/namespaces', { namespaceId: f.id.value, namespaceName: f.name.value || f.id.value,
        namespaceDesc: f.description.value });
      show('ns-message', `Created ${f.id.value}.`);
      f.reset();
      await renderNamespaces();
    } catch (e) {
      show('ns-message', e.message, true);
    }
  });
  document.getElementById('ns-rows').addEventListener('click', async (ev) => {
    const act = ev.target.dataset.act;
    const row = ev.target.closest('tr');
    if (!act || !row) return;
    const id = row.dataset.namespace;
    try {
      if (act === 'save') {
        await api('PUT', '/roster/v1/admin/namespaces', { namespaceId: id, namespaceName: row.querySelector('[name=name]').value,
          namespaceDesc: row.querySelector('[name=description]').value });
        show('ns-message', `Saved ${id}.`);
      } else if (act === 'delete') {
        await api('DELETE', '/roster/v1/admin/namespaces', { namespaceId: id });
        show('ns-message', `Deleted ${id}.`);
      }
      await renderNamespaces();
    } catch (e) {
      show('ns-message', e.message, true);
    }
  });
  await renderNamespaces();
  if (!admin) return;

  document.getElementById('id-add').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = ev.target;
    try {
      const params = { kind: f.kind.value, name: f.name.value, grants: f.grants.value };
      if (f.kind.value === 'user') params.password = f.password.value;
      const added = await api('POST', '/roster/v1/admin/identities', params);
      show('id-message', added.token ? `Token for ${added.name} (shown once): ${added.token}` : `Added ${added.name}.`);
      f.reset();
      await renderIdentities();
    } catch (e) {
      show('id-message', e.message, true);
    }
  });
  document.getElementById('id-rows').addEventListener('click', async (ev) => {
    const act = ev.target.dataset.act;
    const row = ev.target.closest('tr');
    if (!act || !row) return;
    const name = row.dataset.identity;
    try {
      if (act === 'remove') {
        await api('DELETE', '/roster/v1/admin/identities', { name });
        show('id-message', `Removed ${name}.`);
      } else if (act === 'reset') {
        await api('PUT', '/roster/v1/admin/identities/password', { name, password: row.querySelector('[name=password]').value });
        show('id-message', `New password for ${name}.`);
      } else if (act === 'grant') {
        await api('POST', '/roster/v1/admin/identities/grants', { name, grant: row.querySelector('[name=grant]').value });
        show('id-message', `Granted to ${name}.`);
      } else if (act === 'revoke') {
        await api('DELETE', '/roster/v1/admin/identities/grants', { name, grant: ev.target.dataset.grant });
        show('id-message', `Removed a grant of ${name}.`);
      }
      await renderIdentities();
    } catch (e) {
      show('id-message', e.message, true);
    }
  });
  await renderIdentities();
}

window.rosterManage = managePage;
