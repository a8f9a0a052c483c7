// The service list of a namespace.

import { api, esc, failed, listPage, showPager, state } from './common.js';

export async function servicesPage(query) {
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
