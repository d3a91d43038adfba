// La Strada's seats in words, as the server's narration words them (src/narration/la_strada.rs):
// resources on their track of 10 (spec §4), road tiles left by terrain with a unit (spec §1),
// merchants left, workshops, the places a road may start from (spec §5), and gold (spec §8).
// Nothing of a seat is hidden in this game.

import { EndReason, type View } from "../../gen/tabula/la_strada/v1/la_strada_pb";
import { count, type PanelContext, type SeatPanel } from "./index";

export function laStradaPanels(view: View, _context: PanelContext): SeatPanel[] {
  const over = view.endReason !== EndReason.UNSPECIFIED;
  return view.players.map((player) => {
    const supply = player.supply;
    return {
      seat: player.seat,
      rows: [
        // Cosmetic (spec §10 "Player sides"), but it is where the player sits at the table.
        player.side ? ["Sits at", `the ${player.side} side`] : undefined,
        ["Resources", `${player.resources} of 10`],
        ["Road tiles left", `${count(supply?.plains ?? 0, "plains tile", "plains tiles")}, ${count(supply?.forest ?? 0, "forest tile", "forest tiles")}, ${count(supply?.hill ?? 0, "hill tile", "hill tiles")}`],
        ["Merchants left", String(player.merchantsLeft)],
        // Where they stand is on the board; the panel counts them.
        ["Workshops", String(player.workshops.length)],
        ["Roads may start from", count(player.hubs.length, "place", "places")],
        [over ? "Final gold" : "Gold if the game ended now", count(player.gold, "gold", "gold")],
      ],
    };
  });
}
