// Each seat's panel: what the view shows about every player, in words, the viewer's own seat
// first and open (its private information: Manila's shares, Strozzi's hidden money, …; a
// spectator's view carries none of it, a seat's view only its own).
//
// Each game says its players' fields as a person would (one function per game, beside this
// file); the shell, the row type and the word helpers they share are here. A panel says every
// field of its game's PlayerView (a seat's `seat` is its heading); the game-wide fields of the
// View (rounds, phases, tracks, the board itself) are drawn on the board, not repeated here.

import type { View } from "../../gen/tabula/v1/tabula_pb";
import { html, seatColour } from "../svg";
import type { SeatNames } from "../words";
import { laStradaPanels } from "./la_strada";
import { manilaPanels } from "./manila";
import { mediciVsStrozziPanels } from "./medici_vs_strozzi";
import { strozziPanels } from "./strozzi";

/** One line of a seat's panel: what it is about and what it says. */
export type Row = [what: string, says: string];

/** One seat's panel: its seat and its lines (a line left out says nothing worth saying, such as
 * "declined" while it has not). */
export interface SeatPanel {
  seat: number;
  rows: (Row | undefined)[];
}

/** What the panels need besides the game's own view. */
export interface PanelContext {
  seats: SeatNames;
  /** The viewer's seat; undefined for a spectator (and in a replay). */
  mySeat?: number;
}

/** "1 tile", "0 tiles", "3 tiles". Zero is said as zero: a count is never left out. */
export function count(n: number | bigint, one: string, many: string): string {
  return `${n} ${n === 1 || n === 1n ? one : many}`;
}

/** "a", "a and b", "a, b and c". */
export function andList(items: string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** An enum value as the board prints it: Ware.GINSENG → "ginseng". */
export function enumName(names: Record<number, string>, value: number): string {
  return (names[value] ?? "?").toLowerCase().replace(/_/g, " ");
}

/** What a seat may not see of another's: never "none", which would say there is nothing. */
export const HIDDEN = "hidden";

function seatPanels(view: View, context: PanelContext): SeatPanel[] {
  switch (view.game.case) {
    case "mediciVsStrozzi":
      return mediciVsStrozziPanels(view.game.value, context);
    case "strozzi":
      return strozziPanels(view.game.value, context);
    case "manila":
      return manilaPanels(view.game.value, context);
    case "laStrada":
      return laStradaPanels(view.game.value, context);
    default:
      // A game this page has no words for (Nim, hosted only by test builds) has no panels: its
      // board, or its view shown as data, says everything.
      return [];
  }
}

export function privatePanel(view: View, mySeat: number | undefined, seats: SeatNames): HTMLElement {
  const panels = seatPanels(view, { seats, mySeat });
  const order = [...panels].sort((a, b) => Number(b.seat === mySeat) - Number(a.seat === mySeat));
  const box = html("div", { class: "players" }, html("h3", {}, mySeat === undefined ? "Players" : "Your seat and the others"));
  for (const { seat, rows } of order) {
    const lines = rows.filter((row): row is Row => row !== undefined).map(([what, says]) => html("tr", {}, html("th", {}, what), html("td", {}, says)));
    box.append(
      html(
        "details",
        { class: "player", open: seat === mySeat || mySeat === undefined ? "" : undefined, "data-seat": seat, style: `border-left-color:${seatColour(seat)}` },
        html("summary", {}, `${seats[seat] ?? `Seat ${seat}`}${seat === mySeat ? " (you)" : ""}`),
        html("table", {}, ...lines),
      ),
    );
  }
  return box;
}
