// The console's Manage page in a headless Chromium, driven by ConsoleManageBrowserTest:
// node manage.mjs BASE_URL SHOT_DIR, with ROSTER_ADMIN_PASSWORD and ROSTER_NEW_PASSWORD set. Logs in
// as the admin "root", creates a namespace, fails to delete the non-empty "busy", adds the user
// "alice" and logs in as her. Prints a line per step ("STEP ..."), then "ERRORS [...]" and "DONE".
import { pathToFileURL } from 'node:url';

const { chromium } = await import(pathToFileURL(process.env.ROSTER_PLAYWRIGHT).href);
const [base, shots] = process.argv.slice(2);
const step = (s) => console.log('STEP ' + s);

const browser = await chromium.launch({
  executablePath: process.env.ROSTER_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const errors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // Refusals the page expects (a wrong login, the refused delete) are the network log, not errors.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of (403|409)/.test(m.text())) {
      errors.push(m.text());
    }
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  const urls = [];
  page.on('request', (r) => urls.push(r.url()));
  page.setDefaultTimeout(20000);

  const login = async (user, password) => {
    await page.waitForSelector('#login');
    await page.fill('input[name=username]', user);
    await page.fill('input[name=password]', password);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#who:text("Signed in as ' + user + '")');
  };

  await page.goto(base + '/console/');
  await login('root', process.env.ROSTER_ADMIN_PASSWORD);
  await page.click('nav a:text-is("Manage")');
  await page.waitForSelector('tr[data-namespace="busy"]');
  step('MANAGE');

  await page.fill('#ns-create input[name=id]', 'team-a');
  await page.fill('#ns-create input[name=name]', 'Team A');
  await page.fill('#ns-create input[name=description]', 'the first team');
  await page.click('#ns-create button[type=submit]');
  await page.waitForSelector('tr[data-namespace="team-a"]');
  step('CREATED team-a');

  await page.click('tr[data-namespace="busy"] button[data-act="delete"]');
  await page.waitForSelector('#ns-message.error:has-text("is not empty: it has 1 services and 1 instances")');
  await page.waitForSelector('tr[data-namespace="busy"]');
  await page.screenshot({ path: shots + '/manage-refused.png' });
  step('REFUSED busy');

  await page.selectOption('#id-add select[name=kind]', 'user');
  await page.fill('#id-add input[name=name]', 'alice');
  await page.fill('#id-add input[name=password]', process.env.ROSTER_NEW_PASSWORD);
  await page.fill('#id-add input[name=grants]', 'read@team-a');
  await page.click('#id-add button[type=submit]');
  await page.waitForSelector('tr[data-identity="alice"]:has-text("read@team-a")');
  await page.screenshot({ path: shots + '/manage-users.png' });
  step('ADDED alice');

  await page.click('#logout');
  await login('alice', process.env.ROSTER_NEW_PASSWORD);
  step('ALICE');
  const leaking = urls.filter((u) => /accessToken|password/i.test(u));
  console.log('URLS ' + urls.length + ' WITH CREDENTIALS ' + JSON.stringify(leaking));
} finally {
  console.log('ERRORS ' + JSON.stringify(errors));
  await browser.close();
  console.log('DONE');
}
