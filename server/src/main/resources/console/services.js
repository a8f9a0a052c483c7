// The service list of a namespace: search, group filter, page size, jump to page, sorting and
// Nacos's "hide empty services", all kept in the page's URL (#/services?...).

import { api, esc, failed, listPage, main, say, showPager, state } from './common.js';

const SIZES = [10, 20, 50, 100];
// The orders the list API takes (orderBy): by group and name, or by count, the largest first.
const SORTS = { name: 'Name', ipCount: 'Instances', healthyInstanceCount: 'Healthy' };

export async function servicesPage(query) {
  const search = query.get('q') || '';
  const group = query.get('group') || '';
  const pageNo = Number(query.get('page') || '1');
  const size = SIZES.includes(Number(query.get('size'))) ? Number(query.get('size')) : 20;
  const sort = query.get('sort') in SORTS ? query.get('sort') : 'name';
  const hideEmpty = query.get('hideEmpty') === 'true';
  const kept = { size, sort, hideEmpty };
  listPage('services', 'Services', search, 'Search services',
    '<th>Service</th><th>Group</th><th class="num">Instances</th><th class="num">Healthy</th>'
    + '<th class="num">Subscribers</th><th>Protection</th>', { group }, kept);
  document.getElementById('search').insertAdjacentHTML('afterend', `
    <div class="bar" id="list-controls">
      <label>Page size <select id="page-size">${SIZES.map((n) => `<option ${n === size ? 'selected' : ''}>${n}</option>`).join('')}</select></label>
      <label>Sort by <select id="sort">${Object.entries(SORTS).map(([v, label]) =>
        `<option value="${v}" ${v === sort ? 'selected' : ''}>${label}</option>`).join('')}</select></label>
      <label><input type="checkbox" id="hide-empty" ${hideEmpty ? 'checked' : ''}> Hide empty services</label>
    </div>`);
  if (state.perms.admin) createForm();
  const go = (changed) => {
    location.hash = '#/services?' + new URLSearchParams({ q: search, group, ...kept, ...changed, page: 1 });
  };
  main.querySelector('#page-size').addEventListener('change', (ev) => go({ size: ev.target.value }));
  main.querySelector('#sort').addEventListener('change', (ev) => go({ sort: ev.target.value }));
  main.querySelector('#hide-empty').addEventListener('change', (ev) => go({ hideEmpty: ev.target.checked }));
  const render = async () => {
    const data = await api('GET', '/nacos/v3/admin/ns/service/list', { namespaceId: state.ns, serviceNameParam: search,
      groupNameParam: group, pageNo, pageSize: size, orderBy: sort, ignoreEmptyService: hideEmpty });
    document.getElementById('rows').innerHTML = data.pageItems.map((s) => `
      <tr data-service="${esc(s.name)}">
        <td><a href="#/service/${encodeURIComponent(s.groupName)}/${encodeURIComponent(s.name)}">${esc(s.name)}</a></td>
        <td>${esc(s.groupName)}</td>
        <td class="num">${s.ipCount}</td>
        <td class="num">${s.healthyInstanceCount}</td>
        <td class="num">${s.subscriberCount}</td>
        <td>${s.triggerFlag ? '<span class="tag warn" title="Too few healthy instances: consumers get every instance">threshold fired</span>' : ''}</td>
      </tr>`).join('') || '<tr><td colspan="6" class="muted">No services</td></tr>';
    showPager('services', search, pageNo, data, 'services', { group, ...kept });
  };
  state.refresh = () => render().catch(failed);
  await render();
}

// Nacos's "Create service": a name, a group, the protect threshold and metadata (JSON).
function createForm() {
  document.getElementById('list-controls').insertAdjacentHTML('beforeend', `
    <button type="button" id="create-toggle" aria-expanded="false">Create service</button>`);
  document.getElementById('list-controls').insertAdjacentHTML('afterend', `
    <form class="settings" id="create-service" hidden>
      <label for="create-name">Service name</label><input id="create-name" name="serviceName" type="text" required>
      <label for="create-group">Group</label><input id="create-group" name="groupName" type="text" value="DEFAULT_GROUP">
      <label for="create-threshold">Protect threshold</label>
      <input id="create-threshold" name="protectThreshold" type="number" min="0" max="1" step="0.05" value="0">
      <label for="create-metadata">Metadata (JSON)</label><textarea id="create-metadata" name="metadata" rows="2"></textarea>
      <span></span><span><button class="primary" type="submit">Create</button></span>
    </form>`);
  const toggle = document.getElementById('create-toggle');
  const form = document.getElementById('create-service');
  toggle.addEventListener('click', () => {
    form.hidden = !form.hidden;
    toggle.setAttribute('aria-expanded', String(!form.hidden));
    if (!form.hidden) form.serviceName.focus();
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const group = form.groupName.value.trim() || 'DEFAULT_GROUP';
    const name = form.serviceName.value.trim();
    try {
      await api('POST', '/nacos/v1/ns/service', { namespaceId: state.ns, serviceName: name, groupName: group,
        protectThreshold: form.protectThreshold.value || '0', metadata: form.metadata.value.trim() || '{}' });
      say(`Service ${name} created`);
      location.hash = `#/service/${encodeURIComponent(group)}/${encodeURIComponent(name)}`;
    } catch (e) { failed(e); }
  });
}
