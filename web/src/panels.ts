// Each seat's panel: what the view shows about every player, the viewer's own seat first and in
// full (its private information: Manila's shares, Strozzi's hidden money, …; a spectator's view
// carries none of it, a seat's view only its own).

import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { ViewSchema, type View } from "../gen/tabula/v1/tabula_pb";
import { html, seatColour } from "./svg";
import { capitalized, enumWord, words, type SeatNames } from "./words";

function valueText(value: JsonValue): string {
  if (value === null) return "–";
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.map(valueText).join(", ");
  if (typeof value === "object") {
    if ("q" in value || "r" in value) return `(${value.q ?? 0}, ${value.r ?? 0})`;
    if ("goods" in value && "value" in value) return `${valueText(value.goods)} ${valueText(value.value)}`;
    if ("ware" in value && "count" in value) return `${valueText(value.ware)} ×${valueText(value.count)}`;
    return Object.entries(value)
      .map(([key, inner]) => `${words(key)} ${valueText(inner)}`)
      .join(", ");
  }
  if (typeof value === "string" && /^[A-Z][A-Z0-9_]+$/.test(value)) return enumWord(value);
  return String(value);
}

export function privatePanel(view: View, mySeat: number | undefined, seats: SeatNames): HTMLElement {
  const json = toJson(ViewSchema, view, { alwaysEmitImplicit: true }) as { [game: string]: { players?: JsonValue[] } };
  const gameView = Object.values(json)[0];
  const players = (gameView?.players ?? []) as { [key: string]: JsonValue }[];
  const order = [...players.keys()].sort((a, b) => Number(b === mySeat) - Number(a === mySeat));
  const box = html("div", { class: "players" }, html("h3", {}, mySeat === undefined ? "Players" : "Your seat and the others"));
  for (const index of order) {
    const player = players[index];
    const seat = typeof player.seat === "number" ? player.seat : index;
    const rows = Object.entries(player)
      .filter(([key]) => key !== "seat")
      .map(([key, value]) => html("tr", {}, html("th", {}, capitalized(words(key))), html("td", {}, valueText(value))));
    box.append(
      html(
        "details",
        { class: "player", open: seat === mySeat || mySeat === undefined ? "" : undefined, "data-seat": seat, style: `border-left-color:${seatColour(seat)}` },
        html("summary", {}, `${seats[seat] ?? `Seat ${seat}`}${seat === mySeat ? " (you)" : ""}`),
        html("table", {}, ...rows),
      ),
    );
  }
  return box;
}
