// Strozzi's seats in words, as the server's narration words them (src/narration/strozzi): the
// flags still in hand this round (spec A5), money in coins (hidden from the other seats under
// the hidden-money option: said so, never as none), and the progress tiles taken (spec A4) by
// category and value, with a value-1 tile's goods.

import { Category, Flag, Goods, type ProgressTile, type View } from "../../gen/tabula/strozzi/v1/strozzi_pb";
import { andList, count, enumName, HIDDEN, type PanelContext, type SeatPanel } from "./index";

/** The flags as the board and the narration name them. */
const FLAG_WORDS: Record<number, string> = { [Flag.PIRATE]: "pirate", [Flag.PLUS_ONE]: "+1", [Flag.GOODS]: "goods" };

/** "art 1 (gold)", "science 2". */
function tileWords(tile: ProgressTile): string {
  return `${enumName(Category, tile.category)} ${tile.value}${tile.goods ? ` (${enumName(Goods, tile.goods)})` : ""}`;
}

/** "2 tiles: art 1 (gold) and science 2", or "0 tiles". Each category's values count in the final
 * majorities (spec A12.1), so the tiles are listed, not summed across categories. */
function tilesWords(tiles: ProgressTile[]): string {
  if (tiles.length === 0) return count(0, "tile", "tiles");
  return `${count(tiles.length, "tile", "tiles")}: ${andList(tiles.map(tileWords))}`;
}

export function strozziPanels(view: View, _context: PanelContext): SeatPanel[] {
  return view.players.map((player) => ({
    seat: player.seat,
    rows: [
      ["Flags in hand", player.flags.length === 0 ? "none left this round" : andList(player.flags.map((flag) => FLAG_WORDS[flag] ?? "?"))],
      // Unset only when the game hides money from this viewer (Config.hidden_money).
      ["Money", player.money === undefined ? HIDDEN : count(player.money, "coin", "coins")],
      ["Progress tiles", tilesWords(player.tiles)],
    ],
  }));
}
