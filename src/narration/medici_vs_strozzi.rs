//! Medici vs Strozzi's words, in the board's names: the seats are Medici (seat 0) and Strozzi
//! (seat 1); harbours are lettered A, B and C; each player's ships are named by their capacity
//! (the 3-ship, the 4-ship and the 5-ship); a tile reads as its goods and value ("dye 3",
//! "gold 5"); money is in florins; a marker stands in the centre of its track or on a numbered
//! space on one player's side.
//!
//! Nothing in this game is hidden but the order of the bag (spec B9 M14), so events arrive
//! unredacted; a tile that is missing or of unknown goods is still said to be face down, never
//! read as nothing.

use super::{Names, Narrate, and_list, count};
use crate::games::Seat;
use crate::games::medici_vs_strozzi::{self, MEDICI, MediciVsStrozzi, ROUNDS, STROZZI};
use crate::proto::medici_vs_strozzi::v1 as pb;
use pb::action::Kind as Act;
use pb::event::Kind as Ev;

impl Narrate for MediciVsStrozzi {
    fn seat_name(seat: Seat) -> Option<&'static str> {
        match seat {
            MEDICI => Some("Medici"),
            STROZZI => Some("Strozzi"),
            _ => None,
        }
    }

    fn event_text(event: &pb::Event, names: &Names) -> Option<String> {
        Some(match event.kind.as_ref()? {
            Ev::TileDrawn(drawn) => format!(
                "{} draws {} from the bag.",
                names.seat(drawn.seat),
                tile_words(drawn.tile.as_ref())
            ),
            Ev::LotOffered(offer) => format!(
                "{} offers the lot to {} for {}.",
                names.seat(offer.seat),
                names.seat(opponent(offer.seat)),
                florins(offer.price)
            ),
            Ev::LotSold(sold) if sold.declined => format!(
                "{} declines the lot, so {} must buy it and pays {}.",
                names.seat(opponent(sold.buyer)),
                names.seat(sold.buyer),
                florins(sold.price)
            ),
            Ev::LotSold(sold) => format!(
                "{} buys the lot for {}.",
                names.seat(sold.buyer),
                florins(sold.price)
            ),
            Ev::LotLoaded(loaded) if loaded.placed => format!(
                "{} places their empty {} in {} and loads the lot onto it: {}.",
                names.seat(loaded.seat),
                ship_name(loaded.ship),
                harbour_name(loaded.harbour),
                tiles_words(&loaded.tiles)
            ),
            Ev::LotLoaded(loaded) => format!(
                "{} loads the lot onto their {} in {}: {}.",
                names.seat(loaded.seat),
                ship_name(loaded.ship),
                harbour_name(loaded.harbour),
                tiles_words(&loaded.tiles)
            ),
            Ev::LotDiscarded(discarded) => format!(
                "{} discards the lot ({}): it is out of play until the round ends.",
                names.seat(discarded.seat),
                tiles_words(&discarded.tiles)
            ),
            Ev::RoundScored(scored) => round_scored(scored, names),
            Ev::RoundStarted(started) if started.round <= 1 => format!(
                "Round {} of {ROUNDS} begins: {} draws first.",
                started.round,
                names.seat(started.start_seat)
            ),
            Ev::RoundStarted(started) => format!(
                "Round {} of {ROUNDS} begins: every tile is back in the bag, the ships are empty \
                 and may sail to any harbour, the markers stay where they are, and {} draws first.",
                started.round,
                names.seat(started.start_seat)
            ),
            Ev::GameEnded(ended) => game_ended(ended, names),
        })
    }

    fn choice_label(action: &pb::Action, view: &pb::View, names: &Names) -> String {
        let Some(kind) = action.kind.as_ref() else {
            return "Make no move".into();
        };
        match kind {
            Act::DrawTile(_) => "Draw a tile from the bag".into(),
            // The price is the amount the client asks for.
            Act::OfferLot(_) => "Offer the lot".into(),
            Act::BuyLot(_) => match view.price {
                Some(price) => format!("Buy the lot for {}", florins(price)),
                None => "Buy the lot".into(),
            },
            Act::DeclineLot(_) => match view.price {
                Some(price) => format!(
                    "Decline, so {} must buy it for {}",
                    names.seat(view.active_seat),
                    florins(price)
                ),
                None => format!("Decline, so {} must buy it", names.seat(view.active_seat)),
            },
            Act::LoadLot(load) => load_label(load, view),
            Act::DiscardLot(_) => "Discard the lot".into(),
        }
    }
}

/// The other seat of the two.
fn opponent(seat: Seat) -> Seat {
    if seat == MEDICI { STROZZI } else { MEDICI }
}

/// An amount of money: "1 florin", "0 florins", "7 florins".
fn florins(amount: impl Into<i64>) -> String {
    match amount.into() {
        1 => "1 florin".into(),
        n => format!("{n} florins"),
    }
}

/// A player's money, which may be a debt (loans are unlimited, spec B8).
fn balance(money: i64) -> String {
    if money < 0 {
        format!("{} in debt", florins(money.saturating_neg()))
    } else {
        florins(money)
    }
}

/// The board data's name for a harbour ("harbour A"), as the refusals and the board give it; a
/// number the board does not have is said as it came.
fn harbour_name(harbour: u32) -> String {
    match medici_vs_strozzi::harbour_name(harbour) {
        Some(name) => format!("harbour {name}"),
        None => format!("harbour {harbour}"),
    }
}

/// The board's name for a ship: by its capacity, "the 4-ship".
fn ship_name(capacity: u32) -> String {
    format!("{capacity}-ship")
}

/// The goods as the board prints them; `None` for goods the event does not tell.
fn goods_name(goods: i32) -> Option<&'static str> {
    match pb::Goods::try_from(goods).ok()? {
        pb::Goods::Dye => Some("dye"),
        pb::Goods::Fur => Some("fur"),
        pb::Goods::Spice => Some("spice"),
        pb::Goods::Cloth => Some("cloth"),
        pb::Goods::Gold => Some("gold"),
        pb::Goods::Unspecified => None,
    }
}

/// A tile as the board shows it ("dye 3"), or "a face-down tile" when the event hides it.
fn tile_words(tile: Option<&pb::Tile>) -> String {
    match tile.and_then(|tile| Some((goods_name(tile.goods)?, tile.value))) {
        Some((goods, value)) => format!("{goods} {value}"),
        None => "a face-down tile".into(),
    }
}

/// The tiles of a lot: "dye 3, fur 0 and gold 5".
fn tiles_words(tiles: &[pb::Tile]) -> String {
    if tiles.is_empty() {
        return "no tiles".into();
    }
    let words: Vec<String> = tiles.iter().map(|tile| tile_words(Some(tile))).collect();
    and_list(&words)
}

/// Where a marker stands: "the centre", "space 2 on Medici's side".
fn marker_place(position: i32, names: &Names) -> String {
    let side = match position.signum() {
        0 => return "the centre".into(),
        -1 => MEDICI,
        _ => STROZZI,
    };
    format!(
        "space {} on {}'s side",
        position.unsigned_abs(),
        names.seat(side)
    )
}

/// The summary of a round's scoring (spec B7): why it ended, who won each harbour and why, how
/// the markers moved, what the monopolies paid, and everyone's money after.
fn round_scored(scored: &pb::RoundScored, names: &Names) -> String {
    let mut sentences = Vec::new();
    sentences.push(match pb::RoundEndReason::try_from(scored.reason) {
        Ok(pb::RoundEndReason::ShipsFull) => format!(
            "Round {} ends because a player's three ships are all full, and it is scored.",
            scored.round
        ),
        Ok(pb::RoundEndReason::BagEmpty) => format!(
            "Round {} ends because the bag is empty, and it is scored.",
            scored.round
        ),
        _ => format!("Round {} ends and is scored.", scored.round),
    });

    // 1. Cargo value per harbour: the higher total earns the payout, a tie pays nobody.
    for harbour in &scored.harbours {
        let value = |seat: Seat| harbour.cargo_value.get(seat as usize).copied().unwrap_or(0);
        let (medici, strozzi) = (value(MEDICI), value(STROZZI));
        let place = harbour_name(harbour.harbour);
        sentences.push(match harbour.winner {
            Some(winner) => format!(
                "In {place}, {}'s cargo is worth {medici} and {}'s {strozzi}: {} earns {}.",
                names.seat(MEDICI),
                names.seat(STROZZI),
                names.seat(winner),
                florins(harbour.payout)
            ),
            None => format!(
                "In {place}, both cargoes are worth {medici}: a tie, so nobody earns anything \
                 there."
            ),
        });
    }

    // 2. Markers pushed by the goods in their harbour.
    if scored.markers.is_empty() {
        sentences.push("No marker moves.".into());
    }
    for moved in &scored.markers {
        let goods = goods_name(moved.goods).unwrap_or("hidden goods");
        sentences.push(format!(
            "The {goods} marker in {} moves from {} to {}.",
            harbour_name(moved.harbour),
            marker_place(moved.from_position, names),
            marker_place(moved.to_position, names)
        ));
    }

    // 3. Monopoly income: 10 per marker on a player's side, plus the bonus spaces.
    for income in &scored.income {
        let name = names.seat(income.seat);
        sentences.push(if income.markers == 0 {
            format!(
                "{name} has no marker on their side and earns {} from monopolies.",
                florins(income.total)
            )
        } else if income.bonus == 0 {
            format!(
                "{name} earns {} for {} on their side.",
                florins(income.total),
                count(income.markers, "marker", "markers")
            )
        } else {
            format!(
                "{name} earns {} for {} on their side, {} of it from bonus spaces.",
                florins(income.total),
                count(income.markers, "marker", "markers"),
                florins(income.bonus)
            )
        });
    }

    if !scored.money.is_empty() {
        sentences.push(format!("Money now: {}.", money_list(&scored.money, names)));
    }
    sentences.join(" ")
}

/// Each seat's money: "Medici 340 florins and Strozzi 20 florins in debt".
fn money_list(money: &[i64], names: &Names) -> String {
    let items: Vec<String> = money
        .iter()
        .zip(0..)
        .map(|(&money, seat)| format!("{} {}", names.seat(seat), balance(money)))
        .collect();
    and_list(&items)
}

/// The end of the game (spec B8): everyone's money and who wins; a tie shares the victory.
fn game_ended(ended: &pb::GameEnded, names: &Names) -> String {
    let verdict = match ended.winners.as_slice() {
        [] => "nobody wins".to_owned(),
        [winner] => format!("{} wins", names.seat(*winner)),
        winners => format!("{} share the victory", names.list(winners)),
    };
    if ended.money.is_empty() {
        return format!("The game is over after round {ROUNDS}: {verdict}.");
    }
    format!(
        "The game is over after round {ROUNDS}, with {}: {verdict}.",
        money_list(&ended.money, names)
    )
}

/// The button for loading the lot onto one of the buyer's ships: placing an empty ship names
/// the harbour it sails to; a ship already in a harbour stays there.
fn load_label(load: &pb::LoadLot, view: &pb::View) -> String {
    let ship = ship_name(load.ship);
    let buyer = view.buyer.unwrap_or(view.active_seat);
    let docked_at = view
        .players
        .iter()
        .find(|player| player.seat == buyer)
        .and_then(|player| player.ships.iter().find(|s| s.capacity == load.ship))
        .and_then(|s| s.harbour);
    match (docked_at, load.harbour) {
        (None, Some(harbour)) => format!(
            "Place your empty {ship} in {} and load the lot onto it",
            harbour_name(harbour)
        ),
        (None, None) => format!("Load the lot onto your empty {ship}"),
        // The engine lists a docked ship's loading with its own harbour; without it (an older
        // spelling it still accepts) it is the same move, in the same words.
        (Some(at), None) => format!("Load the lot onto your {ship} in {}", harbour_name(at)),
        (Some(at), Some(asked)) if asked == at => {
            format!("Load the lot onto your {ship} in {}", harbour_name(at))
        }
        (Some(at), Some(asked)) => format!(
            "Load the lot onto your {ship} in {}, sending it to {}",
            harbour_name(at),
            harbour_name(asked)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Engine, LegalAction, Seed, Viewer};

    fn names() -> Names {
        Names::new(2, &[], MediciVsStrozzi::seat_name)
    }

    fn text(kind: Ev) -> String {
        MediciVsStrozzi::event_text(&pb::Event { kind: Some(kind) }, &names()).expect("a line")
    }

    fn tile(goods: pb::Goods, value: u32) -> pb::Tile {
        pb::Tile {
            goods: goods as i32,
            value,
        }
    }

    #[test]
    fn the_seats_are_medici_and_strozzi() {
        assert_eq!(MediciVsStrozzi::seat_name(0), Some("Medici"));
        assert_eq!(MediciVsStrozzi::seat_name(1), Some("Strozzi"));
        assert_eq!(MediciVsStrozzi::seat_name(2), None);
    }

    /// Harbours are named from the board data, as the engine's refusals name them
    /// (`Board::harbour_label`), not by a letter counted from the number.
    #[test]
    fn harbours_take_the_board_datas_names() {
        let loaded_in = |harbour| {
            text(Ev::LotLoaded(pb::LotLoaded {
                seat: 0,
                ship: 3,
                harbour,
                placed: false,
                tiles: vec![tile(pb::Goods::Fur, 0)],
            }))
        };
        for harbour in 0..3 {
            let name = medici_vs_strozzi::harbour_name(harbour).expect("a harbour of the board");
            let said = loaded_in(harbour);
            assert!(said.contains(&format!("in harbour {name}:")), "{said}");
        }
        assert!(medici_vs_strozzi::harbour_name(3).is_none());
        assert!(loaded_in(7).contains("in harbour 7:"));
    }

    #[test]
    fn a_turn_reads_in_board_names() {
        assert_eq!(
            text(Ev::TileDrawn(pb::TileDrawn {
                seat: 0,
                tile: Some(tile(pb::Goods::Fur, 0)),
            })),
            "Medici draws fur 0 from the bag."
        );
        assert_eq!(
            text(Ev::LotOffered(pb::LotOffered { seat: 0, price: 0 })),
            "Medici offers the lot to Strozzi for 0 florins."
        );
        assert_eq!(
            text(Ev::LotSold(pb::LotSold {
                buyer: 0,
                price: 7,
                declined: true,
            })),
            "Strozzi declines the lot, so Medici must buy it and pays 7 florins."
        );
        assert_eq!(
            text(Ev::LotSold(pb::LotSold {
                buyer: 1,
                price: 1,
                declined: false,
            })),
            "Strozzi buys the lot for 1 florin."
        );
        assert_eq!(
            text(Ev::LotLoaded(pb::LotLoaded {
                seat: 1,
                ship: 4,
                harbour: 1,
                placed: true,
                tiles: vec![tile(pb::Goods::Dye, 3), tile(pb::Goods::Gold, 5)],
            })),
            "Strozzi places their empty 4-ship in harbour B and loads the lot onto it: dye 3 and \
             gold 5."
        );
        assert_eq!(
            text(Ev::LotLoaded(pb::LotLoaded {
                seat: 0,
                ship: 5,
                harbour: 2,
                placed: false,
                tiles: vec![tile(pb::Goods::Cloth, 4)],
            })),
            "Medici loads the lot onto their 5-ship in harbour C: cloth 4."
        );
        assert_eq!(
            text(Ev::LotDiscarded(pb::LotDiscarded {
                seat: 1,
                tiles: vec![
                    tile(pb::Goods::Spice, 2),
                    tile(pb::Goods::Fur, 1),
                    tile(pb::Goods::Dye, 0)
                ],
            })),
            "Strozzi discards the lot (spice 2, fur 1 and dye 0): it is out of play until the \
             round ends."
        );
        assert_eq!(
            text(Ev::RoundStarted(pb::RoundStarted {
                round: 2,
                start_seat: 1,
            })),
            "Round 2 of 3 begins: every tile is back in the bag, the ships are empty and may sail \
             to any harbour, the markers stay where they are, and Strozzi draws first."
        );
    }

    #[test]
    fn a_hidden_tile_is_face_down_not_nothing() {
        assert_eq!(
            text(Ev::TileDrawn(pb::TileDrawn {
                seat: 1,
                tile: None
            })),
            "Strozzi draws a face-down tile from the bag."
        );
        assert_eq!(
            text(Ev::LotLoaded(pb::LotLoaded {
                seat: 0,
                ship: 3,
                harbour: 0,
                placed: false,
                tiles: vec![tile(pb::Goods::Unspecified, 0), tile(pb::Goods::Dye, 2)],
            })),
            "Medici loads the lot onto their 3-ship in harbour A: a face-down tile and dye 2."
        );
    }

    #[test]
    fn a_round_is_summed_up() {
        let scored = pb::RoundScored {
            round: 2,
            reason: pb::RoundEndReason::BagEmpty as i32,
            harbours: vec![
                pb::HarbourScored {
                    harbour: 0,
                    cargo_value: vec![5, 9],
                    winner: Some(1),
                    payout: 20,
                },
                pb::HarbourScored {
                    harbour: 1,
                    cargo_value: vec![4, 4],
                    winner: None,
                    payout: 0,
                },
                pb::HarbourScored {
                    harbour: 2,
                    cargo_value: vec![6, 0],
                    winner: Some(0),
                    payout: 20,
                },
            ],
            markers: vec![
                pb::MarkerMoved {
                    harbour: 0,
                    goods: pb::Goods::Dye as i32,
                    from_position: 0,
                    to_position: 2,
                },
                pb::MarkerMoved {
                    harbour: 2,
                    goods: pb::Goods::Spice as i32,
                    from_position: -3,
                    to_position: -5,
                },
            ],
            income: vec![
                pb::MonopolyIncome {
                    seat: 0,
                    markers: 1,
                    bonus: 20,
                    total: 30,
                },
                pb::MonopolyIncome {
                    seat: 1,
                    markers: 0,
                    bonus: 0,
                    total: 0,
                },
            ],
            money: vec![350, -12],
        };
        assert_eq!(
            text(Ev::RoundScored(scored)),
            "Round 2 ends because the bag is empty, and it is scored. \
             In harbour A, Medici's cargo is worth 5 and Strozzi's 9: Strozzi earns 20 florins. \
             In harbour B, both cargoes are worth 4: a tie, so nobody earns anything there. \
             In harbour C, Medici's cargo is worth 6 and Strozzi's 0: Medici earns 20 florins. \
             The dye marker in harbour A moves from the centre to space 2 on Strozzi's side. \
             The spice marker in harbour C moves from space 3 on Medici's side to space 5 on \
             Medici's side. \
             Medici earns 30 florins for 1 marker on their side, 20 florins of it from bonus \
             spaces. \
             Strozzi has no marker on their side and earns 0 florins from monopolies. \
             Money now: Medici 350 florins and Strozzi 12 florins in debt."
        );
    }

    #[test]
    fn the_end_of_the_game_names_the_winner_or_a_shared_victory() {
        assert_eq!(
            text(Ev::GameEnded(pb::GameEnded {
                money: vec![420, 380],
                winners: vec![0],
            })),
            "The game is over after round 3, with Medici 420 florins and Strozzi 380 florins: \
             Medici wins."
        );
        assert_eq!(
            text(Ev::GameEnded(pb::GameEnded {
                money: vec![400, 400],
                winners: vec![0, 1],
            })),
            "The game is over after round 3, with Medici 400 florins and Strozzi 400 florins: \
             Medici and Strozzi share the victory."
        );
    }

    /// The labels of `seat`'s legal moves in `game`, from its own view.
    fn labels(game: &MediciVsStrozzi, seat: Seat) -> Vec<String> {
        let view = game.view(Viewer::Seat(seat));
        game.legal_actions(seat)
            .iter()
            .map(|legal| match legal {
                LegalAction::Exact(action) | LegalAction::Amount { action, .. } => {
                    MediciVsStrozzi::choice_label(action, &view, &names())
                }
            })
            .collect()
    }

    fn act(kind: Act) -> pb::Action {
        pb::Action { kind: Some(kind) }
    }

    #[test]
    fn buttons_say_prices_ships_and_harbours() {
        let mut game =
            MediciVsStrozzi::setup(&pb::Config::default(), &Seed::from_u64(1)).expect("a game");
        game.apply(MEDICI, &act(Act::DrawTile(pb::DrawTile {})))
            .expect("draw");
        assert_eq!(
            labels(&game, MEDICI),
            ["Draw a tile from the bag", "Offer the lot"]
        );
        game.apply(MEDICI, &act(Act::OfferLot(pb::OfferLot { price: 7 })))
            .expect("offer");
        assert_eq!(
            labels(&game, STROZZI),
            [
                "Buy the lot for 7 florins",
                "Decline, so Medici must buy it for 7 florins"
            ]
        );
        game.apply(STROZZI, &act(Act::BuyLot(pb::BuyLot {})))
            .expect("buy");
        let placing = labels(&game, STROZZI);
        assert!(
            placing.contains(
                &"Place your empty 5-ship in harbour B and load the lot onto it".to_owned()
            )
        );
        assert_eq!(placing.last().map(String::as_str), Some("Discard the lot"));
        game.apply(
            STROZZI,
            &act(Act::LoadLot(pb::LoadLot {
                ship: 5,
                harbour: Some(1),
            })),
        )
        .expect("load");

        // Strozzi draws next; Medici declines, so Strozzi loads its own lot.
        game.apply(STROZZI, &act(Act::DrawTile(pb::DrawTile {})))
            .expect("draw");
        game.apply(STROZZI, &act(Act::OfferLot(pb::OfferLot { price: 3 })))
            .expect("offer");
        game.apply(MEDICI, &act(Act::DeclineLot(pb::DeclineLot {})))
            .expect("decline");
        let loading = labels(&game, STROZZI);
        // The docked 5-ship is listed once, with its harbour: one button for one move.
        assert_eq!(
            loading
                .iter()
                .filter(|label| label.contains("5-ship"))
                .collect::<Vec<_>>(),
            ["Load the lot onto your 5-ship in harbour B"]
        );
        assert!(
            loading.contains(
                &"Place your empty 3-ship in harbour C and load the lot onto it".to_owned()
            )
        );
        assert!(
            !loading
                .iter()
                .any(|label| label.contains("5-ship in harbour A"))
        );
        let distinct: std::collections::HashSet<&String> = loading.iter().collect();
        assert_eq!(distinct.len(), loading.len());
    }
}
