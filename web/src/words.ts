// Actions and events in words, for the log, the replay and the action controls.
//
// Every game's actions and events are messages with a `oneof kind`; their proto3 JSON form
// (`{"offerLot": {"price": 5}}`) already names what happened. `describe` turns such JSON into a
// sentence ("Offer lot: price 5"), naming seats by their seat names; a few common shapes (a seat
// field, enum values, hexes, tiles) read better in a special form. This works for every game
// without per-game code, so a new game or field is never shown as nothing.

import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { ActionSchema, EventSchema, type Action, type Event } from "../gen/tabula/v1/tabula_pb";

/** How seats are named in sentences (index = seat). */
export type SeatNames = string[];

/** "offerLot" → "offer lot"; "GOODS_DYE" → "dye" (the enum prefix is dropped by the caller). */
export function words(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/_/g, " ")
    .toLowerCase();
}

export function capitalized(text: string): string {
  return text.length > 0 ? text[0].toUpperCase() + text.slice(1) : text;
}

/** An enum value's JSON name without its type prefix: "GOODS_DYE" → "dye". */
export function enumWord(value: string): string {
  const parts = value.split("_");
  if (parts[parts.length - 1] === "UNSPECIFIED") return "none";
  // The longest known multi-word type prefix, else the first word (GOODS_, WARE_, PHASE_, …).
  for (let n = parts.length - 1; n >= 2; n--) {
    if (ENUM_PREFIXES.has(parts.slice(0, n).join("_"))) return parts.slice(n).join(" ").toLowerCase();
  }
  return (parts.length > 1 ? parts.slice(1) : parts).join(" ").toLowerCase();
}

/** Enum type prefixes longer than one word, so that their values read as their last words. */
const ENUM_PREFIXES = new Set([
  "SPACE_KIND",
  "PUNT_STATUS",
  "PLUNDER_DESTINATION",
  "MARKER_MOVEMENT",
  "ROUND_END_REASON",
  "END_REASON",
  "SETTLEMENT_KIND",
  "TIE_BREAK",
  "TRACK_LAYOUT",
  "ROUND_START_RULE",
  "BONUS_PAYMENT",
  "END_BUDGET",
  "WORKSHOP_SPACING",
  "TWO_PLAYER_FIRST_TURN",
  "GAME_ENDING",
  "TIMEOUT_POLICY",
  "GAME_KIND",
  "PAYOUT_REASON",
  "NEXT_ACTIVE_RULE",
  "MOVE_CAUSE",
  "PAYOUT_KIND",
]);

const SEAT_FIELDS = new Set([
  "seat",
  "buyer",
  "winner",
  "activeSeat",
  "startSeat",
  "opener",
  "seller",
  "captain",
  "owner",
]);
const SEAT_LIST_FIELDS = new Set(["winners", "merchants", "visitors", "crew", "deciders"]);

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value in words: hexes as (q, r), tiles as "dye 3", lists joined, objects as their fields. */
function valueWords(key: string, value: JsonValue, seats: SeatNames): string {
  if (SEAT_FIELDS.has(key) && typeof value === "number") return seats[value] ?? `seat ${value}`;
  if (SEAT_LIST_FIELDS.has(key) && Array.isArray(value)) {
    return value.map((seat) => (typeof seat === "number" ? (seats[seat] ?? `seat ${seat}`) : String(seat))).join(", ") || "nobody";
  }
  if (typeof value === "string") return /^[A-Z][A-Z0-9_]+$/.test(value) ? enumWord(value) : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === null) return "none";
  if (Array.isArray(value)) {
    if (value.length === 0) return "none";
    return value.map((item) => valueWords("", item, seats)).join(", ");
  }
  if ("q" in value || "r" in value) return `(${value.q ?? 0}, ${value.r ?? 0})`;
  // A goods tile; a value of 0 is left out of proto3 JSON.
  if ("goods" in value && Object.keys(value).length <= 2 && (Object.keys(value).length === 1 || "value" in value)) {
    return `${valueWords("", value.goods, seats)} ${value.value ?? 0}`;
  }
  return fieldsWords(value, seats);
}

/** `{seat: 1, price: 5}` → "Strozzi, price 5". */
function fieldsWords(fields: { [key: string]: JsonValue }, seats: SeatNames): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    // Implicit values are emitted (seat 0, harbour 0, a price of 0 all matter); an unset enum or an
    // empty list says nothing.
    if (typeof value === "string" && value.endsWith("_UNSPECIFIED")) continue;
    if (Array.isArray(value) && value.length === 0 && !SEAT_LIST_FIELDS.has(key)) continue;
    if (SEAT_FIELDS.has(key) && key === "seat") {
      parts.push(valueWords(key, value, seats));
    } else if (typeof value === "boolean") {
      if (value) parts.push(words(key));
    } else {
      parts.push(`${words(key)} ${valueWords(key, value, seats)}`);
    }
  }
  return parts.join(", ");
}

/** The sentence for one `oneof kind` message in JSON: its case's name and its fields. */
export function kindWords(json: JsonValue, seats: SeatNames): string {
  if (!isObject(json)) return String(json);
  const [name, body] = Object.entries(json)[0] ?? ["nothing", {}];
  const details = isObject(body) ? fieldsWords(body, seats) : valueWords(name, body, seats);
  return details ? `${capitalized(words(name))}: ${details}` : capitalized(words(name));
}

/** The game-level JSON of an Action or Event: its one set case, the game's own message. */
function gameCase(json: JsonValue): JsonValue {
  if (!isObject(json)) return json;
  const entries = Object.entries(json);
  if (entries.length === 0) return {};
  const [, inner] = entries[0];
  return inner;
}

export function actionWords(action: Action | undefined, seats: SeatNames): string {
  if (!action) return "(hidden)";
  return kindWords(gameCase(toJson(ActionSchema, action, { alwaysEmitImplicit: true })), seats);
}

export function eventWords(event: Event, seats: SeatNames): string {
  return kindWords(gameCase(toJson(EventSchema, event, { alwaysEmitImplicit: true })), seats);
}
