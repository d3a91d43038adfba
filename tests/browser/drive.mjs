// Opens a page in the system's headless Chromium and reports what it did, for tests/browser.rs.
//
//   node drive.mjs <page URL> <screenshot path> <timeout in ms>
//
// Waits until the page's title is PASS or FAIL (see src/page.ts), saves a screenshot, and prints
// one JSON line: {"title", "outcome" (the page's report), "console" (the browser's console
// messages, where Chromium explains a CORS refusal)}. Exits with 2 when the browser cannot be
// driven at all. The browser is Chromium from the system (CHROMIUM, default /usr/bin/chromium):
// playwright-core downloads none.

import { chromium } from "playwright-core";

const [url, screenshot, timeoutText] = process.argv.slice(2);
if (!url || !screenshot) {
  console.error("usage: node drive.mjs <page URL> <screenshot path> [timeout ms]");
  process.exit(2);
}
const timeout = Number(timeoutText ?? "30000");

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  timeout,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
let exitCode = 0;
try {
  const page = await browser.newPage();
  const messages = [];
  page.on("console", (message) => messages.push(`${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => messages.push(`pageerror: ${error.message}`));
  page.on("requestfailed", (request) =>
    messages.push(`requestfailed: ${request.method()} ${request.url()}: ${request.failure()?.errorText}`),
  );
  await page.goto(url, { timeout });
  let waitError;
  try {
    await page.waitForFunction(() => document.title === "PASS" || document.title === "FAIL", null, { timeout });
  } catch (error) {
    waitError = String(error);
  }
  const title = await page.title();
  const outcome = await page.evaluate(() => window.tabulaOutcome ?? null);
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(JSON.stringify({ title, outcome, console: messages, waitError }));
} catch (error) {
  console.error(`drive.mjs: ${error}`);
  exitCode = 2;
} finally {
  await browser.close();
}
process.exit(exitCode);
