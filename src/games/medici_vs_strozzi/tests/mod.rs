//! Tests beside the engine, split by topic; this module holds the shared fixtures: action
//! builders and a test-only way to arrange precise positions.

mod defaults;
mod examples;
mod hidden;
mod illegal;
mod random_play;
mod scoring;
mod setup;
mod turn;

use super::scoring::move_marker;
use super::*;
use crate::games::common::random_play::{Checks, play};
use crate::games::common::testing::{apply_ok, assert_illegal, encode};
use pb::action::Kind;
use pb::event::Kind as Ev;

// ---------------------------------------------------------------------------------------------
// Helpers: actions, checked application, and a test-only way to set up precise positions.

fn act(kind: Kind) -> pb::Action {
    pb::Action { kind: Some(kind) }
}
fn draw() -> pb::Action {
    act(Kind::DrawTile(pb::DrawTile {}))
}
fn offer(price: u32) -> pb::Action {
    act(Kind::OfferLot(pb::OfferLot { price }))
}
fn buy() -> pb::Action {
    act(Kind::BuyLot(pb::BuyLot {}))
}
fn decline() -> pb::Action {
    act(Kind::DeclineLot(pb::DeclineLot {}))
}
fn load(ship: u32, harbour: Option<u32>) -> pb::Action {
    act(Kind::LoadLot(pb::LoadLot { ship, harbour }))
}
fn discard() -> pb::Action {
    act(Kind::DiscardLot(pb::DiscardLot {}))
}

fn game_with(config: &pb::Config) -> MediciVsStrozzi {
    MediciVsStrozzi::setup(config, &Seed::from_u64(7)).expect("valid config")
}
fn game() -> MediciVsStrozzi {
    game_with(&pb::Config::default())
}

fn tile(goods: Goods, value: u32) -> Tile {
    Tile::new(goods, value)
}

/// Takes one tile out of the bag (test set-up only; keeps the 26 tiles conserved).
fn take(g: &mut MediciVsStrozzi, wanted: Tile) -> Tile {
    let index = g
        .bag
        .iter()
        .position(|t| *t == wanted)
        .unwrap_or_else(|| panic!("{wanted:?} not in the bag"));
    g.bag.remove(index)
}

/// Puts tiles from the bag on `seat`'s ship of `capacity`, placed in `harbour`.
fn stow(g: &mut MediciVsStrozzi, seat: Seat, capacity: u32, harbour: u32, tiles: &[Tile]) {
    let taken: Vec<Tile> = tiles.iter().map(|&t| take(g, t)).collect();
    let ship = g.players[seat as usize]
        .ships
        .iter_mut()
        .find(|s| s.capacity == capacity)
        .expect("ship exists");
    ship.harbour = Some(harbour);
    ship.tiles.extend(taken);
}

/// Discards every bag tile except `keep` (which stay in the bag).
fn leave_in_bag(g: &mut MediciVsStrozzi, keep: &[Tile]) {
    let mut kept = Vec::new();
    for &t in keep {
        kept.push(take(g, t));
    }
    g.discarded.append(&mut g.bag);
    kept.sort();
    g.bag = kept;
}

/// Sets money through the ledger so the money invariant still holds.
fn set_money(g: &mut MediciVsStrozzi, seat: Seat, money: i64) {
    let p = &mut g.players[seat as usize];
    p.money = money;
    p.paid = (STARTING_MONEY - money).max(0);
    p.earned = (money - STARTING_MONEY).max(0);
}

/// The index of the track of `goods` in `harbour` in the provisional board.
fn track(g: &MediciVsStrozzi, harbour: u32, goods: Goods) -> usize {
    g.board
        .tracks
        .iter()
        .position(|t| t.harbour == harbour && t.goods == goods)
        .expect("track exists in the provisional board")
}

fn only_round_scored(events: &[pb::Event]) -> pb::RoundScored {
    let scored: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Ev::RoundScored(r)) => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(scored.len(), 1, "exactly one RoundScored in {events:?}");
    scored[0].clone()
}

fn exact(legal: &[LegalAction<pb::Action>]) -> Vec<pb::Action> {
    legal
        .iter()
        .filter_map(|l| match l {
            LegalAction::Exact(a) => Some(*a),
            LegalAction::Amount { .. } => None,
        })
        .collect()
}

/// Ends the round with the single tile left in the bag: `drawer` draws it, offers it for 0, the
/// opponent buys it and discards it.
fn end_round_with_last_tile(g: &mut MediciVsStrozzi) -> Vec<pb::Event> {
    assert_eq!(g.bag.len(), 1);
    let drawer = g.active;
    apply_ok(g, drawer, &draw());
    apply_ok(g, drawer, &offer(0));
    apply_ok(g, opponent(drawer), &buy());
    apply_ok(g, opponent(drawer), &discard())
}
