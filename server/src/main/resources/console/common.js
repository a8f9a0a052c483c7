// The console's shared parts: its state, the admin API's calls, escaping and the status line.

export const main = document.getElementById('main');
const statusLine = document.getElementById('status');

export const state = {
  ns: sessionStorage.getItem('roster.ns') || 'public',
  token: sessionStorage.getItem('roster.token') || '',
  perms: null,
  events: null,
  refresh: null, // what the change stream re-renders: (event) => void
  onDrain: null, // what shows a drain's progress: (drain) => void
  drains: new Map(), // the last event of each drain, by id
  drainId: null, // the drain this page started
  pending: null,
  login: null, // shows the login form: (reason) => void
};

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
    this.login = status === 403 && /^accessToken: /.test(message || '');
  }
}

export async function api(method, path, params = {}) {
  const query = new URLSearchParams(params);
  const init = { method, headers: {} };
  let url = path;
  if (state.token) init.headers.Authorization = 'Bearer ' + state.token;
  if (method === 'GET' || method === 'DELETE') {
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
    if (response.ok) return text; // Nacos v1's "ok"
    body = { code: response.status, message: text };
  }
  if (!response.ok || body.code !== 0) throw new ApiError(response.status, body.message);
  return body.data;
}

export const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

export function say(message) {
  statusLine.textContent = message;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { statusLine.textContent = ''; }, 3000);
}

export function failed(e) {
  if (e instanceof ApiError && e.login) {
    state.login(e.message);
    return;
  }
  say(e.message || String(e));
}

// A page of rows with a search box (and more filters: name → value) and a pager, at #/ROUTE?q=...&page=N.
// KEPT: more parameters of the URL that a search keeps (name → value).
export function listPage(route, title, search, placeholder, headers, filters = {}, kept = {}) {
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
    <div class="pager"><button id="prev">Previous</button><span id="page"></span><button id="next">Next</button>
      <form id="jump" class="bar"><label>Go to page <input type="number" name="to" min="1" class="w-5" required></label>
        <button type="submit">Go</button></form></div>`;
  document.getElementById('search').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params = { q: ev.target.q.value, ...kept };
    for (const name of Object.keys(filters)) params[name] = ev.target[name].value;
    location.hash = `#/${route}?` + new URLSearchParams(params);
  });
}

export function showPager(route, search, pageNo, data, noun, filters = {}) {
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
  const jump = document.getElementById('jump');
  jump.to.max = pages;
  jump.onsubmit = (ev) => {
    ev.preventDefault();
    go(Math.min(pages, Math.max(1, Math.trunc(Number(jump.to.value)) || 1)));
  };
}
