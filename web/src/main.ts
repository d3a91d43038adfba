// Tabula's web client (issue #16): create a game of any kind, play any seat or watch, follow it
// live through Observe, and replay a finished game version by version.
//
// The page talks to the replica that served it, over gRPC-Web on the same origin (`?server=URL`
// points it at another replica, which must then allow this page's origin with --cors-origin).
// The client is generated from proto/ (protobuf-es + Connect-Web).
//
// Pages, by the URL's fragment (never sent to the server, so seat tokens stay out of its logs):
//   #                                      home: create a game, open one, replay one
//   #game=ID                               watch as a spectator
//   #game=ID&seat=N&token=T                play seat N (the link a seat's player opens)
//   #replay=ID                             step through a game's log
//   #join=CODE                             take an open seat with an invitation code (issue #30)
// Seat tokens the page has seen are kept in this browser's localStorage, per game; so are the
// host tokens of games it created with open seats (to fill them with bots).
//
// For tests (tests/web.rs), `document.body.dataset` carries the page's state: `page`, `version`,
// `toAct`, `myTurn`, `finished` and `busy`.

import { create, fromBinary, fromJson, fromJsonString, ScalarType, toBinary, toJson, toJsonString, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  ActionSchema,
  FinalHeadSchema,
  GameCommitmentSchema,
  GameConfigSchema,
  GameEnding,
  GameKind,
  GameLogSchema,
  GameService,
  TableConfigSchema,
  TurnClockSchema,
  UndoPolicy,
  BotKind,
  type ClockState,
  type TurnClock,
  type Action,
  type Event,
  type GameLinks,
  type GameLog,
  type GameStatus,
  type LegalAction,
  type LoggedAction,
  type ObserveResponse,
  type Player,
  type View,
  ViewSchema,
} from "../gen/tabula/v1/tabula_pb";
import { Ware } from "../gen/tabula/manila/v1/manila_pb";
import { drawBoard, type GameCase } from "./boards/index";
import { followGame } from "./live";
import { privatePanel } from "./panels/index";
import { html, seatColour } from "./svg";
import { actionWords, capitalized, enumWord, eventWords, type SeatNames } from "./words";

// ---------------------------------------------------------------------------------------------
// The connection

const query = new URLSearchParams(location.search);
const serverUrl = query.get("server") ?? location.origin;
const client: Client<typeof GameService> = createClient(GameService, createGrpcWebTransport({ baseUrl: serverUrl }));

function asSeat(token: string | undefined) {
  return token ? { headers: { authorization: `Bearer ${token}` } } : {};
}

/** A failed call in words: the gRPC code's name and the server's message. */
function errorWords(error: unknown): string {
  const failure = ConnectError.from(error);
  return codeWords(failure.code, failure.rawMessage);
}

/** A gRPC code and message in words: "Not found: no game …". */
function codeWords(code: Code | undefined, message: string): string {
  const name = code === undefined ? undefined : Code[code];
  return `${capitalized(name?.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase() ?? "error")}: ${message}`;
}

// ---------------------------------------------------------------------------------------------
// The games the server hosts

interface GameInfo {
  case: GameCase;
  kind: GameKind;
  title: string;
  /** Seat counts the game allows; a single entry: fixed. */
  players: [number, number];
  config: DescMessage;
}

/** The games the server hosts, as it lists them (ListGameTypes), once loaded; see loadGames. */
let GAMES: GameInfo[] = [];
/** Why the server's games could not be listed, if they could not. */
let gamesFailure: string | undefined;

/**
 * Asks the server which games it hosts and finds each one's case of `GameConfig` (named after the
 * game) in this page's protos, for its config message. A game the page's protos do not know (a
 * server newer than the page) is left out: the page could not build its config.
 */
async function loadGames(): Promise<void> {
  try {
    const answer = await client.listGameTypes({});
    GAMES = answer.gameTypes.flatMap((type): GameInfo[] => {
      const field = GameConfigSchema.fields.find((candidate) => candidate.name === type.name);
      if (field?.fieldKind !== "message") return [];
      return [{ case: field.localName as GameCase, kind: type.game, title: type.displayName, players: [type.minSeats, type.maxSeats], config: field.message }];
    });
  } catch (error) {
    gamesFailure = errorWords(error);
  }
}

function gameByCase(name: string | undefined): GameInfo | undefined {
  return GAMES.find((game) => game.case === name);
}

/** Seat names: the players' display names, else the game's own (Medici, Strozzi), else "Seat N". */
function seatNames(game: GameCase | undefined, count: number, players: Player[]): SeatNames {
  const names: string[] = [];
  for (let seat = 0; seat < Math.max(count, 1); seat++) {
    const player = players.find((entry) => entry.seat === seat);
    const own = game === "mediciVsStrozzi" ? ["Medici", "Strozzi"][seat] : undefined;
    names.push(player?.displayName || own || `Seat ${seat}`);
  }
  return names;
}

function seatCount(view: View | undefined): number {
  const value = view?.game.value as { players?: unknown[] } | undefined;
  return value?.players?.length ?? 0;
}

// Seat tokens this browser holds, per game: { gameId: { seat: token } }.
const TOKENS_KEY = "tabula.tokens";

function storedTokens(): Record<string, Record<string, string>> {
  try {
    return JSON.parse(localStorage.getItem(TOKENS_KEY) ?? "{}") as Record<string, Record<string, string>>;
  } catch {
    return {};
  }
}

function storeToken(gameId: string, seat: number, token: string): void {
  const all = storedTokens();
  all[gameId] = { ...(all[gameId] ?? {}), [seat]: token };
  try {
    localStorage.setItem(TOKENS_KEY, JSON.stringify(all));
  } catch {
    // Storage may be off (private windows): the links still carry the tokens.
  }
}

function seatLink(gameId: string, seat: number, token: string): string {
  return `${location.origin}${location.pathname}${location.search}#game=${encodeURIComponent(gameId)}&seat=${seat}&token=${encodeURIComponent(token)}`;
}

// ---------------------------------------------------------------------------------------------
// Page frame

const root = document.getElementById("app") as HTMLElement;
const errorBox = document.getElementById("error") as HTMLElement;

function showError(text: string | undefined): void {
  errorBox.textContent = text ?? "";
  errorBox.hidden = !text;
}

function setState(state: Record<string, string | undefined>): void {
  for (const [key, value] of Object.entries(state)) {
    if (value === undefined) delete document.body.dataset[key];
    else document.body.dataset[key] = value;
  }
}

let leavePage: (() => void) | undefined;

function route(): void {
  leavePage?.();
  leavePage = undefined;
  showError(undefined);
  root.replaceChildren();
  for (const key of Object.keys(document.body.dataset)) delete document.body.dataset[key];
  const params = new URLSearchParams(location.hash.slice(1));
  const game = params.get("game");
  const replay = params.get("replay");
  const join = params.get("join");
  if (join) {
    joinPage(join);
  } else if (game) {
    const seatText = params.get("seat");
    const seat = seatText === null ? undefined : Number(seatText);
    let token = params.get("token") ?? undefined;
    if (seat !== undefined && !token) token = storedTokens()[game]?.[seat];
    if (seat !== undefined && token) storeToken(game, seat, token);
    leavePage = gamePage(game, seat, token);
  } else if (replay) {
    replayPage(replay);
  } else {
    homePage();
  }
}

window.addEventListener("hashchange", route);

// ---------------------------------------------------------------------------------------------
// Home: create, open, replay

function configForm(game: GameInfo): { element: HTMLElement; read(): JsonValue } {
  const inputs: { name: string; read(): JsonValue | undefined }[] = [];
  const element = html("div", { class: "options" });
  for (const field of game.config.fields) {
    if (field.name === "players") continue;
    const id = `option-${field.name}`;
    const text = capitalized(field.name.replace(/_/g, " "));
    if (field.fieldKind === "scalar" && field.scalar === ScalarType.BOOL) {
      const box = html("input", { type: "checkbox", id, name: field.name });
      element.append(html("label", { for: id, class: "option" }, box, ` ${text}`));
      inputs.push({ name: field.jsonName, read: () => (box.checked ? true : undefined) });
    } else if (field.fieldKind === "enum") {
      const select = html("select", { id, name: field.name });
      for (const value of field.enum.values) {
        select.append(html("option", { value: value.name }, value.number === 0 ? "default" : enumWord(value.name)));
      }
      element.append(html("label", { for: id, class: "option" }, `${text} `, select));
      inputs.push({ name: field.jsonName, read: () => (select.selectedIndex > 0 ? select.value : undefined) });
    } else if (field.fieldKind === "scalar") {
      const input = html("input", { type: "number", id, name: field.name, min: 0, placeholder: "default", size: 6 });
      element.append(html("label", { for: id, class: "option" }, `${text} `, input));
      inputs.push({ name: field.jsonName, read: () => (input.value === "" ? undefined : Number(input.value)) });
    }
  }
  return {
    element,
    read: () => {
      const json: { [key: string]: JsonValue } = {};
      for (const input of inputs) {
        const value = input.read();
        if (value !== undefined) json[input.name] = value;
      }
      return json;
    },
  };
}

/**
 * Who plays each seat. Every seat is a person holding its token today; bot seats (played by the
 * server) will be chosen here once the service offers them, per seat, next to the player count.
 */
function seatPlayers(count: number): { seat: number; displayName: string }[] {
  const rows = [...document.querySelectorAll<HTMLInputElement>("input.seat-name")];
  const open = openSeats(count);
  return rows
    .slice(0, count)
    .map((input, seat) => {
      // A bot seat the player did not name is called after its bot.
      const choice = document.querySelectorAll<HTMLSelectElement>("select.seat-player")[seat]?.value;
      const bot = SEAT_PLAYERS.find((entry) => entry.value === choice && entry.bot);
      // Numbered by seat, so that two bots of one kind are told apart ("Bot 2 (easy)").
      return { seat, displayName: input.value.trim() || (bot ? `${bot.label.replace("Bot: ", `Bot ${seat} (`)})` : "") };
    })
    .filter((player) => player.displayName !== "" && !open.includes(player.seat));
}

/** Who may play a seat, as the create form offers it: a person, or a server bot of a strength. */
const SEAT_PLAYERS: { value: string; label: string; bot?: { kind: BotKind; iterations: number } }[] = [
  { value: "human", label: "Human" },
  { value: "random", label: "Bot: random", bot: { kind: BotKind.RANDOM, iterations: 0 } },
  { value: "easy", label: "Bot: easy", bot: { kind: BotKind.SEARCH, iterations: 100 } },
  { value: "normal", label: "Bot: normal", bot: { kind: BotKind.SEARCH, iterations: 500 } },
  { value: "strong", label: "Bot: strong", bot: { kind: BotKind.SEARCH, iterations: 3000 } },
];

/** The bot seats the create form asks for. */
function botSeats(count: number): { seat: number; kind: BotKind; iterations: number }[] {
  return [...document.querySelectorAll<HTMLSelectElement>("select.seat-player")].slice(0, count).flatMap((select, seat) => {
    const bot = SEAT_PLAYERS.find((choice) => choice.value === select.value)?.bot;
    return bot ? [{ seat, ...bot }] : [];
  });
}

/** Turn clock presets: chess's usual speeds, and correspondence play. */
const CLOCK_PRESETS: { value: string; label: string; clock?: () => TurnClock }[] = [
  { value: "none", label: "No clock" },
  { value: "blitz", label: "Blitz: 3 min + 2 s a move", clock: () => create(TurnClockSchema, { kind: { case: "fischer", value: { initialMs: 180_000n, incrementMs: 2_000n } } }) },
  { value: "standard", label: "Standard: 15 min + 10 s a move", clock: () => create(TurnClockSchema, { kind: { case: "fischer", value: { initialMs: 900_000n, incrementMs: 10_000n } } }) },
  { value: "correspondence", label: "Correspondence: 3 days a move", clock: () => create(TurnClockSchema, { kind: { case: "correspondence", value: { daysPerMove: 3 } } }) },
];

/** Time left on a clock, as a person reads it: "2:05", "1:02:05", "2 d 3 h". */
function clockWords(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  if (seconds >= 86_400) return `${Math.floor(seconds / 86_400)} d ${Math.floor((seconds % 86_400) / 3600)} h`;
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60];
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}` : `${m}:${String(s).padStart(2, "0")}`;
}

/** The seats the create form leaves open for invited players. */
function openSeats(count: number): number[] {
  return [...document.querySelectorAll<HTMLInputElement>("input.seat-open")]
    .slice(0, count)
    .flatMap((box, seat) => (box.checked ? [seat] : []));
}

const HOSTS_KEY = "tabula.hosts";

function storedHosts(): Record<string, string> {
  try {
    return JSON.parse(localStorage.getItem(HOSTS_KEY) ?? "{}") as Record<string, string>;
  } catch {
    return {};
  }
}

function storeHost(gameId: string, hostToken: string): void {
  try {
    localStorage.setItem(HOSTS_KEY, JSON.stringify({ ...storedHosts(), [gameId]: hostToken }));
  } catch {
    // Storage may be off: the game then waits for its invited players.
  }
}

const HOT_SEAT_KEY = "tabula.hotSeat";

/** Whether this browser plays hot-seat: a game page switches to the seat to act when it holds it. */
function hotSeat(): boolean {
  try {
    return localStorage.getItem(HOT_SEAT_KEY) === "1";
  } catch {
    return false;
  }
}

function setHotSeat(on: boolean): void {
  try {
    if (on) localStorage.setItem(HOT_SEAT_KEY, "1");
    else localStorage.removeItem(HOT_SEAT_KEY);
  } catch {
    // Storage may be off: the page then stays on its seat.
  }
}

function joinLink(code: string): string {
  return `${location.origin}${location.pathname}${location.search}#join=${encodeURIComponent(code)}`;
}

function homePage(): void {
  setState({ page: "home" });
  document.title = "Tabula";
  const gameSelect = html("select", { id: "game-kind" });
  for (const game of GAMES) gameSelect.append(html("option", { value: game.case }, game.title));
  const playersInput = html("input", { type: "number", id: "players", min: 2, max: 2, value: 2 });
  const optionsSlot = html("div");
  const namesSlot = html("div", { class: "seat-names" });
  const undoSelect = html(
    "select",
    { id: "undo-policy" },
    html("option", { value: String(UndoPolicy.UNSPECIFIED) }, "none"),
    html("option", { value: String(UndoPolicy.OWN_MOVES) }, "own moves"),
    html("option", { value: String(UndoPolicy.WITH_CONSENT) }, "with the others' consent"),
  );
  const delayInput = html("input", { type: "number", id: "spectator-delay", min: 0, max: 1000, value: 0, size: 4 });
  const clockSelect = html("select", { id: "clock-preset" }, ...CLOCK_PRESETS.map((preset) => html("option", { value: preset.value }, preset.label)));
  const playersNote = html("span", { id: "players-note", class: "note" });
  const firstGame: GameInfo | undefined = GAMES[0];
  if (!firstGame) showError(`Could not list the server's games. ${gamesFailure ?? "It hosts none."}`);
  let form = firstGame ? configForm(firstGame) : { element: html("div"), read: (): JsonValue => ({}) };
  const refresh = () => {
    const game = gameByCase(gameSelect.value) ?? firstGame;
    if (!game) return;
    playersInput.min = String(game.players[0]);
    playersInput.max = String(game.players[1]);
    const wanted = Number(playersInput.value);
    playersNote.textContent = "";
    if (!(wanted >= game.players[0] && wanted <= game.players[1])) {
      // Say so rather than silently making another table (9 players asked of a 3–6 game).
      const nearest = Number.isFinite(wanted) ? Math.min(game.players[1], Math.max(game.players[0], Math.round(wanted))) : game.players[0];
      if (playersInput.value !== "" && game.players[0] !== game.players[1]) playersNote.textContent = ` ${game.title} is for ${game.players[0]} to ${game.players[1]} players: set to ${nearest}.`;
      playersInput.value = String(nearest);
    }
    playersInput.disabled = game.players[0] === game.players[1];
    form = configForm(game);
    optionsSlot.replaceChildren(form.element);
    const count = Number(playersInput.value);
    namesSlot.replaceChildren(
      ...Array.from({ length: count }, (_, seat) =>
        html(
          "span",
          { class: "seat-row" },
          html("select", { class: "seat-player", "data-seat": seat }, ...SEAT_PLAYERS.map((choice) => html("option", { value: choice.value }, choice.label))),
          " ",
          html("input", { class: "seat-name", placeholder: seatNames(game.case, count, [])[seat] + " (name, optional)", size: 18 }),
          html("label", { class: "open-label" }, html("input", { type: "checkbox", class: "seat-open", "data-seat": seat }), " invite"),
        ),
      ),
    );
  };
  gameSelect.addEventListener("change", refresh);
  playersInput.addEventListener("change", refresh);
  refresh();
  const created = html("div", { id: "created" });
  const createButton = html("button", { id: "create", type: "button" }, "Create game");
  createButton.addEventListener("click", async () => {
    showError(undefined);
    const game = gameByCase(gameSelect.value) ?? firstGame;
    if (!game) return;
    const json = form.read() as { [key: string]: JsonValue };
    if (game.players[0] !== game.players[1]) json.players = Number(playersInput.value);
    createButton.disabled = true;
    try {
      const configValue = fromJson(game.config, json);
      const config = create(GameConfigSchema, { game: { case: game.case, value: configValue } as never });
      const count = Number(playersInput.value);
      const open = openSeats(count);
      const delay = Number(delayInput.value);
      const bots = botSeats(count).filter((bot) => !open.includes(bot.seat));
      config.table = create(TableConfigSchema, {
        bots,
        clock: CLOCK_PRESETS.find((preset) => preset.value === clockSelect.value)?.clock?.(),
        openSeats: open,
        undo: Number(undoSelect.value) as UndoPolicy,
        spectatorDelay: delay > 0 ? { moves: delay } : undefined,
      });
      const answer = await client.createGame({ config, players: seatPlayers(count) });
      for (const seat of answer.seats) storeToken(answer.gameId, seat.seat, seat.token);
      if (answer.hostToken) storeHost(answer.gameId, answer.hostToken);
      const names = seatNames(game.case, answer.seats.length, answer.players);
      created.replaceChildren(
        html("h3", {}, `${game.title} created: game ${answer.gameId}`),
        html("p", {}, `Seed commitment (SHA-256 of the seed, revealed when the game ends): `, html("code", {}, hex(answer.seedCommitment))),
        html("p", {}, "Each seat's link carries its secret token: open your own, send the others to their players."),
        html(
          "ul",
          { class: "seat-links" },
          ...answer.seats.map((seat) =>
            html(
              "li",
              {},
              html("a", { href: seatLink(answer.gameId, seat.seat, seat.token), class: "seat-link", "data-seat": seat.seat, style: `color:${seatColour(seat.seat)}` }, `Play as ${names[seat.seat]}`),
              " ",
              html("input", { readonly: "", value: seatLink(answer.gameId, seat.seat, seat.token), size: 50, class: "link-copy" }),
            ),
          ),
          ...answer.invitations.map((invitation) =>
            html(
              "li",
              {},
              `Invite a player to ${invitation.seat === undefined ? "any open seat" : names[invitation.seat]}: `,
              html("input", { readonly: "", value: joinLink(invitation.code), size: 50, class: "invite-link", "data-seat": invitation.seat ?? "" }),
            ),
          ),
          html("li", {}, html("a", { href: `#game=${answer.gameId}`, class: "spectate-link" }, delay > 0 ? `Watch as a spectator (${delay} moves behind)` : "Watch as a spectator")),
        ),
      );
      setState({ createdGame: answer.gameId });
      // One person against bots: straight to the table.
      if (answer.seats.length === 1 && answer.invitations.length === 0) {
        location.hash = seatLink(answer.gameId, answer.seats[0].seat, answer.seats[0].token).split("#")[1];
      } else if (answer.seats.length === 0 && answer.invitations.length === 0) {
        // Bots only: a game to watch.
        location.hash = `game=${encodeURIComponent(answer.gameId)}`;
      }
    } catch (error) {
      showError(`Could not create the game. ${errorWords(error)}`);
    } finally {
      createButton.disabled = false;
    }
  });

  const openInput = html("input", { id: "open-id", placeholder: "game id", size: 34 });
  const watchButton = html("button", { type: "button" }, "Watch");
  watchButton.addEventListener("click", () => openInput.value && (location.hash = `game=${openInput.value.trim()}`));
  const replayButton = html("button", { type: "button", id: "replay-open" }, "Replay");
  replayButton.addEventListener("click", () => openInput.value && (location.hash = `replay=${openInput.value.trim()}`));
  const fileInput = html("input", { type: "file", id: "log-file", accept: ".json,.binpb,.pb,application/json,application/octet-stream" });
  fileInput.addEventListener("change", async () => {
    const file = fileInput.files?.[0];
    if (!file) return;
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      replayFromLog(parseLogFile(bytes));
    } catch (error) {
      showError(`That file is not an exported game log (JSON or protobuf): ${String(error)}`);
    }
  });

  const known = storedTokens();
  const knownList = html("ul", { class: "known" });
  for (const [gameId, seats] of Object.entries(known).slice(-10).reverse()) {
    // Which game it is and whose turn, as the server says (filled in when it answers).
    const about = html("span", { class: "known-status" }, "…");
    void client
      .getView({ gameId })
      .then((answer) => {
        const info = GAMES.find((entry) => entry.case === answer.view?.game.case);
        const names = seatNames(info?.case, seatCount(answer.view), answer.players);
        about.textContent = `${info?.title ?? "Game"}: ${statusWords(answer.status, names, undefined) || "waiting for players"}`;
      })
      .catch((error: unknown) => {
        about.textContent = ConnectError.from(error).code === Code.NotFound ? "no longer on this server" : "";
      });
    knownList.append(
      html(
        "li",
        {},
        html("code", {}, gameId.slice(0, 8)),
        " ",
        about,
        " ",
        ...Object.entries(seats).map(([seat, token]) => html("a", { href: seatLink(gameId, Number(seat), token) }, `seat ${seat} `)),
        html("a", { href: `#game=${gameId}` }, "watch "),
        html("a", { href: `#replay=${gameId}` }, "replay"),
      ),
    );
  }

  root.append(
    html(
      "section",
      { class: "card" },
      html("h2", {}, "New game"),
      html("label", {}, "Game ", gameSelect),
      " ",
      html("label", {}, "Players ", playersInput),
      playersNote,
      namesSlot,
      html(
        "div",
        { class: "table-options" },
        html("label", {}, "Clock ", clockSelect),
        " ",
        html("label", {}, "Undo ", undoSelect),
        " ",
        html("label", {}, "Spectators see ", delayInput, " moves behind"),
      ),
      html("details", { open: "" }, html("summary", {}, "Options (rules variants)"), optionsSlot),
      createButton,
      created,
    ),
    html(
      "section",
      { class: "card" },
      html("h2", {}, "Open a game"),
      openInput,
      " ",
      watchButton,
      " ",
      replayButton,
      html("p", {}, "Or replay an exported log file (", html("code", {}, "tabula export"), "): ", fileInput),
    ),
    Object.keys(known).length > 0 ? html("section", { class: "card" }, html("h2", {}, "Games in this browser"), knownList) : "",
  );
}

function hex(bytes: Uint8Array): string {
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function parseLogFile(bytes: Uint8Array): GameLog {
  const text = new TextDecoder().decode(bytes).trim();
  if (text.startsWith("{")) {
    const json = JSON.parse(text) as { log?: JsonValue };
    // Either a GameLog, or an ExportLogResponse around one.
    return json.log !== undefined ? fromJson(GameLogSchema, json.log) : fromJsonString(GameLogSchema, text);
  }
  return fromBinary(GameLogSchema, bytes);
}

// ---------------------------------------------------------------------------------------------
// The game page: board, panels, turn, log, actions; live through Observe

interface LogLine {
  version: bigint;
  text: string;
  seat?: number;
}

/**
 * The log lines of one Observe message (or log entry): the server's sentences for its events
 * (asked for with `narrate`), which name who did what; for a log without them (a file exported
 * without sentences), the action, then each event, in generic words.
 */
function logLines(version: bigint, action: LoggedAction | undefined, events: Event[], names: SeatNames): LogLine[] {
  const lines: LogLine[] = [];
  const sentences = events.map((event) => event.text).filter((text) => text.length > 0);
  if (sentences.length > 0) {
    const seat = action && !action.system ? action.seat : undefined;
    for (const text of sentences) lines.push({ version, text, seat });
    return lines;
  }
  if (action) {
    const who = action.system ? "The table" : (names[action.seat] ?? `Seat ${action.seat}`);
    lines.push({ version, text: `${who}: ${actionWords(action.action, names)}`, seat: action.system ? undefined : action.seat });
  } else if (events.length > 0) {
    lines.push({ version, text: "Setup" });
  }
  for (const event of events) lines.push({ version, text: `  → ${eventWords(event, names)}` });
  return lines;
}

function statusWords(status: GameStatus | undefined, names: SeatNames, mySeat: number | undefined): string {
  if (!status) return "";
  if (status.finished) {
    const winners = status.winners.map((seat) => names[seat] ?? `Seat ${seat}`).join(" and ");
    const scores = status.scores.length > 0 ? ` Scores: ${status.scores.map((score, seat) => `${names[seat]} ${score}`).join(", ")}.` : "";
    if (status.ending === GameEnding.ABORTED) return `Game aborted: ${status.abortReason}`;
    const how = status.ending === GameEnding.RESIGNATION ? " by resignation" : "";
    return `Game over${how}. ${winners ? `Winner: ${winners}.` : "No winner."}${scores}`;
  }
  if (status.toAct === undefined) return "";
  if (status.toAct === mySeat) return `Your turn (${names[status.toAct]})`;
  return `${names[status.toAct] ?? `Seat ${status.toAct}`} to act`;
}

/** The JSON path of an amount field ("manila.bid.price") in proto3 JSON names. */
function jsonPath(protoPath: string): string[] {
  return protoPath.split(".").map((part) => part.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase()));
}

/** `entry.action` with its amount field set to `amount`. */
function withAmount(entry: LegalAction, amount: bigint): Action {
  const json = toJson(ActionSchema, entry.action ?? create(ActionSchema)) as { [key: string]: JsonValue };
  const path = jsonPath(entry.amountField);
  let node: { [key: string]: JsonValue } = json;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== "object" || next === null || Array.isArray(next)) {
      node[part] = {};
    }
    node = node[part] as { [key: string]: JsonValue };
  }
  node[path[path.length - 1]] = amount.toString();
  return fromJson(ActionSchema, json);
}

/** The group a legal action belongs to: its kind ("offerLot", "placeWorkshop"). */
function actionKind(action: Action | undefined): string {
  const value = action?.game.value as { kind?: { case?: string } } | undefined;
  return value?.kind?.case ?? action?.game.case ?? "action";
}

/** Up to this many entries of one kind are buttons; more become a list to choose from. */
const BUTTONS_PER_KIND = 10;

function actionControls(legal: LegalAction[], names: SeatNames, send: (action: Action) => void): HTMLElement {
  const box = html("div", { class: "actions" });
  const groups = new Map<string, LegalAction[]>();
  for (const entry of legal) {
    const kind = actionKind(entry.action);
    groups.set(kind, [...(groups.get(kind) ?? []), entry]);
  }
  for (const [kind, entries] of groups) {
    if (kind === "loadPunts") {
      box.append(puntLoading(entries, send));
      continue;
    }
    if (entries.length <= BUTTONS_PER_KIND) {
      for (const entry of entries) {
        const text = entry.label || actionWords(entry.action, names);
        if (entry.amountRange) {
          const { min, max } = entry.amountRange;
          const field = entry.amountField.split(".").pop() ?? "amount";
          const slider = html("input", { type: "range", min: min.toString(), max: max.toString(), value: min.toString(), class: "amount-slider" });
          const number = html("input", { type: "number", min: min.toString(), max: max.toString(), value: min.toString(), class: "amount", size: 6 });
          slider.addEventListener("input", () => (number.value = slider.value));
          number.addEventListener("input", () => (slider.value = number.value));
          const button = html("button", { type: "button", class: "legal", "data-kind": kind }, entry.label || capitalized(kind.replace(/([A-Z])/g, " $1").toLowerCase()));
          button.addEventListener("click", () => {
            if (!/^\d+$/.test(number.value.trim())) {
              showError(`The ${field} must be a whole number (${min}–${max}).`);
              return;
            }
            // The range is shown beside the field; the server, which alone knows the rules, judges
            // the amount, and a refusal is shown in its words.
            entry.action && send(withAmount(entry, BigInt(number.value.trim())));
          });
          box.append(html("div", { class: "amount-row" }, button, ` ${field}: `, slider, number, html("span", { class: "range" }, ` (${min}–${max})`)));
        } else {
          const button = html("button", { type: "button", class: "legal", "data-kind": kind }, text);
          button.addEventListener("click", () => entry.action && send(entry.action));
          box.append(button);
        }
      }
    } else {
      const select = html("select", { class: "legal-list", "data-kind": kind });
      entries.forEach((entry, index) => select.append(html("option", { value: index }, entry.label || actionWords(entry.action, names))));
      const button = html("button", { type: "button", class: "legal legal-from-list", "data-kind": kind }, `${capitalized(kind.replace(/([A-Z])/g, " $1").toLowerCase())} (${entries.length} choices)`);
      button.addEventListener("click", () => {
        const entry = entries[Number(select.value)];
        entry?.action && send(entry.action);
      });
      box.append(html("div", { class: "list-row" }, select, " ", button));
    }
  }
  return box;
}

/** A Manila harbour master's loading (spec §4.2 b-c): choose 3 of the 4 wares and each one's
 * start space (0 to 5, summing to 9), the sum shown as it is typed; the move sent is the listed
 * one that matches, so the server's rules, not this control, decide what is legal. */
function puntLoading(entries: LegalAction[], send: (action: Action) => void): HTMLElement {
  const starts = (entry: LegalAction): Map<number, number> => {
    const game = entry.action?.game;
    if (game?.case !== "manila" || game.value.kind.case !== "loadPunts") return new Map();
    return new Map(game.value.kind.value.punts.map((punt) => [punt.ware as number, punt.start]));
  };
  const wares = [...new Set(entries.flatMap((entry) => [...starts(entry).keys()]))].sort((a, b) => a - b);
  const most = Math.max(0, ...entries.flatMap((entry) => [...starts(entry).values()]));
  const total = entries.length > 0 ? [...starts(entries[0]).values()].reduce((sum, start) => sum + start, 0) : 0;
  const rows = wares.map((ware) => {
    const chosen = html("input", { type: "checkbox", class: "punt-ware", "data-ware": ware });
    const start = html("input", { type: "number", class: "punt-start", "data-ware": ware, min: 0, max: most, value: 0, size: 3 });
    return { ware, chosen, start, row: html("label", { class: "punt-row" }, chosen, ` ${enumWord(Ware[ware] ? `WARE_${Ware[ware]}` : String(ware))} from space `, start) };
  });
  const sum = html("span", { class: "punt-sum" });
  const load = html("button", { type: "button", class: "legal", "data-kind": "loadPunts", id: "load-punts" }, "Load the punts");
  const matching = (): LegalAction | undefined => {
    const picked = rows.filter((row) => row.chosen.checked);
    return entries.find((entry) => {
      const wanted = starts(entry);
      return wanted.size === picked.length && picked.every((row) => wanted.get(row.ware) === Number(row.start.value));
    });
  };
  const update = () => {
    const picked = rows.filter((row) => row.chosen.checked);
    const added = picked.reduce((acc, row) => acc + Number(row.start.value || 0), 0);
    const entry = matching();
    sum.textContent = ` ${picked.length} of 3 wares; start spaces add up to ${added} of ${total}.`;
    load.disabled = entry === undefined;
    load.title = entry?.label ?? (picked.length !== 3 ? "Choose 3 wares" : `The start spaces must add up to ${total}, each at most ${most}`);
  };
  for (const row of rows) {
    row.chosen.addEventListener("change", update);
    row.start.addEventListener("input", update);
  }
  load.addEventListener("click", () => {
    const entry = matching();
    if (entry?.action) send(entry.action);
  });
  update();
  return html("div", { class: "punt-loading" }, html("p", {}, "Load 3 wares and choose where each punt starts:"), ...rows.map((row) => row.row), sum, " ", load);
}

function gamePage(gameId: string, mySeat: number | undefined, token: string | undefined): () => void {
  setState({ page: "game", gameId });
  const stop = new AbortController();
  const lines: LogLine[] = [];
  let version = -1n;
  let view: View | undefined;
  let status: GameStatus | undefined;
  let legal: LegalAction[] = [];
  let players: Player[] = [];
  let busy = false;
  let game: GameCase | undefined;
  // The turn clock as last sent, and when it arrived (local clock): the seat to act's time runs
  // down from it between messages.
  let clock: ClockState | undefined;
  let clockReceived = 0;
  const timedOut = new Set<number>();

  const heading = html("h2", { id: "game-heading" }, `Game ${gameId}`);
  const turn = html("div", { id: "turn", class: "turn" });
  const boardSlot = html("div", { id: "board", class: "board-slot" });
  const actionsSlot = html("div", { id: "actions-slot" });
  const panelSlot = html("div", { id: "panel" });
  const seatsSlot = html("div", { id: "seats" });
  const logList = html("ol", { id: "log", class: "log" });
  const links = html("div", { class: "links" });
  root.append(
    heading,
    turn,
    html(
      "div",
      { class: "table" },
      boardSlot,
      html(
        "aside",
        { class: "side" },
        html("section", { class: "card" }, html("h3", {}, mySeat === undefined ? "Spectating" : "Your moves"), actionsSlot),
        html("section", { class: "card" }, seatsSlot),
        html("section", { class: "card" }, panelSlot),
        html("section", { class: "card" }, html("h3", {}, "Log"), logList),
        links,
      ),
    ),
  );

  const names = () => seatNames(game, seatCount(view), players);
  let gameLinks: GameLinks | undefined;

  const tableAction = (kind: string): Action => create(ActionSchema, { game: { case: "table", value: { kind: { case: kind, value: {} } } } } as never);
  const rematch = async () => {
    showError(undefined);
    try {
      const again = await client.rematch({ gameId }, asSeat(token));
      storeToken(again.gameId, again.seat, again.token);
      location.hash = `game=${encodeURIComponent(again.gameId)}&seat=${again.seat}&token=${encodeURIComponent(again.token)}`;
    } catch (error) {
      showError(`Could not start a rematch. ${errorWords(error)}`);
    }
  };
  const fillWithBots = async (hostToken: string) => {
    showError(undefined);
    try {
      await client.fillOpenSeats({ gameId, requestId: `web-fill-${gameId}` }, asSeat(hostToken));
    } catch (error) {
      showError(`Could not fill the open seats. ${errorWords(error)}`);
    }
  };

  const send = async (action: Action) => {
    if (busy || mySeat === undefined) return;
    busy = true;
    setState({ busy: "1" });
    showError(undefined);
    for (const button of actionsSlot.querySelectorAll("button")) button.disabled = true;
    try {
      // The Observe stream brings the new state, so the answer need not carry the view.
      await client.act(
        {
          gameId,
          action,
          expectedVersion: version,
          requestId: `web-${crypto.getRandomValues(new Uint32Array(2)).join("-")}`,
          omitView: true,
        },
        asSeat(token),
      );
    } catch (error) {
      showError(`Your move was refused. ${errorWords(error)}`);
      for (const button of actionsSlot.querySelectorAll("button")) button.disabled = false;
    } finally {
      busy = false;
      setState({ busy: undefined });
    }
  };

  /** Time left of `seat`'s clock now, in ms; undefined for a game without a clock. */
  const clockLeft = (seat: number): number | undefined => {
    if (!clock) return undefined;
    // The server's clock now, from its time at sending and the time since: no skew.
    const serverNow = Number(clock.serverTimeMs) + (Date.now() - clockReceived);
    if (clock.seat === seat && clock.deadlineMs !== undefined && !status?.finished) return Number(clock.deadlineMs) - serverNow;
    const left = clock.remainingMs[seat];
    return left === undefined ? undefined : Number(left);
  };
  const tickClocks = () => {
    for (const face of seatsSlot.querySelectorAll<HTMLElement>(".clock")) {
      const left = clockLeft(Number(face.dataset.seat));
      face.textContent = left === undefined ? "" : clockWords(left);
      face.classList.toggle("low", left !== undefined && left < 30_000);
    }
  };
  const ticker = setInterval(tickClocks, 500);
  stop.signal.addEventListener("abort", () => clearInterval(ticker));

  /** Who sits where: names, whose turn, bots, resigned and timed-out seats, and the clocks. */
  const renderSeats = (seats: SeatNames) => {
    const count = Math.max(seats.length, clock?.remainingMs.length ?? 0);
    const rows = Array.from({ length: count }, (_, seat) => {
      const tags: string[] = [];
      if (seat === mySeat) tags.push("you");
      if (status?.toAct === seat && !status.finished) tags.push("to act");
      if (status?.bots.some((bot) => bot.seat === seat)) tags.push("bot");
      if (status?.openSeats.includes(seat)) tags.push("open seat");
      if (timedOut.has(seat)) tags.push("timed out");
      if (status?.resigned.includes(seat)) tags.push("resigned");
      if (status?.winners.includes(seat)) tags.push("winner");
      return html(
        "div",
        { class: "seat-row-live", "data-seat": seat, style: `border-left-color:${seatColour(seat)}` },
        html("span", { class: "seat-name-live" }, seats[seat] ?? `Seat ${seat}`),
        ...tags.map((tag) => html("span", { class: `tag tag-${tag.replace(" ", "-")}` }, tag)),
        html("span", { class: "clock", "data-seat": seat }),
      );
    });
    seatsSlot.replaceChildren(html("h3", {}, "Players"), ...rows);
    tickClocks();
  };

  let drawn = false;
  const render = () => {
    drawn = false;
    const seats = names();
    const info = gameByCase(game);
    heading.textContent = `${info?.title ?? "Game"} · ${gameId.slice(0, 8)} · version ${version}` + (mySeat === undefined ? " · spectator" : ` · you are ${seats[mySeat]}`);
    document.title = `${info?.title ?? "Tabula"} — ${statusWords(status, seats, mySeat)}`;
    turn.textContent = statusWords(status, seats, mySeat);
    turn.style.borderColor = seatColour(status?.toAct);
    turn.classList.toggle("mine", status?.toAct !== undefined && status.toAct === mySeat);
    if (view) {
      const picture = drawBoard(view, { seats, mySeat, toAct: status?.toAct, legal, pick: (action) => void send(action) });
      boardSlot.replaceChildren(picture ?? html("pre", {}, JSON.stringify(toJson(ViewSchema, view), null, 1)));
      panelSlot.replaceChildren(privatePanel(view, mySeat, seats));
    }
    renderSeats(seats);
    if (mySeat !== undefined && legal.length > 0 && !status?.finished) {
      const controls = actionControls(legal, seats, (action) => void send(action));
      const resign = html("button", { type: "button", class: "resign" }, "Resign");
      resign.addEventListener("click", () => {
        if (confirm("Resign this game?")) void send(create(ActionSchema, { game: { case: "table", value: { kind: { case: "resign", value: {} } } } }));
      });
      const undo = html("button", { type: "button", id: "undo" }, "Take back");
      undo.addEventListener("click", () => void send(tableAction("undo")));
      actionsSlot.replaceChildren(controls, html("div", { class: "resign-row" }, undo, " ", resign));
    } else if (status?.finished) {
      const again = html("button", { type: "button", id: "rematch" }, "Play again");
      again.addEventListener("click", () => void rematch());
      actionsSlot.replaceChildren(
        html("p", {}, "The game is over. ", html("a", { href: `#replay=${gameId}`, id: "replay-link" }, "Replay it")),
        mySeat === undefined ? "" : html("p", {}, again, " (the same game, everyone one seat round the table)"),
      );
    } else if (status && status.openSeats.length > 0) {
      const hostToken = storedHosts()[gameId];
      const fill = html("button", { type: "button", id: "fill-bots" }, "Fill the open seats with bots");
      fill.addEventListener("click", () => hostToken && void fillWithBots(hostToken));
      actionsSlot.replaceChildren(html("p", { class: "waiting" }, `Waiting for ${status.openSeats.map((seat) => names()[seat]).join(", ")} to join.`), hostToken ? fill : "");
    } else {
      const undo = html("button", { type: "button", id: "undo" }, "Take back");
      undo.addEventListener("click", () => void send(tableAction("undo")));
      actionsSlot.replaceChildren(html("p", { class: "waiting" }, mySeat === undefined ? "Watching." : "Waiting for the other players."), mySeat === undefined ? "" : undo);
    }
    const request = status?.undoRequest;
    if (request && mySeat !== undefined && request.waitingFor.includes(mySeat)) {
      const accept = html("button", { type: "button", id: "undo-accept" }, "Accept");
      accept.addEventListener("click", () => void send(tableAction("acceptUndo")));
      const decline = html("button", { type: "button", id: "undo-decline" }, "Decline");
      decline.addEventListener("click", () => void send(tableAction("declineUndo")));
      actionsSlot.prepend(html("p", { class: "undo-request" }, `${names()[request.seat]} asks to take back moves to version ${request.toVersion}. `, accept, " ", decline));
    }
    logList.replaceChildren(
      ...lines.slice(-1000).map((line) => html("li", { style: line.seat === undefined ? undefined : `border-left-color:${seatColour(line.seat)}`, class: line.text.startsWith("  →") ? "event" : "action" }, html("span", { class: "v" }, `${line.version}`), ` ${line.text.trim()}`)),
    );
    logList.scrollTop = logList.scrollHeight;
    // Links to every seat whose token this browser holds (the creator holds them all).
    const tokens = storedTokens()[gameId] ?? {};
    // Hot-seat: one page plays every seat this browser holds, switching to the seat to act.
    const heldToAct = status?.toAct !== undefined && !status.finished && status.toAct !== mySeat ? tokens[status.toAct] : undefined;
    if (hotSeat() && heldToAct !== undefined && status?.toAct !== undefined) {
      location.hash = seatLink(gameId, status.toAct, heldToAct).split("#")[1];
      return;
    }
    const hotSeatBox = html("input", { type: "checkbox", id: "hot-seat" });
    hotSeatBox.checked = hotSeat();
    hotSeatBox.addEventListener("change", () => {
      setHotSeat(hotSeatBox.checked);
      scheduleRender();
    });
    links.replaceChildren(
      html("h3", {}, "Seats"),
      Object.keys(tokens).length > 1 ? html("label", { class: "hot-seat" }, hotSeatBox, " Hot-seat: switch to whoever's turn it is") : "",
      ...Object.entries(tokens).map(([seat, seatToken]) =>
        html("div", {}, html("a", { href: seatLink(gameId, Number(seat), seatToken), class: "seat-link", "data-seat": seat }, `Open ${seats[Number(seat)] ?? `seat ${seat}`}`)),
      ),
      html("div", {}, html("a", { href: `#game=${gameId}` }, "Watch as a spectator"), " · ", html("a", { href: `#replay=${gameId}` }, "Replay"), " · ", html("a", { href: "#" }, "Home")),
      gameLinks?.rematchOf ? html("div", {}, html("a", { href: `#game=${gameLinks.rematchOf}`, id: "rematch-of" }, "The game this is a rematch of")) : "",
      gameLinks?.rematch ? html("div", {}, html("a", { href: `#game=${gameLinks.rematch}`, id: "rematch-link" }, "This game's rematch")) : "",
    );
    setState({
      version: version.toString(),
      toAct: status?.toAct?.toString(),
      myTurn: mySeat !== undefined && status?.toAct === mySeat && legal.length > 0 ? "1" : undefined,
      finished: status?.finished ? "1" : undefined,
      openSeats: status && status.openSeats.length > 0 ? status.openSeats.join(",") : undefined,
      undoRequest: status?.undoRequest ? status.undoRequest.waitingFor.join(",") : undefined,
    });
  };
  const scheduleRender = () => {
    if (drawn) return;
    drawn = true;
    // A timer, not an animation frame: a page in a background tab (a watcher's, the other seat's)
    // gets no frames, and its state must still follow the game.
    setTimeout(render, 0);
  };

  // Observe from the start (the whole log in words), then live; reconnect after a failure.
  const onUpdate = (message: ObserveResponse) => {
    if (message.players.length > 0) players = message.players;
    gameLinks = message.links ?? gameLinks;
    // A join names its player.
    for (const event of message.events) {
      if (event.game.case === "table" && event.game.value.kind.case === "seatJoined") {
        const joined = event.game.value.kind.value.player;
        if (joined) players = [...players.filter((player) => player.seat !== joined.seat), joined].sort((a, b) => a.seat - b.seat);
      }
    }
    view = message.view ?? view;
    game = (view?.game.case as GameCase | undefined) ?? game;
    status = message.status;
    legal = message.legalActions;
    if (message.clock) {
      clock = message.clock;
      clockReceived = Date.now();
    }
    for (const event of message.events) {
      if (event.game.case === "table" && event.game.value.kind.case === "seatTimedOut") timedOut.add(event.game.value.kind.value.seat);
    }
    // A reconnected stream starts by repeating the state at `version`: logged already.
    if (message.version > version) lines.push(...logLines(message.version, message.action, message.events, names()));
    version = message.version;
    showError(undefined);
    scheduleRender();
  };
  // Observe from the start (the whole log in words), then live, on the browser's one shared
  // stream (live.ts); after a failure, again from the version shown.
  let attempt = 0;
  const follow = () => {
    if (stop.signal.aborted) return;
    const stopFollowing = followGame(client, serverUrl, {
      gameId,
      token,
      fromVersion: version < 0n ? 0n : version,
      onUpdate: (message) => {
        attempt = 0;
        onUpdate(message);
      },
      onEnd: (ended) => {
        if (stop.signal.aborted || (ended.code === undefined && status?.finished)) return;
        showError(`Lost the live updates: ${ended.code === undefined ? "the stream ended" : codeWords(ended.code, ended.message ?? "")} (retrying)`);
        if (ended.code === Code.NotFound || ended.code === Code.InvalidArgument || ended.code === Code.Unauthenticated || ended.code === Code.PermissionDenied) return;
        attempt += 1;
        setTimeout(follow, Math.min(5000, 250 * 2 ** attempt));
      },
    });
    stop.signal.addEventListener("abort", stopFollowing, { once: true });
  };
  follow();
  return () => stop.abort();
}

// ---------------------------------------------------------------------------------------------
// Join: take an open seat with an invitation code

function joinPage(code: string): void {
  setState({ page: "join" });
  document.title = "Tabula — join a game";
  const nameInput = html("input", { id: "join-name", placeholder: "your name", size: 24 });
  const joinButton = html("button", { id: "join", type: "button" }, "Take the seat");
  joinButton.addEventListener("click", async () => {
    showError(undefined);
    joinButton.disabled = true;
    try {
      const joined = await client.joinGame({
        code,
        player: { displayName: nameInput.value.trim() },
        // The same code and id answer the same seat, should the answer be lost and the page retry.
        requestId: `web-join-${code.slice(-12)}`,
      });
      storeToken(joined.gameId, joined.seat, joined.token);
      location.hash = `game=${encodeURIComponent(joined.gameId)}&seat=${joined.seat}&token=${encodeURIComponent(joined.token)}`;
    } catch (error) {
      showError(`Could not join. ${errorWords(error)}`);
      joinButton.disabled = false;
    }
  });
  root.append(
    html(
      "section",
      { class: "card" },
      html("h2", {}, "You are invited to a game"),
      html("p", {}, "Take the seat the invitation offers: the link works once, and expires."),
      html("label", {}, "Name ", nameInput),
      " ",
      joinButton,
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Replay: step through a game's log

function replayPage(gameId: string): void {
  setState({ page: "replay", gameId });
  root.append(html("p", {}, `Loading the log of ${gameId}…`));
  client
    .exportLog({ gameId, narrate: true })
    .then((answer) => {
      if (!answer.log) throw new Error("the server sent no log");
      replayFromLog(answer.log);
    })
    .catch((error: unknown) => {
      root.replaceChildren();
      showError(`Could not load game ${gameId}. ${errorWords(error)}`);
    });
}

async function sha256(bytes: Uint8Array): Promise<Uint8Array | undefined> {
  if (!crypto.subtle) return undefined;
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
}

// The log's signatures and hash chain, checked in this browser (README, *Signed commitments*):
// the commitment's Ed25519 signature under a key the server publishes, what it commits to, each
// link of the chain (and, once the seed is public, each action against its keyed commitment), and
// the signed end of a finished game.
const encoder = new TextEncoder();

function concat(...parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

function bigEndian(value: bigint | number, bytes: 4 | 8): Uint8Array {
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  if (bytes === 8) view.setBigUint64(0, BigInt(value));
  else view.setUint32(0, Number(value));
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

type ChainVerdict = { state: "valid" | "invalid" | "unsigned" | "unknown-key" | "unchecked"; words: string };

async function checkChain(log: GameLog): Promise<ChainVerdict> {
  const signed = log.signedCommitment;
  if (!signed) return { state: "unsigned", words: "This log is unsigned: its game was created before signed logs." };
  if (!crypto.subtle) return { state: "unchecked", words: "This browser cannot check signatures here (not a secure context)." };
  const subtle = crypto.subtle;
  const published = (await client.getSigningKeys({})).keys;
  const verifySigned = async (keyId: string, context: string, payload: Uint8Array, signature: Uint8Array): Promise<boolean | undefined> => {
    const key = published.find((candidate) => candidate.keyId === keyId);
    if (!key) return undefined;
    const imported = await subtle.importKey("raw", key.publicKey as BufferSource, { name: "Ed25519" }, false, ["verify"]);
    return subtle.verify("Ed25519", imported, signature as BufferSource, concat(encoder.encode(context), new Uint8Array([0]), payload) as BufferSource);
  };
  const bad = (words: string): ChainVerdict => ({ state: "invalid", words: `✘ ${words}` });
  const commitmentSigned = await verifySigned(signed.keyId, "tabula-game-commitment-v1", signed.commitment, signed.signature);
  if (commitmentSigned === undefined) return { state: "unknown-key", words: `Signed with key ${signed.keyId}, which this server does not publish: check it with that deployment's keys (tabula verify --keys).` };
  if (!commitmentSigned) return bad(`The commitment's signature does not match it (key ${signed.keyId}).`);
  const commitment = fromBinary(GameCommitmentSchema, signed.commitment);
  if (commitment.gameId !== log.gameId) return bad(`The signed commitment is for game ${commitment.gameId}, not this one.`);
  if (!sameBytes(commitment.seedCommitment, log.seedCommitment)) return bad("The seed commitment is not the one the server signed.");
  const digest = async (bytes: Uint8Array) => new Uint8Array(await subtle.digest("SHA-256", bytes as BufferSource));
  const seedKey = log.seed.length === 32 ? await subtle.importKey("raw", log.seed as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]) : undefined;
  let head: Uint8Array = await digest(concat(encoder.encode("tabula-genesis-v1\0"), signed.commitment));
  for (const [index, entry] of log.entries.entries()) {
    const version = index + 1;
    if (entry.version !== BigInt(version)) return bad(`Entry ${version}: the log says version ${entry.version} there (an entry is missing, repeated or out of order).`);
    if (seedKey && entry.action) {
      const action = toBinary(ActionSchema, entry.action);
      const committed = new Uint8Array(await subtle.sign("HMAC", seedKey, concat(encoder.encode("tabula-action-v1\0"), bigEndian(version, 8), action) as BufferSource));
      if (!sameBytes(committed, entry.actionCommitment)) return bad(`Entry ${version}: its action is not the one the chain committed to.`);
    }
    const link = concat(encoder.encode("tabula-entry-v1\0"), head, bigEndian(version, 8), bigEndian(entry.seat, 4), bigEndian(entry.serverTimeMs, 8), entry.actionCommitment);
    if (!sameBytes(await digest(link), entry.head)) return bad(`Entry ${version}: its head does not follow from the entry before it.`);
    head = entry.head;
  }
  const last = log.entries.length;
  const end = log.signedFinalHead;
  if (!end) {
    if (log.complete) return bad("The game ended but its final head is not signed: the log may have been cut short.");
    return { state: "valid", words: `✔ Signed by key ${signed.keyId}; the chain of ${last} entries holds (checked in this browser). The game has not ended: its end is not signed yet.` };
  }
  const endSigned = await verifySigned(end.keyId, "tabula-final-head-v1", end.finalHead, end.signature);
  if (!endSigned) return bad(`The final head's signature does not verify (key ${end.keyId}).`);
  const finalHead = fromBinary(FinalHeadSchema, end.finalHead);
  if (finalHead.version !== BigInt(last)) return bad(`The log ends at version ${last} but the server signed its end at version ${finalHead.version}.`);
  if (!sameBytes(finalHead.head, head)) return bad("The chain's last head is not the one the server signed at the end.");
  return { state: "valid", words: `✔ Signed by key ${signed.keyId}; the chain of ${last} entries holds, every action matches its commitment, and the end is signed (checked in this browser).` };
}

function replayFromLog(log: GameLog): void {
  leavePage?.();
  leavePage = undefined;
  setState({ page: "replay", gameId: log.gameId });
  root.replaceChildren();
  const game = GAMES.find((info) => info.kind === log.game);
  const last = log.entries.length;
  const configured = (log.config?.game.value as { players?: number } | undefined)?.players;
  const seatTotal = configured || (game ? game.players[0] : 0);
  let names: SeatNames = seatNames(game?.case, seatTotal, log.players);
  let current = last;
  // Where the board comes from: the server's copy of the game, the log replayed, or nowhere.
  let source: "server" | "log" | "none" = "server";

  const heading = html("h2", { id: "replay-heading" }, `Replay: ${game?.title ?? "game"} ${log.gameId}`);
  const check = html("div", { id: "seed-check", class: "card" });
  const slider = html("input", { type: "range", id: "replay-slider", min: 0, max: last, value: last });
  const buttons = ["« First", "‹ Previous", "Next ›", "Last »"].map((text) => html("button", { type: "button", class: "step" }, text));
  const position = html("span", { id: "replay-position" });
  const turn = html("div", { id: "turn", class: "turn" });
  const boardSlot = html("div", { id: "board", class: "board-slot" });
  const happened = html("div", { id: "replay-event", class: "card" });
  const fullLog = html("ol", { class: "log", id: "log" });
  root.append(
    heading,
    check,
    html("div", { class: "controls" }, buttons[0], buttons[1], slider, buttons[2], buttons[3], " ", position),
    turn,
    html("div", { class: "table" }, boardSlot, html("aside", { class: "side" }, happened, html("section", { class: "card" }, html("h3", {}, "Whole log"), fullLog))),
  );

  const entryLines = (version: number): LogLine[] => {
    if (version === 0) return logLines(0n, undefined, log.openingEvents, names);
    const entry = log.entries[version - 1];
    return logLines(entry.version, { seat: entry.seat, action: entry.action, system: entry.system } as LoggedAction, entry.events, names);
  };
  const renderLog = () => {
    fullLog.replaceChildren();
    for (let version = 0; version <= last; version++) {
      for (const line of entryLines(version)) {
        const item = html("li", { class: line.text.startsWith("  →") ? "event" : "action", "data-version": version }, html("span", { class: "v" }, `${line.version}`), ` ${line.text.trim()}`);
        item.addEventListener("click", () => void show(version));
        fullLog.append(item);
      }
    }
  };

  let request = 0;
  const show = async (version: number) => {
    current = Math.max(0, Math.min(last, version));
    slider.value = String(current);
    position.textContent = `version ${current} of ${last}`;
    happened.replaceChildren(
      html("h3", {}, current === 0 ? "Setup" : `What led to version ${current}`),
      ...entryLines(current).map((line) => html("p", { class: line.text.startsWith("  →") ? "event" : "action" }, line.text.trim())),
    );
    for (const item of fullLog.querySelectorAll("li")) item.classList.toggle("current", item.getAttribute("data-version") === String(current));
    const mine = ++request;
    if (source === "none") return;
    try {
      // From the server's copy of the game while it holds one; else the log itself is replayed
      // there (ReplayLog: checked as VerifyLog checks it, the spectator's view at the version).
      const answer =
        source === "server"
          ? await client.getView({ gameId: log.gameId, version: BigInt(current) })
          : await client.replayLog({ log, version: BigInt(current) });
      if (mine !== request) return;
      names = seatNames(game?.case, seatCount(answer.view), answer.players.length > 0 ? answer.players : log.players);
      turn.textContent = statusWords(answer.status, names, undefined);
      if (answer.view) boardSlot.replaceChildren(drawBoard(answer.view, { seats: names, toAct: answer.status?.toAct, legal: [], pick: () => undefined }) ?? "");
      setState({ version: String(current), finished: answer.status?.finished ? "1" : undefined, boardFrom: source });
    } catch (error) {
      if (mine !== request) return;
      const failure = ConnectError.from(error);
      if (source === "server" && failure.code === Code.NotFound) {
        // Not on this server (another replica's store, or a file): replay the log itself, which
        // needs its seed, revealed only once the game has ended.
        source = log.seed.length > 0 ? "log" : "none";
        if (source === "log") return show(current);
        boardSlot.replaceChildren(html("p", { class: "note" }, `This server does not hold game ${log.gameId}, and the log carries no seed (its game had not ended when it was exported), so the board cannot be drawn: the log is shown in words.`));
      } else {
        showError(`Could not show version ${current}. ${errorWords(error)}`);
      }
      setState({ version: String(current), boardFrom: source });
    }
  };
  buttons[0].addEventListener("click", () => void show(0));
  buttons[1].addEventListener("click", () => void show(current - 1));
  buttons[2].addEventListener("click", () => void show(current + 1));
  buttons[3].addEventListener("click", () => void show(last));
  slider.addEventListener("input", () => void show(Number(slider.value)));
  document.onkeydown = (event) => {
    if (document.body.dataset.page !== "replay") return;
    if (event.key === "ArrowLeft") void show(current - 1);
    if (event.key === "ArrowRight") void show(current + 1);
  };

  // The seed commitment and its check: the finished log reveals the seed; SHA-256(seed) must be
  // the commitment published at creation, and VerifyLog re-executes the whole log.
  const commitment = hex(log.seedCommitment);
  check.append(html("h3", {}, "Fair randomness"), html("p", {}, "Seed commitment (published at creation): ", html("code", {}, commitment)));
  if (log.complete && log.seed.length > 0) {
    void sha256(log.seed).then((digest) => {
      const matches = digest !== undefined && hex(digest) === commitment;
      check.append(
        html("p", {}, "Seed (revealed at the end): ", html("code", {}, hex(log.seed))),
        html(
          "p",
          { id: "seed-verdict", class: digest === undefined ? "" : matches ? "ok" : "bad" },
          digest === undefined ? "This browser cannot hash here (not a secure context): see the server's check below." : matches ? "✔ SHA-256 of the seed equals the commitment (checked in this browser)." : "✘ SHA-256 of the seed does NOT equal the commitment.",
        ),
      );
    });
    client
      .verifyLog({ log })
      .then((answer) => {
        check.append(
          html(
            "p",
            { id: "verify-verdict", class: answer.valid ? "ok" : "bad" },
            answer.valid
              ? `✔ The server re-executed all ${answer.verifiedVersion} moves from the seed: the log is valid.`
              : `✘ The log is invalid at version ${answer.invalidVersion ?? "?"}: ${answer.error}`,
          ),
        );
        setState({ verified: answer.valid ? "valid" : "invalid" });
      })
      .catch((error: unknown) => check.append(html("p", { class: "bad" }, `VerifyLog failed: ${errorWords(error)}`)));
  } else {
    check.append(html("p", {}, "The game has not ended: its seed stays secret until then, so it cannot be checked yet."));
  }
  const chainVerdict = html("p", { id: "chain-verdict" }, "Checking the signatures and the hash chain…");
  check.append(html("h3", {}, "Signed log"), chainVerdict);
  checkChain(log)
    .then((verdict) => {
      chainVerdict.textContent = verdict.words;
      chainVerdict.className = verdict.state === "valid" ? "ok" : verdict.state === "invalid" ? "bad" : "";
      setState({ chain: verdict.state });
    })
    .catch((error: unknown) => {
      chainVerdict.textContent = `The signatures could not be checked: ${errorWords(error)}`;
      setState({ chain: "error" });
    });
  const download = html("a", { id: "download-log", download: `tabula-${log.gameId}.json` }, "Download this log (JSON)");
  download.setAttribute("href", URL.createObjectURL(new Blob([toJsonString(GameLogSchema, log)], { type: "application/json" })));
  check.append(html("p", {}, download, " — open it later with “replay an exported log file”."));
  renderLog();
  void show(last);
}

// The game list comes from the server before any page is drawn.
void loadGames().finally(route);
