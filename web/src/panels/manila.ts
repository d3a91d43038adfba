// Manila's seats in words, as the server's narration words them (src/narration/manila): cash in
// pesos; accomplices in hand of those owned (spec §3.2); shares counted, with their wares where
// this viewer may see them and "hidden" where not (each seat's shares are its own secret, spec §7:
// only the count and the shares bought openly as harbour master are public); what the seat can
// pay at most now, mortgaging (spec §5); and whether it stopped placing this voyage (spec §4.3),
// said only once it has.

import { Ware, type View, type WareCount } from "../../gen/tabula/manila/v1/manila_pb";
import { andList, count, enumName, HIDDEN, type PanelContext, type SeatPanel } from "./index";

/** "1 peso", "0 pesos", "12 pesos". */
export function pesos(amount: bigint | number): string {
  return count(BigInt(amount), "peso", "pesos");
}

/** "2 silk and 1 jade". */
function waresWords(counts: WareCount[]): string {
  return andList(counts.filter((entry) => entry.count > 0).map((entry) => `${entry.count} ${enumName(Ware, entry.ware)}`));
}

export function manilaPanels(view: View, context: PanelContext): SeatPanel[] {
  return view.players.map((player) => {
    // The wares are in the view only for the seat's own player (and for nobody else, even once
    // the game has ended); a count above zero without them is another seat's secret.
    const seen = player.seat === context.mySeat || player.shares.length > 0;
    const shares =
      player.shareCount === 0
        ? count(0, "share", "shares")
        : `${count(player.shareCount, "share", "shares")}: ${seen ? waresWords(player.shares) : `wares ${HIDDEN}`}`;
    const mortgaged =
      player.mortgagedCount === 0
        ? count(0, "share", "shares")
        : `${count(player.mortgagedCount, "share", "shares")}: ${seen && player.mortgaged.length > 0 ? waresWords(player.mortgaged) : `wares ${HIDDEN}`}`;
    const bought =
      player.bought.length === 0 ? count(0, "share", "shares") : `${count(player.bought.length, "share", "shares")}: ${andList(player.bought.map((ware) => enumName(Ware, ware)))}`;
    return {
      seat: player.seat,
      rows: [
        ["Cash", pesos(player.cash)],
        ["Accomplices", `${player.accomplicesInHand} of ${player.accomplicesTotal} in hand`],
        ["Shares", shares],
        ["Mortgaged", mortgaged],
        ["Bought openly", bought],
        ["Can pay", `up to ${pesos(player.capacity)}, counting the shares it may mortgage`],
        // Said once it has declined; while it has not, there is nothing to say.
        player.declined ? ["This voyage", "Declined to place more accomplices"] : undefined,
      ],
    };
  });
}
