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
  // Refusals the page expects (logging in, a reader's 403) are the browser's network log, not errors.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 403/.test(m.text())) {
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
    // An instance's metadata, edited in place; the group filter.
    await page.fill('tr[data-instance="10.0.0.1:8080"] input[aria-label^="Metadata"]', 'version=2');
    await page.click('tr[data-instance="10.0.0.1:8080"] button[data-action="metadata"]');
    await page.waitForFunction(() => [...document.querySelectorAll('tr[data-instance="10.0.0.1:8080"] input')]
      .some((i) => i.value === 'version=2' && document.activeElement !== i));
    step('METADATA');
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
  } else if (mode === 'auth') {
    await page.goto(base + '/console/');
    await page.waitForSelector('#login');
    await page.fill('input[name=username]', 'viewer');
    await page.fill('input[name=password]', 'not the password');
    await page.click('button[type=submit]');
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
    step(`VIEWER buttons=${buttons} saves=${saves}`);
    await page.click('#logout');
    await page.waitForSelector('#login');
    step('LOGGED OUT');
  }
  const leaking = urls.filter((u) => /accessToken|password/i.test(u));
  console.log('URLS ' + urls.length + ' WITH CREDENTIALS ' + JSON.stringify(leaking));
} finally {
  console.log('ERRORS ' + JSON.stringify(errors));
  await browser.close();
  console.log('DONE');
  lines.close();
}
