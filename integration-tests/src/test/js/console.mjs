// The console in a headless Chromium, driven by ConsoleBrowserTest: node console.mjs MODE BASE_URL SHOT_DIR.
// Prints a line per step ("STEP ..."); waits for the test's lines on stdin where the test must act
// (register, kill...); ends with "ERRORS [...]" (the browser's console errors) and "DONE".
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

// playwright-core as `make tools` installs it under .tools/ (the test gives its path).
const { chromium } = await import(pathToFileURL(process.env.ROSTER_PLAYWRIGHT).href);

const [mode, base, shots] = process.argv.slice(2);
const lines = readline.createInterface({ input: process.stdin });
const waiting = [];
const received = [];
lines.on('line', (l) => { const w = waiting.shift(); if (w) w(l); else received.push(l); });
const next = () => new Promise((resolve) => { const l = received.shift(); if (l !== undefined) resolve(l); else waiting.push(resolve); });
const expect = async (word) => { const l = await next(); if (l !== word) throw new Error(`expected ${word} from the test, got ${l}`); };
const step = (s) => console.log('STEP ' + s);

const browser = await chromium.launch({
  executablePath: process.env.ROSTER_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const errors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // Refusals the page expects (logging in, a reader's 403, a delete's 400) are the browser's network log, not errors.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 40[03]/.test(m.text())) {
      errors.push(m.text());
    }
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  // The token travels in the Authorization header only: no URL the page asks for may carry it.
  const urls = [];
  page.on('request', (r) => urls.push(r.url()));
  page.setDefaultTimeout(15000);

  if (mode === 'path') {
    // The Nacos getting-started path: the URL Nacos users know, then everything live.
    await page.goto(base + '/nacos/index.html');
    await page.waitForSelector('#rows');
    step('READY');
    await expect('REGISTERED');
    await page.waitForSelector('tr[data-service="orders"]'); // no reload: the change stream
    await page.screenshot({ path: shots + '/services.png' });
    step('SEEN orders');
    await page.keyboard.press('Tab'); // the list can be reached from the keyboard
    await page.click('a:text-is("orders")');
    await page.waitForSelector('tr[data-instance="10.0.0.1:8080"] button[data-action="offline"]');
    await page.click('tr[data-instance="10.0.0.1:8080"] button[data-action="offline"]');
    await page.waitForSelector('tr[data-instance="10.0.0.1:8080"] button[data-action="online"]');
    step('OFFLINE');
    await expect('GO');
    await page.click('tr[data-instance="10.0.0.1:8080"] button[data-action="online"]');
    await page.waitForSelector('tr[data-instance="10.0.0.1:8080"] button[data-action="offline"]');
    step('ONLINE');
    // An instance's metadata, edited as key/value rows.
    await page.click('tr[data-instance="10.0.0.1:8080"] button[data-action="metadata"]');
    await page.locator('#metadata-rows .kv-key').last().fill('version');
    await page.locator('#metadata-rows .kv-value').last().fill('2');
    await page.click('#metadata-editor button[type=submit]');
    await page.waitForSelector('tr[data-instance="10.0.0.1:8080"] code:text("version=2")');
    step('METADATA');
    // A value with "," and "=", and the heartbeat's preserved.* key the editor does not show: kept
    // when saved unchanged, and when a key is added.
    await expect('PAYMENTS');
    await page.goto(base + '/console/#/service/DEFAULT_GROUP/payments');
    await page.click('tr[data-instance="10.0.1.1:7000"] button[data-action="metadata"]');
    await page.click('#metadata-editor button[type=submit]');
    await page.waitForSelector('#metadata-editor', { state: 'hidden' });
    step('META UNCHANGED');
    await expect('ADD');
    await page.click('tr[data-instance="10.0.1.1:7000"] button[data-action="metadata"]');
    await page.click('#metadata-add');
    await page.locator('#metadata-rows .kv-key').last().fill('b');
    await page.locator('#metadata-rows .kv-value').last().fill('1');
    await page.click('#metadata-editor button[type=submit]');
    await page.waitForSelector('#metadata-editor', { state: 'hidden' });
    step('META ADDED');
    await page.goto(base + '/console/#/service/DEFAULT_GROUP/orders');
    await expect('PROVIDER');
    await page.waitForSelector('tr[data-instance="10.0.0.2:9090"]');
    await page.screenshot({ path: shots + '/service.png' });
    step('SEEN 10.0.0.2');
    await expect('KILLED');
    await page.waitForSelector('tr[data-instance="10.0.0.2:9090"]', { state: 'detached', timeout: 60000 });
    step('GONE 10.0.0.2');
    // Drain with confirmation: the Nacos subscriber acknowledges, and the page says so.
    page.once('dialog', (d) => d.accept());
    await page.click('tr[data-instance="10.0.0.1:8080"] button[data-action="drain"]');
    await page.waitForSelector('#drain:text("Drained 10.0.0.1:8080: all 1 subscriber acknowledged.")');
    await page.screenshot({ path: shots + '/drain.png' });
    step('DRAINED');
    await page.setViewportSize({ width: 390, height: 844 }); // a phone
    await page.click('a:text-is("Connections")');
    await page.waitForSelector('#rows tr');
    await page.screenshot({ path: shots + '/connections-phone.png' });
    step('PHONE');
    // A connection's detail: the Nacos subscriber and what it subscribes to.
    await page.click('#rows tr[data-connection] a');
    await page.waitForSelector('tr[data-subscription="DEFAULT_GROUP@@orders"]');
    const protocol = await page.textContent('#connection dt:text-is("Protocol") + dd');
    step('CONNECTION ' + protocol);
  } else if (mode === 'measure') {
    // For the bench (AdminPages): first paint of the service list, then change → screen.
    for (let i = 0; i < 3; i++) {
      const fresh = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const t0 = performance.now();
      await fresh.goto(base + '/console/#/services');
      await fresh.waitForSelector('tr[data-service]');
      console.log('FIRSTPAINT ' + (performance.now() - t0).toFixed(1));
      await fresh.close();
    }
    await page.goto(base + '/console/#/service/DEFAULT_GROUP/' + process.env.ROSTER_SERVICE);
    await page.waitForSelector('#instances tr');
    for (let k = 1; k <= Number(process.env.ROSTER_CHANGES || '30'); k++) {
      const t0 = performance.now();
      const r = await fetch(base + '/nacos/v1/ns/instance', { method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `serviceName=${process.env.ROSTER_SERVICE}&ip=10.9.0.1&port=${k}` });
      const t1 = performance.now();
      if ((await r.text()) !== 'ok') throw new Error('register ' + k + ' refused');
      await page.waitForFunction((sel) => !!document.querySelector(sel), `tr[data-instance="10.9.0.1:${k}"]`,
        { polling: 'raf' });
      const t2 = performance.now();
      console.log(`CHANGE ${(t2 - t0).toFixed(1)} ${(t2 - t1).toFixed(1)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } else if (mode === 'list') {
    // A long owner id keeps Offline, Drain and the weight on screen at 1366 px, and on a phone
    // (390 px) the actions are reachable without scrolling sideways.
    await page.setViewportSize({ width: 1366, height: 800 });
    await page.goto(base + '/console/#/service/DEFAULT_GROUP/' + process.env.ROSTER_LONG_SERVICE);
    await page.waitForSelector('tr[data-instance="10.0.0.3:8080"] button[data-action="offline"]');
    const fits = (w) => page.evaluate((width) => {
      const row = document.querySelector('tr[data-instance="10.0.0.3:8080"]');
      const wrap = row.closest('.table-wrap');
      return [...row.querySelectorAll('button[data-action], input[type=number]')].every((e) => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && r.left >= 0 && r.right <= width;
      }) && wrap.scrollWidth <= wrap.clientWidth && document.scrollingElement.scrollWidth <= width;
    }, w);
    const wide = await fits(1366);
    await page.setViewportSize({ width: 390, height: 844 });
    const phone = await fits(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(base + '/console/#/services'); // away from the service before the test removes it
    await page.waitForSelector('tr[data-service="svc-00"]');
    step(`LAYOUT wide=${wide} phone=${phone}`);
    await expect('LISTING'); // the test removed that service again
    // 13 services, one with 3 instances.
    await page.goto(base + '/console/#/services');
    await page.waitForSelector('tr[data-service="svc-00"]');
    await page.selectOption('#page-size', '10');
    await page.waitForSelector('#page:text("Page 1 of 2")');
    const size = await page.locator('#rows tr').count();
    await page.fill('#jump input[name=to]', '2');
    await page.click('#jump button[type=submit]');
    await page.waitForSelector('#page:text("Page 2 of 2")');
    const second = await page.locator('#rows tr').count();
    await page.selectOption('#sort', 'ipCount');
    await page.waitForSelector('#page:text("Page 1 of 2")');
    const first = await page.locator('#rows tr').first().getAttribute('data-service');
    // Every service listed has an instance: the box is kept in the address and asked of the API.
    const asked = page.waitForRequest((r) => r.url().includes('ignoreEmptyService=true'));
    await page.check('#hide-empty');
    await asked;
    await page.waitForSelector('#count:text("13 services")');
    const hideEmpty = await page.isChecked('#hide-empty') && (await page.evaluate(() => location.hash)).includes('hideEmpty=true');
    step(`LIST size=${size} second=${second} first=${first} hideEmpty=${hideEmpty}`);
    // Create a service with its threshold and metadata; delete it; a service with an instance is not deleted.
    await page.click('#create-toggle');
    await page.fill('#create-name', 'fresh');
    await page.fill('#create-threshold', '0.5');
    await page.fill('#create-metadata', '{"team":"a,b=c"}');
    await page.click('#create-service button[type=submit]');
    await page.waitForSelector('h1:has-text("fresh")');
    await page.waitForFunction(() => document.getElementById('threshold').value === '0.5');
    const metadata = await page.inputValue('#metadata');
    page.once('dialog', (d) => d.accept());
    await page.click('#delete-service');
    await page.waitForSelector('#rows tr[data-service]');
    const gone = await page.locator('tr[data-service="fresh"]').count();
    step(`CREATED metadata=${metadata} gone=${gone === 0}`);
    await page.goto(base + '/console/#/service/DEFAULT_GROUP/svc-00');
    page.once('dialog', (d) => d.accept());
    await page.click('#delete-service');
    await page.waitForSelector('#service-note:not(:empty)');
    step('NOT DELETED ' + await page.textContent('#service-note'));
    // A cluster's health check: HTTP with a path.
    await page.selectOption('tr[data-cluster="DEFAULT"] select', 'HTTP');
    await page.fill('tr[data-cluster="DEFAULT"] input', '/health');
    await page.click('tr[data-cluster="DEFAULT"] button[data-check]');
    await page.waitForSelector('#status:text("Health check of DEFAULT saved")');
    await page.screenshot({ path: shots + '/service-checks.png' });
    step('CHECKED');
    // 中文: the labels in Chinese, and the choice kept.
    await page.click('a:text-is("← Services")');
    await page.waitForSelector('#rows tr[data-service]');
    await page.click('#lang');
    await page.waitForSelector('nav a:text-is("服务")');
    await page.waitForSelector('#search button:text-is("搜索")');
    const labels = [await page.textContent('h1'), await page.textContent('#search button'),
      await page.evaluate(() => document.querySelector('#list-controls label').firstChild.nodeValue.trim()), await page.getAttribute('#search input[name=q]', 'placeholder')];
    await page.screenshot({ path: shots + '/services-zh.png' });
    step('ZH ' + labels.join(' '));
    await page.reload();
    await page.waitForSelector('nav a:text-is("连接")');
    await page.click('#lang');
    await page.waitForSelector('nav a:text-is("Connections")');
    step('ZH KEPT, THEN ENGLISH');
  } else if (mode === 'auth') {
    const login = async (user, password) => {
      await page.waitForSelector('#login');
      await page.fill('input[name=username]', user);
      await page.fill('input[name=password]', password);
      await page.click('button[type=submit]');
    };
    // The pages that need admin on every namespace; Services and Manage (the namespaces it may read) stay.
    const links = () => page.locator('nav a[data-nav="connections"]:visible, nav a[data-nav="members"]:visible').count();
    await page.goto(base + '/console/');
    await login('viewer', 'not the password');
    await page.waitForSelector('#login-error:text("Wrong user or password.")');
    step('REFUSED');
    await page.fill('input[name=password]', process.env.ROSTER_VIEWER_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForSelector('tr[data-service="orders"]');
    await page.click('a:text-is("orders")');
    await page.waitForSelector('tr[data-instance="10.0.0.1:8080"]');
    step('VIEWING');
    await expect('ADDED');
    await page.waitForSelector('tr[data-instance="10.0.0.3:8080"]'); // no reload: the change stream, with the token
    step('LIVE');
    const buttons = await page.locator('button[data-action]').count();
    const saves = await page.locator('#settings button[type=submit]').count();
    // Connections and Members need admin on every namespace: a reader is not offered them.
    step(`VIEWER buttons=${buttons} saves=${saves} links=${await links()}`);
    await page.click('#logout');
    await page.waitForSelector('#login');
    step('LOGGED OUT');
    // admin@public/orders*: the buttons on orders, though not on the whole namespace.
    await login('orders-team', process.env.ROSTER_VIEWER_PASSWORD); // back on the page it was on: orders
    await page.waitForSelector('tr[data-instance="10.0.0.1:8080"] button[data-action="offline"]');
    const offers = await page.locator('tr[data-instance="10.0.0.1:8080"] button[data-action]').count();
    step(`ORDERS TEAM buttons=${offers > 0} saves=${await page.locator('#settings button[type=submit]').count()} links=${await links()}`);
    await page.click('#logout');
    // read@*: the switcher lists a namespace that appears after the page was loaded, once opened.
    await login('auditor', process.env.ROSTER_VIEWER_PASSWORD);
    await page.waitForSelector('tr[data-instance="10.0.0.1:8080"]');
    step('AUDITOR');
    await expect('DEV');
    await page.focus('#namespace');
    await page.waitForSelector('#namespace option:text-is("dev")', { state: 'attached' });
    await page.selectOption('#namespace', 'dev');
    await page.waitForSelector('tr[data-service="billing"]');
    step('SWITCHED');
  }
  const leaking = urls.filter((u) => /accessToken|password/i.test(u));
  console.log('URLS ' + urls.length + ' WITH CREDENTIALS ' + JSON.stringify(leaking));
} finally {
  console.log('ERRORS ' + JSON.stringify(errors));
  await browser.close();
  console.log('DONE');
  lines.close();
}
