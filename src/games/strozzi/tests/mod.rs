//! Tests beside the engine, split by topic: the rulebook example (spec A14) step by step, each
//! rule and ruling of A5–A13 on a precisely arranged state, every option, the hidden-information
//! guarantees, rejected actions with the rule they cite, and seeded random play over every player
//! count. This module holds the shared fixtures: action builders and a test-only way to arrange
//! precise positions.

mod decision;
mod defaults;
mod examples;
mod hidden;
mod illegal;
mod random_play;
mod scoring;
mod setup;
mod ship;

use super::*;
use crate::games::common::random_play::{Checks, play};
use crate::games::common::testing::{apply_ok, encode};
use pb::action::Kind;
use pb::event::Kind as Ev;

fn config(players: u32) -> pb::Config {
    pb::Config {
        players,
        ..pb::Config::default()
    }
}

fn new_game(config: &pb::Config, seed: u64) -> Strozzi {
    Strozzi::setup(config, &Seed::from_u64(seed)).expect("valid config")
}

fn card_id(state: &Strozzi, label: &str) -> CardId {
    state
        .catalogue
        .cards
        .iter()
        .position(|c| c.label == label)
        .expect("known label") as CardId
}

/// A game with nothing revealed yet: the card revealed at setup goes back on the deck, the state
/// waits for the test to arrange it and call [`reveal`].
fn arranged(config: &pb::Config) -> Strozzi {
    let mut state = new_game(config, 1);
    if let Phase::Deciding(decision) = &state.phase {
        state.deck.push(decision.card);
    }
    state.phase = Phase::Finished;
    state
}

/// Takes `card` out of the deck or the removed pile (keeping the removed count), to place it.
fn take_card(state: &mut Strozzi, card: CardId) {
    if let Some(i) = state.deck.iter().position(|&c| c == card) {
        state.deck.remove(i);
    } else if let Some(i) = state.removed.iter().position(|&c| c == card) {
        state.removed.remove(i);
        let replacement = state.deck.remove(0);
        state.removed.push(replacement);
    }
}

/// Puts the cards with these labels on top of the deck, the first one on top.
fn stack_deck(state: &mut Strozzi, labels: &[&str]) {
    for label in labels.iter().rev() {
        let card = card_id(state, label);
        take_card(state, card);
        state.deck.push(card);
    }
}

/// Gives `seat` a ship already in `port`, taken with `flag` (the flag leaves its hand).
fn give_ship(state: &mut Strozzi, seat: Seat, port: City, flag: FlagKind, label: &str) {
    let card = card_id(state, label);
    take_card(state, card);
    state.players[seat as usize].flags.retain(|&f| f != flag);
    let speed = state.card(card).sails + u8::from(flag == FlagKind::PlusOne);
    let column = &mut state.ports[port.index()];
    let place = column.iter().take_while(|b| b.speed >= speed).count();
    column.insert(
        place,
        Berth {
            owner: seat,
            card,
            flag,
            speed,
            arrival: state.arrivals,
        },
    );
    state.arrivals += 1;
}

/// Puts `seat`'s marker on `position` of `city`, rightmost in that space.
fn put_marker(state: &mut Strozzi, seat: Seat, city: City, position: u8) {
    for space in &mut state.tracks[city.index()] {
        space.retain(|&s| s != seat);
    }
    state.tracks[city.index()][usize::from(position)].push(seat);
}

/// Makes `tiles` the face-up display (the rest stays in the stack, order unchanged).
fn set_display(state: &mut Strozzi, tiles: &[TileId]) {
    let mut all: Vec<TileId> = state.stack.iter().chain(&state.display).copied().collect();
    all.retain(|t| !tiles.contains(t));
    state.stack = all;
    state.display = tiles.to_vec();
}

/// The active player reveals the top card.
fn reveal(state: &mut Strozzi, active: Seat) -> Vec<pb::Event> {
    let mut events = Vec::new();
    state.next_turn(active, &mut events);
    state
        .check_invariants()
        .expect("arranged state is consistent");
    events
}

/// `seat` takes the action of `kind`, which must be legal; the invariants are checked after it.
#[track_caller]
fn act(state: &mut Strozzi, seat: Seat, kind: Kind) -> Vec<pb::Event> {
    apply_ok(state, seat, &pb::Action { kind: Some(kind) })
}

fn pass() -> Kind {
    Kind::PassCard(pb::PassCard {})
}

fn flag(flag: pb::Flag) -> Kind {
    Kind::PlayFlag(pb::PlayFlag { flag: flag as i32 })
}

fn place(port: pb::City) -> Kind {
    Kind::PlaceShip(pb::PlaceShip {
        port: port as i32,
        decline_goods_flag_step: false,
    })
}

fn take_tile(tile: TileId) -> Kind {
    Kind::TakeProgressTile(pb::TakeProgressTile {
        tile_id: u32::from(tile),
        decline_goods_step: false,
    })
}

/// `seat`'s action of `kind` is refused (illegal, malformed or out of turn) and changes nothing;
/// returns why.
#[track_caller]
fn rejected(state: &Strozzi, seat: Seat, kind: Kind) -> ActionError {
    let mut probe = state.clone();
    let error = probe
        .apply(seat, &pb::Action { kind: Some(kind) })
        .expect_err("must be rejected");
    assert_eq!(encode(&probe), encode(state), "rejection changed the state");
    error
}

fn rule_of(error: &ActionError) -> &'static str {
    match error {
        ActionError::Illegal { rule, .. } | ActionError::NotYourTurn { rule, .. } => rule,
        other => panic!("expected an illegal-move error, got {other:?}"),
    }
}

fn deciders(state: &Strozzi) -> Vec<Seat> {
    match &state.phase {
        Phase::Deciding(d) => d.deciders.clone(),
        other => panic!("not deciding: {other:?}"),
    }
}

fn moves(events: &[pb::Event]) -> Vec<(Seat, pb::City, pb::MoveCause, u32, u32, u32)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Ev::MarkerMoved(m)) => Some((
                m.seat,
                m.city(),
                m.cause(),
                m.steps,
                m.from_space,
                m.to_space,
            )),
            _ => None,
        })
        .collect()
}

fn revealed_by(events: &[pb::Event]) -> Option<Seat> {
    events.iter().find_map(|e| match &e.kind {
        Some(Ev::CardRevealed(r)) => Some(r.active_seat),
        _ => None,
    })
}

fn port_owners(state: &Strozzi, port: City) -> Vec<Seat> {
    state.ports[port.index()].iter().map(|b| b.owner).collect()
}

fn tile_where(state: &Strozzi, category: Category, value: u8, goods: Option<Goods>) -> TileId {
    state
        .catalogue
        .tiles
        .iter()
        .position(|t| t.category == category && t.value == value && t.goods == goods)
        .expect("such a tile exists") as TileId
}

/// Every option that changes what is hidden (`hidden_money`), with the other rule options on too.
fn every_option(players: u32) -> pb::Config {
    pb::Config {
        players,
        first_seat: 0,
        random_first_seat: true,
        hidden_money: true,
        track_layout: pb::TrackLayout::Numbered as i32,
        round_start_rule: pb::RoundStartRule::KeepWhileNobodyMoved as i32,
        rank_zero_progress_totals: true,
        bonus_payment: pb::BonusPayment::OnArrival as i32,
        goods_flag_needs_match: true,
        optional_extra_steps: true,
        pirate_chance_full_circle: true,
        tentative_overbid: true,
        next_active_rule: pb::NextActiveRule::LeftOfActive as i32,
    }
}

/// Every action a client could send in this game (all kinds, ids and switches).
fn every_conceivable_action() -> Vec<pb::Action> {
    let mut kinds = vec![pass()];
    for f in [pb::Flag::Pirate, pb::Flag::PlusOne, pb::Flag::Goods] {
        kinds.push(flag(f));
    }
    for port in [
        pb::City::Venice,
        pb::City::Rome,
        pb::City::Naples,
        pb::City::Florence,
    ] {
        for decline in [false, true] {
            kinds.push(Kind::PlaceShip(pb::PlaceShip {
                port: port as i32,
                decline_goods_flag_step: decline,
            }));
        }
    }
    for tile in 0..36 {
        for decline in [false, true] {
            kinds.push(Kind::TakeProgressTile(pb::TakeProgressTile {
                tile_id: tile,
                decline_goods_step: decline,
            }));
        }
    }
    kinds
        .into_iter()
        .map(|kind| pb::Action { kind: Some(kind) })
        .collect()
}
