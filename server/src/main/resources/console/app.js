// Roster console: pages over the admin API (docs/admin-api.md), following the registry's
// change stream so that what they show stays current without a refresh. This file: login and
// routing; the pages are in services.js, service.js and connections.js.

import { api, esc, failed, main, state } from './common.js';
import { closeEvents, openEvents } from './events.js';
import { startI18n } from './i18n.js';
import { servicesPage } from './services.js';
import { servicePage } from './service.js';
import { connectionPage, connectionsPage, membersPage } from './connections.js';

const nsSelect = document.getElementById('namespace');
const who = document.getElementById('who');
const logoutButton = document.getElementById('logout');

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

state.login = showLogin;

logoutButton.addEventListener('click', () => {
  sessionStorage.removeItem('roster.token');
  state.token = '';
  state.perms = null;
  showLogin('');
});

// --- routing ---

// The namespaces this user may read (those with a service, and this one), asked again each
// time the switcher is opened: a namespace that appears later is there without a reload.
async function loadNamespaces(perms) {
  const names = [...perms.namespaces];
  if (!names.includes(state.ns)) names.unshift(state.ns);
  const html = names.map((n) => `<option ${n === state.ns ? 'selected' : ''}>${esc(n)}</option>`).join('');
  if (nsSelect.innerHTML !== html) nsSelect.innerHTML = html;
}

const refillNamespaces = () => {
  if (!state.perms) return; // not logged in yet
  api('GET', '/roster/v1/admin/permissions', { namespaceId: state.ns }).then(loadNamespaces).catch(failed);
};
nsSelect.addEventListener('focus', refillNamespaces);
nsSelect.addEventListener('pointerdown', refillNamespaces);

nsSelect.addEventListener('change', () => {
  state.ns = nsSelect.value;
  sessionStorage.setItem('roster.ns', state.ns);
  state.perms = null;
  closeEvents(); // the stream follows one namespace
  location.hash = '#/services';
  route();
});

async function route() {
  const [path, search] = (location.hash.slice(1) || '/services').split('?');
  const query = new URLSearchParams(search || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('active', a.dataset.nav === ({ service: 'services', connection: 'connections' }[parts[0]] || parts[0])));
  try {
    if (!state.perms) {
      state.perms = await api('GET', '/roster/v1/admin/permissions', { namespaceId: state.ns });
      who.textContent = state.perms.identity ? 'Signed in as ' + state.perms.identity : '';
      logoutButton.hidden = !state.token;
      await loadNamespaces(state.perms);
      // What needs admin on every namespace is not offered to others.
      document.querySelectorAll('nav a[data-nav="connections"], nav a[data-nav="members"]')
        .forEach((a) => { a.hidden = !state.perms.serverAdmin; });
    }
    if (!state.events) openEvents();
    if (parts[0] === 'service' && parts.length === 3) await servicePage(parts[1], parts[2]);
    else if (parts[0] === 'connections') await connectionsPage(query);
    else if (parts[0] === 'connection' && parts.length === 2) await connectionPage(parts[1]);
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

startI18n(document.getElementById('lang'));
window.addEventListener('hashchange', route);
route();
