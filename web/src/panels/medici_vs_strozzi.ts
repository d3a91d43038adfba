// Medici vs Strozzi's seats in words, as the server's narration words them
// (src/narration/medici_vs_strozzi.rs): money in florins, a debt said as one (loans are
// unlimited, spec B8), each ship by its capacity ("the 4-ship") with the harbour it sails to by
// the board's letter and its cargo as "dye 3". Nothing of a seat is hidden in this game (only
// the bag's order is, spec B9 M14).

import { Goods, type Ship, type Tile, type View } from "../../gen/tabula/medici_vs_strozzi/v1/medici_vs_strozzi_pb";
import { harbourName } from "../boards/medici_vs_strozzi";
import { andList, count, enumName, type PanelContext, type Row, type SeatPanel } from "./index";

/** "1 florin", "0 florins", "20 florins in debt". */
export function florins(money: bigint | number): string {
  const amount = BigInt(money);
  return amount < 0n ? `${count(-amount, "florin", "florins")} in debt` : count(amount, "florin", "florins");
}

function tileWords(tile: Tile): string {
  return `${enumName(Goods, tile.goods)} ${tile.value}`;
}

/** "in harbour B with dye 3 and fur 0: 2 of 4 tiles, value 3", or "empty, not yet in a harbour". */
function shipWords(ship: Ship): string {
  const where = ship.harbour === undefined ? "not yet in a harbour" : `in ${harbourName(ship.harbour)}`;
  if (ship.tiles.length === 0) return `empty, ${where}`;
  const value = ship.tiles.reduce((sum, tile) => sum + tile.value, 0);
  return `${where} with ${andList(ship.tiles.map(tileWords))}: ${ship.tiles.length} of ${count(ship.capacity, "tile", "tiles")}, value ${value}`;
}

export function mediciVsStrozziPanels(view: View, _context: PanelContext): SeatPanel[] {
  return view.players.map((player) => ({
    seat: player.seat,
    rows: [
      ["Money", florins(player.money)] as Row,
      ...player.ships.map((ship): Row => [`${ship.capacity}-ship`, shipWords(ship)]),
    ],
  }));
}
