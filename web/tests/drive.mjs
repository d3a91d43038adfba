// Drives the web client in the system's headless Chromium as a person would, for tests/web.rs:
// clicks the page's own controls (the create form, the seat links, the legal-action buttons, the
// board, the replay controls) and reads what the page shows. Prints one JSON line with what
// happened; screenshots go to the directory given.
//
//   node tests/drive.mjs play-mvs <base URL> <screenshot dir> <timeout ms> [<other URL>]
//       creates a Medici vs Strozzi game in the page, opens both seats' links and a spectator,
//       plays the whole game by clicking legal actions (random choices, random amounts; the board
//       where it offers a choice: loading a lot onto a ship or into a harbour), then
//       replays it: first, next, last, the slider, and the seed check; downloads its log and
//       opens the file from the home page; with <other URL> (a replica with a store of its own,
//       which does not hold the game), opens the file in that replica's page too and steps
//       through it there, recording the board drawn at each version in both pages.
//       For La Strada, the first road is laid hex by hex on the board (and confirmed).
//   node tests/drive.mjs replay-at <base URL> <screenshot dir> <timeout ms> <game id> <version>
//       opens the replay of a game at a version and reports what the board shows (Manila's punts).
//   node tests/drive.mjs refuse-resign <base URL> <screenshot dir> <timeout ms>
//       creates a Medici vs Strozzi game; Medici draws a tile, names a price above the cap (the
//       server refuses it: the banner's words are recorded), then resigns through the page.
//   node tests/drive.mjs invite-undo-rematch <base URL> <screenshot dir> <timeout ms>
//       creates a Medici vs Strozzi game with seat 1 open (an invitation), undo with consent and
//       spectators two moves behind; the invited player joins through the invitation link; the
//       seat to act draws a tile and takes it back, which the other accepts; then it resigns, and
//       both ask for a rematch from the page.
//   node tests/drive.mjs draw <base URL> <screenshot dir> <timeout ms> <game> <players> <moves>
//       creates a game of kind <game> (the create form's value) for <players> seats and plays
//       <moves> moves by clicking, preferring the board where it offers a choice.
//
//   node tests/drive.mjs against-bots <base URL> <screenshot dir> <timeout ms> <game> <players>
//       creates a game from the form with seat 0 human, the other seats random bots and a blitz
//       clock; the page opens the table itself; plays it to the end by clicking.
//   node tests/drive.mjs eight-tabs <base URL> <screenshot dir> <timeout ms>
//       opens eight tabs at once (two games' seats and spectators, and the home page): a move in
//       each game must reach every one of its tabs.
//   node tests/drive.mjs layout <base URL> <screenshot dir> <timeout ms> <game> <players> <moves>
//       plays <moves> moves of a new game by clicking at 1280 and at 390 px wide and reports every
//       layout problem seen after each move (see layoutProblems).
//
// The browser is Chromium from the system (CHROMIUM, default /usr/bin/chromium): playwright-core
// downloads none. Exits 1 with {"error"} when a step fails, 2 when the browser cannot start.

import { chromium } from "playwright-core";

const [scenario, base, shots, timeoutText, ...rest] = process.argv.slice(2);
const timeout = Number(timeoutText ?? "120000");
// The page at `base` with a fragment; DRIVE_QUERY (e.g. "?server=…") for a page served elsewhere.
const at = (fragment) => `${base}/${process.env.DRIVE_QUERY ?? ""}${fragment}`;
const deadline = Date.now() + timeout;

let browser;
try {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    timeout: 30000,
    // Several pages play at once, as in several windows: none is throttled as a background tab.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"],
  });
} catch (error) {
  console.error(`drive.mjs: cannot start Chromium: ${error}`);
  process.exit(2);
}

const messages = [];
const context = await browser.newContext({ viewport: { width: 1440, height: 960 } });

async function newPage(url) {
  const page = await context.newPage();
  page.on("console", (message) => messages.push(`${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => messages.push(`pageerror: ${error.message}`));
  page.on("dialog", (dialog) => dialog.accept());
  await page.goto(url);
  return page;
}

function left() {
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw new Error("the driver's deadline passed");
  return remaining;
}

const state = (page) => page.evaluate(() => ({ ...document.body.dataset }));
const errorText = (page) => page.evaluate(() => {
  const box = document.getElementById("error");
  return box && !box.hidden ? box.textContent : "";
});

/** Creates a game with the home page's form; the seat links and the game id. */
async function createGame(page, game, players) {
  await page.waitForSelector("#create", { timeout: left(), polling: 25 });
  await page.selectOption("#game-kind", game);
  if (players) {
    await page.fill("#players", String(players));
    await page.dispatchEvent("#players", "change");
  }
  // A page that created a game before still says so: wait for this creation's game, not that
  // one's links (two games of one page were once the same game).
  const previous = (await state(page)).createdGame ?? "";
  await page.click("#create");
  await page.waitForFunction((previous) => (document.body.dataset.createdGame ?? "") !== previous || !document.getElementById("error").hidden, previous, { timeout: left(), polling: 25 });
  const failed = await errorText(page);
  if (failed) throw new Error(`create: ${failed}`);
  const links = await page.$$eval("#created a.seat-link", (anchors) => anchors.map((a) => a.href));
  const gameId = (await state(page)).createdGame;
  return { gameId, links };
}

/** Waits until the page shows version > `after`, or an error, or the end. */
async function waitForVersion(page, after) {
  await page.waitForFunction(
    (previous) => Number(document.body.dataset.version ?? "-1") > previous || !document.getElementById("error").hidden,
    after,
    { timeout: left(), polling: 25 },
  );
  const failed = await errorText(page);
  if (failed) throw new Error(`after version ${after}: ${failed}`);
}

/** Plays one move on `page` (the seat to act) by clicking: the board when `preferBoard` and it
 * offers a choice, else a random legal control (with a random amount when it takes one). */
async function playOneMove(page, preferBoard) {
  // As a person switches to the seat's window: a background tab gets no animation frames.
  await page.bringToFront();
  const before = Number((await state(page)).version);
  // Steps of a road laid hex by hex are no moves by themselves (see layRoad).
  const spots = preferBoard ? await page.$$(".board .clickable:not(.road-start):not(.road-step):not(.road-back):not(.road-clear)") : [];
  if (spots.length > 0) {
    await spots[Math.floor(Math.random() * spots.length)].click();
    await waitForVersion(page, before);
    return "board";
  }
  if (await page.$("#load-punts")) {
    // Manila's loading control: 3 wares and start spaces summing to 9 (none above 5), as a
    // person fills it in; the button is enabled only once they make a listed move.
    const boxes = await page.$$("input.punt-ware");
    const picked = boxes.map((_, index) => index).sort(() => Math.random() - 0.5).slice(0, 3);
    const triples = [];
    for (let a = 0; a <= 5; a++) for (let b = 0; b <= 5; b++) if (9 - a - b >= 0 && 9 - a - b <= 5) triples.push([a, b, 9 - a - b]);
    const starts = triples[Math.floor(Math.random() * triples.length)];
    const fields = await page.$$("input.punt-start");
    for (const [slot, index] of picked.entries()) {
      await boxes[index].check();
      await fields[index].fill(String(starts[slot]));
      await fields[index].dispatchEvent("input");
    }
    const sum = await page.textContent(".punt-sum");
    await page.click("#load-punts");
    await waitForVersion(page, before);
    if (!sum.includes("3 of 3 wares; start spaces add up to 9 of 9")) throw new Error(`the loading control says ${sum}`);
    return "punts";
  }
  const controls = await page.$$("#actions-slot button.legal");
  if (controls.length === 0) throw new Error(`no legal control at version ${before}`);
  const choice = controls[Math.floor(Math.random() * controls.length)];
  const row = await choice.evaluateHandle((button) => button.closest(".amount-row, .list-row"));
  const amount = await row.evaluate((element) => element?.querySelector("input.amount") ? true : false);
  if (amount) {
    const input = await row.asElement().$("input.amount");
    const [min, max] = await input.evaluate((field) => [Number(field.min), Number(field.max)]);
    // Prices well inside the range keep the game going; any value in it is legal.
    const value = min + Math.floor(Math.random() * Math.min(max - min + 1, 40));
    await input.fill(String(value));
    await input.dispatchEvent("input");
  }
  const list = await row.evaluate((element) => element?.querySelector("select.legal-list") ? true : false);
  if (list) {
    const select = await row.asElement().$("select.legal-list");
    const count = await select.evaluate((field) => field.options.length);
    await select.selectOption(String(Math.floor(Math.random() * count)));
  }
  await choice.click();
  await waitForVersion(page, before);
  return amount ? "amount" : list ? "list" : "button";
}

/** Lays a La Strada road hex by hex on `page`'s board: a hub, then random offered next hexes
 * (taking the last one back once on the way), then the confirm button. The hexes clicked. */
async function layRoad(page) {
  await page.bringToFront();
  const before = Number((await state(page)).version);
  const pick = async (selector) => {
    const spots = await page.$$(selector);
    if (spots.length === 0) return undefined;
    const spot = spots[Math.floor(Math.random() * spots.length)];
    const hex = await spot.getAttribute("data-hex");
    await spot.click();
    return hex;
  };
  const hexes = [await pick(".board .road-start")];
  let tookBack = false;
  let offered = [];
  for (let steps = 0; steps < 60; steps++) {
    if (await page.$(".board .road-confirm")) break;
    offered.push((await page.$$(".board .road-step")).length);
    const hex = await pick(".board .road-step");
    if (hex === undefined) throw new Error(`no road step offered after ${hexes.join(" ")}`);
    hexes.push(hex);
    if (!tookBack && hexes.length === 3) {
      // Take the last hex back (clicking it again) and lay it anew.
      tookBack = true;
      await page.click(`.board .road-back[data-hex="${hex}"]`);
      hexes.pop();
    }
  }
  const status = await page.textContent("#road-status");
  await page.screenshot({ path: `${shots}/web-laStrada-road-by-hex.png` });
  await page.click(".board .road-confirm");
  await waitForVersion(page, before);
  return { hexes, offered, status, tookBack };
}

async function playMvs() {
  const home = await newPage(at(""));
  const title = await home.title();
  const { gameId, links } = await createGame(home, "mediciVsStrozzi");
  await home.screenshot({ path: `${shots}/web-create.png` });
  if (links.length !== 2) throw new Error(`expected 2 seat links, got ${links.length}`);
  const seats = [await newPage(links[0]), await newPage(links[1])];
  const spectator = await newPage(at(`#game=${gameId}`));
  for (const page of [...seats, spectator]) await page.waitForFunction(() => document.body.dataset.version !== undefined, null, { timeout: left(), polling: 25 });
  const kinds = {};
  let moves = 0;
  let midgame = false;
  for (;;) {
    left();
    const spectating = await state(spectator);
    if (spectating.finished === "1") break;
    let moved = false;
    for (const page of seats) {
      const seen = await state(page);
      if (seen.myTurn === "1" && seen.busy === undefined && seen.version === spectating.version) {
        const started = Date.now();
        if (!kinds.board && (await page.$(".board .clickable"))) await page.screenshot({ path: `${shots}/web-medici-vs-strozzi-loading.png` });
        // The board where it offers a choice (loading a lot onto a ship), else the controls.
        const kind = await playOneMove(page, true);
        if (process.env.DRIVE_TRACE) console.error(`move ${moves + 1}: ${kind} in ${Date.now() - started} ms`);
        kinds[kind] = (kinds[kind] ?? 0) + 1;
        moves += 1;
        moved = true;
        if (!midgame && moves >= 40) {
          midgame = true;
          await spectator.waitForFunction((version) => document.body.dataset.version === version, String(moves), { timeout: left(), polling: 25 });
          await seats[0].screenshot({ path: `${shots}/web-medici-vs-strozzi-seat.png` });
          await spectator.screenshot({ path: `${shots}/web-medici-vs-strozzi.png` });
        }
        break;
      }
    }
    if (!moved) await spectator.waitForTimeout(30);
  }
  const final = await state(spectator);
  // Every page followed the game live to its end.
  for (const page of seats) await page.waitForFunction((version) => document.body.dataset.version === version && document.body.dataset.finished === "1", final.version, { timeout: left(), polling: 25 });
  const turnText = await spectator.textContent("#turn");
  const logLines = await spectator.$$eval("#log li", (items) => items.length);
  await spectator.screenshot({ path: `${shots}/web-medici-vs-strozzi-finished.png` });

  // Replay it from the finished page's link.
  await spectator.click("#replay-link");
  await spectator.waitForFunction(() => document.body.dataset.page === "replay" && document.body.dataset.verified !== undefined && document.body.dataset.chain !== undefined, null, { timeout: left(), polling: 25 });
  const verified = (await state(spectator)).verified;
  // The signatures and the hash chain, checked in the browser.
  const chain = { state: (await state(spectator)).chain, words: await spectator.textContent("#chain-verdict") };
  const seedVerdict = await spectator.textContent("#seed-verdict").catch(() => "");
  const positions = [];
  // The board drawn at each version visited (its SVG), to compare with another replica's page.
  const boards = {};
  const position = async () => {
    await spectator.waitForFunction(() => document.body.dataset.version === document.getElementById("replay-slider").value, null, { timeout: left(), polling: 25 });
    const version = Number((await state(spectator)).version);
    boards[version] = await spectator.$eval("#board svg.board", (picture) => picture.outerHTML).catch(() => "");
    return version;
  };
  await spectator.click("button.step >> nth=0");
  positions.push(await position());
  await spectator.click("button.step >> nth=2");
  positions.push(await position());
  await spectator.click("button.step >> nth=2");
  positions.push(await position());
  await spectator.click("button.step >> nth=1");
  positions.push(await position());
  const firstEvent = await spectator.textContent("#replay-event");
  await spectator.fill("#replay-slider", String(Math.floor(Number(final.version) / 2)));
  positions.push(await position());
  await spectator.screenshot({ path: `${shots}/web-replay.png` });
  await spectator.click("button.step >> nth=3");
  positions.push(await position());

  // The exported log, downloaded from the replay and opened again as a file from the home page.
  const [download] = await Promise.all([spectator.waitForEvent("download", { timeout: left() }), spectator.click("#download-log")]);
  const logFile = await download.path();
  await home.bringToFront();
  await home.goto(at(""));
  await home.setInputFiles("#log-file", logFile);
  await home.waitForFunction(() => document.body.dataset.page === "replay" && document.body.dataset.verified !== undefined && document.body.dataset.chain !== undefined, null, { timeout: left(), polling: 25 });
  const fromFile = { verified: (await state(home)).verified, chain: (await state(home)).chain, heading: await home.textContent("#replay-heading"), position: await home.textContent("#replay-position") };
  const elsewhere = rest[0] ? await replayElsewhere(rest[0], logFile, boards, Number(final.version)) : undefined;
  return { title, gameId, moves, kinds, finalVersion: final.version, turnText, logLines, replay: { verified, chain, seedVerdict, positions, firstEvent, fromFile, elsewhere } };
}

/** Opens the log file in the page of the replica at `other`, which does not hold its game, and
 * steps through it: last, first, next, the slider to the middle. For each version, the board's
 * label, its number of shapes, and whether it is the very picture the game's own replica drew. */
async function replayElsewhere(other, logFile, boards, last) {
  const page = await newPage(`${other}/`);
  await page.setInputFiles("#log-file", logFile);
  await page.waitForFunction(() => document.body.dataset.page === "replay" && document.body.dataset.verified !== undefined, null, { timeout: left(), polling: 25 });
  const visited = [];
  const drawn = async () => {
    await page.waitForFunction(
      () => (document.body.dataset.version === document.getElementById("replay-slider").value && document.body.dataset.boardFrom !== undefined) || !document.getElementById("error").hidden,
      null,
      { timeout: left(), polling: 25 },
    );
    const failed = await errorText(page);
    if (failed) throw new Error(`replay elsewhere: ${failed}`);
    const seen = await state(page);
    const picture = await page.$eval("#board svg.board", (svg) => ({ label: svg.getAttribute("aria-label"), shapes: svg.querySelectorAll("*").length, html: svg.outerHTML })).catch(() => undefined);
    const version = Number(seen.version);
    visited.push({
      version,
      boardFrom: seen.boardFrom,
      label: picture?.label,
      shapes: picture?.shapes ?? 0,
      sameAsHome: boards[version] === undefined ? null : boards[version] === picture?.html,
      turn: await page.textContent("#turn"),
    });
  };
  await drawn();
  await page.click("button.step >> nth=0");
  await drawn();
  await page.click("button.step >> nth=2");
  await drawn();
  await page.fill("#replay-slider", String(Math.floor(last / 2)));
  await drawn();
  await page.screenshot({ path: `${shots}/web-replay-file-elsewhere.png` });
  return { verified: (await state(page)).verified, heading: await page.textContent("#replay-heading"), visited };
}

async function refuseResign() {
  const home = await newPage(at(""));
  const { gameId, links } = await createGame(home, "mediciVsStrozzi");
  const medici = await newPage(links[0]);
  const spectator = await newPage(at(`#game=${gameId}`));
  await medici.waitForFunction(() => document.body.dataset.myTurn === "1", null, { timeout: left(), polling: 25 });
  await medici.click('#actions-slot button.legal[data-kind="drawTile"]');
  await waitForVersion(medici, 0);
  await medici.waitForFunction(() => document.body.dataset.myTurn === "1" && document.querySelector('#actions-slot button.legal[data-kind="offerLot"]'), null, { timeout: left(), polling: 25 });
  // A price above the game's cap: the range is shown beside the field, but the server judges.
  const row = medici.locator("#actions-slot .amount-row", { has: medici.locator('button[data-kind="offerLot"]') });
  const range = await row.locator(".range").textContent();
  await row.locator("input.amount").fill("5000");
  await row.locator("input.amount").dispatchEvent("input");
  await row.locator('button[data-kind="offerLot"]').click();
  await medici.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: left(), polling: 25 });
  const banner = await errorText(medici);
  const versionAfterRefusal = (await state(medici)).version;
  await medici.screenshot({ path: `${shots}/web-error-banner.png` });
  // Resign (the page asks for confirmation; the dialog is accepted).
  await medici.click("#actions-slot button.resign");
  for (const page of [medici, spectator]) await page.waitForFunction(() => document.body.dataset.finished === "1", null, { timeout: left(), polling: 25 });
  const lastLog = await spectator.$$eval("#log li", (items) => items.map((item) => item.textContent).slice(-3));
  await spectator.screenshot({ path: `${shots}/web-resigned.png` });
  return { gameId, range, banner, versionAfterRefusal, bannerAfterResign: await errorText(medici), seatTurn: await medici.textContent("#turn"), spectatorTurn: await spectator.textContent("#turn"), lastLog, finalVersion: (await state(spectator)).version };
}

async function inviteUndoRematch() {
  const home = await newPage(at(""));
  await home.waitForSelector("#create", { timeout: left(), polling: 25 });
  await home.selectOption("#game-kind", "mediciVsStrozzi");
  await home.check('input.seat-open[data-seat="1"]');
  await home.selectOption("#undo-policy", "2");
  await home.fill("#spectator-delay", "2");
  await home.click("#create");
  await home.waitForFunction(() => document.body.dataset.createdGame || !document.getElementById("error").hidden, null, { timeout: left(), polling: 25 });
  const failed = await errorText(home);
  if (failed) throw new Error(`create: ${failed}`);
  const gameId = (await state(home)).createdGame;
  const links = await home.$$eval("#created a.seat-link", (anchors) => anchors.map((a) => a.href));
  const invite = await home.$eval('#created input.invite-link[data-seat="1"]', (input) => input.value);
  const spectatorLabel = await home.textContent("#created a.spectate-link");
  await home.screenshot({ path: `${shots}/web-invitation.png` });
  const first = await newPage(links[0]);
  const waitingWords = await first.waitForFunction(() => document.body.dataset.openSeats === "1" && document.querySelector(".waiting")?.textContent, null, { timeout: left(), polling: 25 }).then((handle) => handle.jsonValue());
  const invited = await newPage(invite);
  await invited.waitForSelector("#join", { timeout: left(), polling: 25 });
  await invited.fill("#join-name", "Bea");
  await invited.click("#join");
  for (const page of [first, invited]) {
    await page.waitForFunction((id) => document.body.dataset.page === "game" && document.body.dataset.gameId === id && document.body.dataset.version === "1", gameId, { timeout: left(), polling: 25 });
  }
  const joinedHeading = await invited.textContent("#game-heading");
  // The seat to act draws a tile and asks to take it back; the other accepts.
  const toAct = (await state(first)).toAct;
  const [mover, other] = toAct === "0" ? [first, invited] : [invited, first];
  await mover.bringToFront();
  await mover.waitForFunction(() => document.body.dataset.myTurn === "1", null, { timeout: left(), polling: 25 });
  await mover.click('#actions-slot button.legal[data-kind="drawTile"]');
  await waitForVersion(mover, 1);
  await mover.waitForSelector("#undo", { timeout: left(), polling: 25 });
  await mover.click("#undo");
  await waitForVersion(mover, 2);
  await other.bringToFront();
  await other.waitForSelector("#undo-accept", { timeout: left(), polling: 25 });
  const requestWords = await other.textContent(".undo-request");
  await other.screenshot({ path: `${shots}/web-undo-request.png` });
  await other.click("#undo-accept");
  await waitForVersion(other, 3);
  const afterUndo = await state(mover);
  // The mover resigns; both ask to play again.
  await mover.bringToFront();
  await mover.waitForSelector("#actions-slot button.resign", { timeout: left(), polling: 25 });
  await mover.click("#actions-slot button.resign");
  for (const page of [first, invited]) await page.waitForFunction(() => document.body.dataset.finished === "1", null, { timeout: left(), polling: 25 });
  const rematches = [];
  for (const page of [first, invited]) {
    await page.bringToFront();
    await page.waitForSelector("#rematch", { timeout: left(), polling: 25 });
    await page.click("#rematch");
    await page.waitForFunction((id) => document.body.dataset.page === "game" && document.body.dataset.gameId !== id && document.body.dataset.version !== undefined, gameId, { timeout: left(), polling: 25 });
    rematches.push((await state(page)).gameId);
  }
  // Both asked: the rematch has started, in both pages.
  for (const page of [first, invited]) {
    await page.waitForFunction(() => !document.body.dataset.openSeats && document.body.dataset.toAct !== undefined, null, { timeout: left(), polling: 25 });
  }
  const rematchStarted = await state(invited);
  await first.waitForFunction(() => document.getElementById("rematch-of"), null, { timeout: left(), polling: 25 });
  await first.screenshot({ path: `${shots}/web-rematch.png` });
  return { gameId, spectatorLabel, waitingWords, joinedHeading, requestWords, afterUndo, rematches, rematchStarted, errors: [await errorText(first), await errorText(invited)] };
}

async function draw() {
  const [game, players, movesText] = rest;
  const movesWanted = Number(movesText ?? "6");
  const home = await newPage(at(""));
  const { gameId, links } = await createGame(home, game, Number(players));
  const spectator = await newPage(at(`#game=${gameId}`));
  await spectator.waitForFunction(() => document.body.dataset.version !== undefined, null, { timeout: left(), polling: 25 });
  const seat = await newPage(links[0]);
  const kinds = {};
  let laidRoad;
  for (let move = 0; move < movesWanted; move++) {
    const seen = await state(spectator);
    if (seen.finished === "1") break;
    const toAct = Number(seen.toAct);
    await seat.goto(links[toAct]);
    await seat.waitForFunction((version) => document.body.dataset.version === version && document.body.dataset.myTurn === "1", seen.version, { timeout: left(), polling: 25 });
    if (game === "laStrada" && !laidRoad && (await seat.$(".board .road-start"))) {
      // The first road of the game is laid hex by hex; later ones by their target.
      laidRoad = await layRoad(seat);
      kinds.hexByHex = (kinds.hexByHex ?? 0) + 1;
    } else {
      const kind = await playOneMove(seat, true);
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
    await spectator.waitForFunction((version) => Number(document.body.dataset.version) > Number(version), seen.version, { timeout: left(), polling: 25 });
  }
  const final = await state(spectator);
  await seat.goto(links[Number(final.toAct ?? 0)]);
  await seat.waitForFunction((version) => document.body.dataset.version === version, final.version, { timeout: left(), polling: 25 });
  await seat.waitForSelector("#board svg.board", { timeout: left(), polling: 25 });
  const board = await seat.$eval("#board svg.board", (picture) => ({ label: picture.getAttribute("aria-label"), shapes: picture.querySelectorAll("*").length }));
  const panel = await seat.textContent("#panel");
  await seat.screenshot({ path: `${shots}/web-${game}.png` });
  await spectator.screenshot({ path: `${shots}/web-${game}-spectator.png` });
  return { gameId, version: final.version, kinds, board, panel, turnText: await seat.textContent("#turn"), laidRoad };
}

/** Opens the replay of game <id> and moves the slider to <version>; what the board shows. */
async function replayAt() {
  const [gameId, versionText] = rest;
  const page = await newPage(at(`#replay=${gameId}`));
  await page.waitForSelector("#replay-slider", { timeout: left() });
  await page.fill("#replay-slider", versionText);
  await page.waitForFunction((version) => document.body.dataset.version === version && document.getElementById("replay-slider").value === version, versionText, { timeout: left(), polling: 25 });
  const board = await page.$eval("#board svg.board", (svg) => ({
    label: svg.getAttribute("aria-label"),
    // Punts drawn at a berth (their tooltip names it), and those still on the river.
    berthed: [...svg.querySelectorAll("g.punt.berthed")].map((punt) => ({ ware: punt.getAttribute("data-ware"), title: punt.querySelector("title")?.textContent ?? "" })),
    atSea: [...svg.querySelectorAll("g.punt:not(.berthed)")].map((punt) => punt.getAttribute("data-ware")),
  }));
  await page.screenshot({ path: `${shots}/web-replay-at-${versionText}.png` });
  return { gameId, version: versionText, board, turn: await page.textContent("#turn") };
}

/** The game against bots: the create form with seat 0 human and the rest random bots, a blitz
 * clock; the page goes straight to the table; moves by clicking to the end. */
async function againstBots() {
  const [game, players] = rest;
  const home = await newPage(at(""));
  await home.waitForSelector("#create", { timeout: left(), polling: 25 });
  await home.selectOption("#game-kind", game);
  if (players) {
    await home.fill("#players", String(players));
    await home.dispatchEvent("#players", "change");
  }
  const rows = await home.$$("select.seat-player");
  for (const [seat, row] of rows.entries()) await row.selectOption(seat === 0 ? "human" : "random");
  await home.selectOption("#clock-preset", "blitz");
  await home.click("#create");
  // One human seat: the page opens the table by itself.
  await home.waitForFunction(() => document.body.dataset.page === "game" && document.body.dataset.version !== undefined, null, { timeout: left(), polling: 25 });
  const tags = await home.$$eval("#seats .tag", (spans) => spans.map((span) => span.textContent));
  const clocks = await home.$$eval("#seats .clock", (faces) => faces.map((face) => face.textContent));
  await home.screenshot({ path: `${shots}/web-against-bots-${game}.png` });
  let moves = 0;
  for (;;) {
    left();
    const seen = await state(home);
    if (seen.finished === "1") break;
    if (seen.myTurn === "1" && seen.busy === undefined) {
      await playOneMove(home, false);
      moves += 1;
    } else {
      await home.waitForFunction((version) => document.body.dataset.version !== version || document.body.dataset.myTurn === "1" || document.body.dataset.finished === "1", seen.version, { timeout: left(), polling: 25 });
    }
  }
  await home.screenshot({ path: `${shots}/web-against-bots-${game}-end.png` });
  const log = await home.$$eval("#log li", (items) => items.map((item) => item.textContent));
  const finalTags = await home.$$eval("#seats .tag", (spans) => spans.map((span) => span.textContent));
  return { gameId: (await state(home)).gameId, moves, tags, finalTags, clocks, log: log.slice(-40), logLines: log.length, turn: await home.textContent("#turn") };
}

/** Eight live tabs at once (more than a browser's six connections): two games, each seat's page
 * and spectators, and the home page; a move in each game reaches every one of its pages. */
async function eightTabs() {
  const home = await newPage(at(""));
  const first = await createGame(home, "mediciVsStrozzi");
  const second = await createGame(home, "mediciVsStrozzi");
  if (second.gameId === first.gameId || second.links.some((link) => first.links.includes(link))) throw new Error(`the second game's links are the first game's (${first.gameId})`);
  const pages = [];
  for (const created of [first, second]) {
    for (const link of created.links) pages.push({ game: created.gameId, page: await newPage(link) });
    pages.push({ game: created.gameId, page: await newPage(at(`#game=${created.gameId}`)) });
  }
  pages.push({ game: first.gameId, page: await newPage(at(`#game=${first.gameId}`)) });
  // Eight tabs: the home page and seven game pages.
  for (const { page } of pages) await page.waitForFunction(() => document.body.dataset.version === "0", null, { timeout: left(), polling: 25 });
  const reached = [];
  for (const created of [first, second]) {
    const mine = pages.filter((entry) => entry.game === created.gameId);
    let mover;
    for (const { page } of mine) if ((await state(page)).myTurn === "1") mover = page;
    if (!mover) throw new Error(`nobody to move in ${created.gameId}`);
    await playOneMove(mover, false);
    for (const { page } of mine) {
      await page.waitForFunction(() => document.body.dataset.version === "1", null, { timeout: left(), polling: 25 });
      reached.push(created.gameId);
    }
  }
  return { tabs: context.pages().length, reached: reached.length, versions: await Promise.all(pages.map(async ({ page }) => (await state(page)).version)) };
}

/** What is wrong with the page's layout now: the page wider than the screen, text that
 * overflows its box (HTML) or runs past the board or out of the box drawn around it (SVG), and on
 * a phone, board text under 12 px and board spots under 40 px. */
const layoutProblems = (page) => page.evaluate(() => {
  const problems = [];
  const phone = window.innerWidth <= 600;
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth + 1) problems.push(`the page is ${doc.scrollWidth}px wide on a ${window.innerWidth}px screen`);
  for (const element of document.querySelectorAll("main *")) {
    if (!(element instanceof HTMLElement) || !element.textContent.trim() || element.clientWidth === 0) continue;
    const style = getComputedStyle(element);
    if (style.overflowX === "auto" || style.overflowX === "scroll" || element.tagName === "INPUT" || element.tagName === "SELECT" || element.tagName === "OL") continue;
    if (element.scrollWidth > element.clientWidth + 1) problems.push(`text overflows ${element.tagName.toLowerCase()}.${element.className}: ${JSON.stringify(element.textContent.slice(0, 50))}`);
  }
  const board = document.querySelector("#board svg.board");
  if (board) {
    const frame = board.getBoundingClientRect();
    const scale = frame.width / board.viewBox.baseVal.width;
    for (const text of board.querySelectorAll("text")) {
      if (!text.textContent.trim()) continue;
      const box = text.getBoundingClientRect();
      const words = JSON.stringify(text.textContent.slice(0, 40));
      if (box.left < frame.left - 1 || box.right > frame.right + 1 || box.top < frame.top - 1 || box.bottom > frame.bottom + 1) problems.push(`board text past the board: ${words}`);
      const drawnBox = text.parentNode?.querySelector(":scope > rect");
      if (drawnBox) {
        const around = drawnBox.getBoundingClientRect();
        const starts = box.left + 1 >= around.left && box.left <= around.right && box.top + box.height / 2 >= around.top && box.top + box.height / 2 <= around.bottom;
        if (starts && (box.right > around.right + 2 || box.bottom > around.bottom + 2)) problems.push(`board text out of its box: ${words}`);
      }
      const size = parseFloat(getComputedStyle(text).fontSize) * scale;
      if (phone && size < 11.95) problems.push(`board text at ${size.toFixed(1)}px on a phone: ${words}`);
    }
    if (phone) {
      for (const spot of board.querySelectorAll(".clickable")) {
        const box = spot.getBoundingClientRect();
        if (Math.max(box.width, box.height) < 39.5) problems.push(`a board spot of ${box.width.toFixed(0)}×${box.height.toFixed(0)}px on a phone`);
      }
    }
  }
  return problems;
});

/** Layout across random states: a game of <game> for <players> seats played <moves> moves by
 * clicking, at 1280 and at 390 px wide; after every move, the layout of the seat's page and the
 * spectator's. Every problem seen, each once, with where. */
/** The sizes the layout checks run at: a laptop's, and a phone's (390 px wide). */
const LAYOUT_SIZES = [[1280, 900], [390, 844]];

/** A browser context of that size; below 600 px wide, a phone's (mobile, touch). */
function sizedContext(width, height) {
  return browser.newContext({ viewport: { width, height }, isMobile: width < 600, hasTouch: width < 600 });
}

async function layout() {
  const [game, players, movesText] = rest;
  const movesWanted = Number(movesText ?? "20");
  const seen = new Map();
  const widths = {};
  for (const [width, height] of LAYOUT_SIZES) {
    const sized = await sizedContext(width, height);
    const open = async (url) => {
      const page = await sized.newPage();
      page.on("pageerror", (error) => messages.push(`pageerror: ${error.message}`));
      page.on("dialog", (dialog) => dialog.accept());
      await page.goto(url);
      return page;
    };
    const home = await open(at(""));
    const { gameId, links } = await createGame(home, game, Number(players));
    const spectator = await open(at(`#game=${gameId}`));
    await spectator.waitForFunction(() => document.body.dataset.toAct !== undefined, null, { timeout: left(), polling: 25 });
    const seat = await open(links[0]);
    let moves = 0;
    const note = async (page, where) => {
      for (const problem of await layoutProblems(page)) if (!seen.has(problem)) seen.set(problem, `${width}px, ${where}, after ${moves} moves`);
    };
    await note(home, "home page");
    for (; moves < movesWanted; moves++) {
      const now = await state(spectator);
      if (now.finished === "1") break;
      await seat.goto(links[Number(now.toAct)]);
      await seat.waitForFunction((version) => document.body.dataset.version === version && document.body.dataset.myTurn === "1", now.version, { timeout: left(), polling: 25 });
      await note(seat, "a seat");
      await note(spectator, "the spectator");
      await playOneMove(seat, false);
      await spectator.waitForFunction((version) => Number(document.body.dataset.version) > Number(version), now.version, { timeout: left(), polling: 25 });
    }
    await note(spectator, "the spectator at the end");
    const replay = await open(at(`#replay=${gameId}`));
    await replay.waitForSelector("#replay-slider", { timeout: left() });
    await replay.waitForFunction(() => document.body.dataset.version !== undefined, null, { timeout: left(), polling: 25 });
    await note(replay, "the replay page");
    await seat.screenshot({ path: `${shots}/web-layout-${game}-${width}.png`, fullPage: true });
    widths[width] = moves;
    await sized.close();
  }
  return { widths, problems: [...seen.entries()].map(([problem, where]) => `${problem} (${where})`) };
}

/** Every state of a finished game, in the replay page, at 1280 and 390 px: the slider is set to
 * every `stride`-th version (and the last), and each state drawn is checked for layout problems
 * as the seat pages are in `layout`. */
async function layoutReplay() {
  const [gameId, strideText] = rest;
  const stride = Math.max(1, Number(strideText ?? "1"));
  const seen = new Map();
  const checked = {};
  for (const [width, height] of LAYOUT_SIZES) {
    const sized = await sizedContext(width, height);
    const page = await sized.newPage();
    page.on("pageerror", (error) => messages.push(`pageerror: ${error.message}`));
    await page.goto(at(`#replay=${gameId}`));
    await page.waitForSelector("#replay-slider", { timeout: left() });
    const last = Number(await page.$eval("#replay-slider", (slider) => slider.max));
    const versions = [];
    for (let version = 0; version < last; version += stride) versions.push(version);
    versions.push(last);
    for (const version of versions) {
      const text = String(version);
      await page.fill("#replay-slider", text);
      await page.waitForFunction((wanted) => document.body.dataset.version === wanted, text, { timeout: left(), polling: 25 });
      for (const problem of await layoutProblems(page)) if (!seen.has(problem)) seen.set(problem, `${width}px, version ${version} of ${last}`);
    }
    checked[width] = versions.length;
    await page.screenshot({ path: `${shots}/web-layout-replay-${gameId}-${width}.png`, fullPage: true });
    await sized.close();
  }
  return { checked, problems: [...seen.entries()].map(([problem, where]) => `${problem} (${where})`) };
}

let exitCode = 0;
try {
  const outcome = scenario === "play-mvs" ? await playMvs() : scenario === "draw" ? await draw() : scenario === "refuse-resign" ? await refuseResign() : scenario === "invite-undo-rematch" ? await inviteUndoRematch() : scenario === "replay-at" ? await replayAt() : scenario === "against-bots" ? await againstBots() : scenario === "eight-tabs" ? await eightTabs() : scenario === "layout" ? await layout() : scenario === "layout-replay" ? await layoutReplay() : undefined;
  if (!outcome) throw new Error(`unknown scenario ${scenario}`);
  console.log(JSON.stringify({ ok: true, outcome, console: messages }));
} catch (error) {
  for (const [index, page] of context.pages().entries()) {
    await page.screenshot({ path: `${shots}/web-failure-${scenario}-${index}.png` }).catch(() => undefined);
  }
  console.log(JSON.stringify({ ok: false, error: String(error), console: messages }));
  exitCode = 1;
} finally {
  await browser.close();
}
process.exit(exitCode);
