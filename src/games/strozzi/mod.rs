//! Strozzi (Knizia, 2008) for 3 to 6 players. Spec: `strozzi.md` part A; the project's rules
//! document is `docs/rules/strozzi.md`.
//!
//! Where each rule lives (the same layout in every game folder):
//! - `mod.rs` (here): the state, the create-time options, setup (§A6) and the [`Engine`]
//!   implementation, which delegates;
//! - `rules/`: the rules of play by spec section — what the seat to act may do and its validation
//!   (`rules/mod.rs`), the decision pass (`decision.rs`, §A5, A7), resolving a claim and moving
//!   markers (`ship.rs`, §A8), the round loop (`round.rs`, §A6.4, A9, A11);
//! - `scoring.rs`: round-end scoring and the final progress majorities and winner (§A10, A12);
//! - `view.rs`: what each viewer sees, and event redaction (§A13 S16);
//! - `wire.rs`: protobuf conversions (`to_pb` / `from_pb`) and the event builders;
//! - `invariants.rs`: the spec's invariants (§A14), checked after every action in tests;
//! - `data.rs` + `ships.json`, `progress_tiles.json`, `tracks.json`: the PROVISIONAL component
//!   data, bundled with `include_str!` and parsed and validated once;
//! - `tests/`: the rulebook example, each rule and option, illegal actions, hidden information
//!   and random play.

mod data;
mod invariants;
mod rules;
mod scoring;
mod view;
mod wire;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::games::common::{GameRng, clockwise_from};
use crate::games::{
    ActionError, Chance, ConfigError, Engine, GameType, Information, LegalAction, Outcome,
    Redaction, Seat, Seed, Viewer,
};
use crate::proto::strozzi::v1 as pb;

use data::{Catalogue, Category, City, Goods, Layout, ProgressTile, ShipCard};

/// Index of a ship card in [`Catalogue::cards`].
pub(crate) type CardId = u8;
/// Index of a progress tile in [`Catalogue::tiles`].
pub(crate) type TileId = u8;

/// Rounds in a game (spec A12).
pub(crate) const ROUNDS: u32 = 3;

/// Cards removed face down each round by player count (spec A6.4): 17/14/11/8 for 3/4/5/6,
/// leaving 3 per player + 3.
pub(crate) fn removed_cards(players: u32) -> usize {
    data::SHIP_CARD_COUNT - deck_size(players)
}

/// Cards in each round's deck: 3 per player + 3 (spec A6.4, A14).
pub(crate) fn deck_size(players: u32) -> usize {
    3 * players as usize + 3
}

/// The three flags (spec A5), in the order hands are kept sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum FlagKind {
    Pirate,
    PlusOne,
    Goods,
}

impl FlagKind {
    /// The full hand each player starts a round with, sorted.
    pub const ALL: [FlagKind; 3] = [FlagKind::Pirate, FlagKind::PlusOne, FlagKind::Goods];
}

/// Who starts rounds 2 and 3 (Config `round_start_rule`, spec A11, A13 S3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum RoundStartRule {
    BestFlorence,
    KeepWhileNobodyMoved,
}

/// When bonus spaces pay (Config `bonus_payment`, spec A13 S6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum BonusPayment {
    EveryRound,
    OnArrival,
}

/// Who is active after a ship was taken (Config `next_active_rule`, spec A13 S11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum NextActiveRule {
    LeftOfTaker,
    LeftOfActive,
}

/// The create-time options, decoded from [`pb::Config`] (see the proto for each one's spec §).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Options {
    pub players: u32,
    pub first_seat: Seat,
    pub random_first_seat: bool,
    pub hidden_money: bool,
    pub layout: Layout,
    pub round_start_rule: RoundStartRule,
    pub rank_zero_progress_totals: bool,
    pub bonus_payment: BonusPayment,
    pub goods_flag_needs_match: bool,
    pub optional_extra_steps: bool,
    pub pirate_chance_full_circle: bool,
    pub tentative_overbid: bool,
    pub next_active_rule: NextActiveRule,
}

/// One player's holdings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Player {
    /// Flags still in hand this round, sorted (spec A5).
    pub flags: Vec<FlagKind>,
    pub money: i64,
    /// Progress tiles taken, in order taken (public, spec A4).
    pub tiles: Vec<TileId>,
}

/// A ship lying in a port (spec A8.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Berth {
    pub owner: Seat,
    pub card: CardId,
    pub flag: FlagKind,
    /// Sails, +1 with the +1 flag (spec A5).
    pub speed: u8,
    /// Order of arrival within the round: the earlier ship wins a speed tie (spec A8.2).
    pub arrival: u32,
}

/// A tentative or winning claim: who, with which flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Claim {
    pub seat: Seat,
    pub flag: FlagKind,
}

/// The decision pass on one revealed card (spec A7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Decision {
    pub card: CardId,
    /// The standing +1/goods claim; its flag lies on the card, out of its owner's hand.
    pub claim: Option<Claim>,
    /// Seats still to be asked, in order; the first is to act. Seats that cannot do anything are
    /// dropped as soon as they come up.
    pub deciders: Vec<Seat>,
    /// Seats that have placed a tentative flag on this card (at most once each, spec A13 S10).
    pub tentative_by: Vec<Seat>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Phase {
    /// A card is face up and the table decides on it (spec A7).
    Deciding(Decision),
    /// `taker` took `card` with `flag` and chooses its port (spec A8.1).
    PlacingShip {
        taker: Seat,
        flag: FlagKind,
        card: CardId,
    },
    /// `taker`, having placed `card` (taken with `flag`), chooses a face-up progress tile (A8.5).
    ChoosingTile {
        taker: Seat,
        flag: FlagKind,
        card: CardId,
    },
    Finished,
}

/// Why a round ended (spec A9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RoundEnd {
    /// Every player has used all three flags (A9 a).
    FlagsUsed,
    /// Every card of the deck was taken or set aside (A9 b).
    DeckEmpty,
}

/// The whole game state. Hidden parts: `deck` order, `removed`, `stack` order, `rng`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Strozzi {
    options: Options,
    catalogue: Catalogue,
    rng: GameRng,
    /// 1..=3.
    round: u32,
    round_start_seat: Seat,
    /// The player who revealed the current card (spec A7).
    active: Seat,
    phase: Phase,
    /// This round's face-down deck; the last card is the top.
    deck: Vec<CardId>,
    /// Cards removed face down this round (spec A6.4); never shown.
    removed: Vec<CardId>,
    /// Cards everybody passed on this round (public, spec A7).
    set_aside: Vec<CardId>,
    players: Vec<Player>,
    /// Ships per port (Venice, Rome, Naples), fastest first (spec A8.2).
    ports: Vec<Vec<Berth>>,
    /// Ships placed so far this round: the next berth's arrival number.
    arrivals: u32,
    /// Markers per city and space, left to right: `tracks[city][position]` (spec A8).
    tracks: Vec<Vec<Vec<Seat>>>,
    /// The round in which each seat's marker reached its current space, per city (0 = never moved);
    /// used by the on-arrival bonus option (spec A13 S6).
    arrived_round: Vec<[u32; 4]>,
    /// The face-down progress stack; the last tile is the top.
    stack: Vec<TileId>,
    /// The face-up progress tiles (up to 3, spec A6.3).
    display: Vec<TileId>,
    /// Set when the game ends (spec A12.2).
    winners: Vec<Seat>,
}

impl Strozzi {
    fn n(&self) -> u32 {
        self.options.players
    }

    fn card(&self, id: CardId) -> &ShipCard {
        &self.catalogue.cards[usize::from(id)]
    }

    fn tile(&self, id: TileId) -> &ProgressTile {
        &self.catalogue.tiles[usize::from(id)]
    }

    /// The seat whose decision the game waits for.
    fn seat_to_act(&self) -> Option<Seat> {
        match &self.phase {
            Phase::Deciding(decision) => decision.deciders.first().copied(),
            Phase::PlacingShip { taker, .. } | Phase::ChoosingTile { taker, .. } => Some(*taker),
            Phase::Finished => None,
        }
    }
}

impl Engine for Strozzi {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const GAME_TYPE: GameType = GameType {
        name: "strozzi",
        display_name: "Strozzi",
        min_seats: 3,
        max_seats: 6,
        chance: Chance::Seeded,
        information: Information::Imperfect,
    };
    const RULES_VERSION: &'static str = "strozzi-1";

    fn config_for(players: u32) -> pb::Config {
        pb::Config {
            players,
            ..Default::default()
        }
    }

    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
        Strozzi::set_up(config, seed).map(|(state, _opening)| state)
    }

    fn seat_count(&self) -> u32 {
        self.n()
    }

    fn to_act(&self) -> Option<Seat> {
        self.seat_to_act()
    }

    fn legal_actions(&self, seat: Seat) -> Vec<LegalAction<pb::Action>> {
        if self.seat_to_act() != Some(seat) {
            return Vec::new();
        }
        self.choices()
            .into_iter()
            .map(|kind| LegalAction::Exact(pb::Action { kind: Some(kind) }))
            .collect()
    }

    fn with_amount(action: &pb::Action, _amount: u64) -> pb::Action {
        *action
    }

    fn apply(&mut self, seat: Seat, action: &pb::Action) -> Result<Vec<pb::Event>, ActionError> {
        let Some(expected) = self.seat_to_act() else {
            return Err(ActionError::GameOver);
        };
        let kind = action
            .kind
            .as_ref()
            .ok_or_else(|| ActionError::malformed("the action has no kind set"))?;
        if seat != expected {
            let rule = match self.phase {
                Phase::Deciding(_) => "§A7",
                _ => "§A8",
            };
            return Err(ActionError::NotYourTurn {
                seat,
                expected: format!("seat {expected}"),
                rule,
            });
        }
        self.validate(kind)?;
        let mut events = Vec::new();
        self.perform(seat, kind, &mut events);
        Ok(events)
    }

    fn view(&self, viewer: Viewer) -> pb::View {
        self.build_view(viewer)
    }

    fn redact_event(event: &pb::Event, viewer: Viewer) -> Redaction<pb::Event> {
        view::redact(event, viewer)
    }

    // `redact_action` keeps the default (public): every action is made in the open. Passing,
    // playing a flag (its kind shows on the card), choosing a port and taking a face-up tile are
    // seen by the whole table (spec A5, A7, A8, A13 S16).

    fn opening_events(&self) -> Vec<pb::Event> {
        // What setup did after laying out the components (spec A6.4, A6.5, A7): round 1 started
        // and its start player revealed the first card. Nobody can decide anything yet, so these
        // are all of setup's events; rebuilt from the state rather than stored in it.
        let Phase::Deciding(decision) = &self.phase else {
            return Vec::new();
        };
        vec![
            wire::round_started(
                self.round,
                self.round_start_seat,
                self.deck.len() + 1,
                self.removed.len(),
            ),
            wire::card_revealed(
                self.active,
                self.card(decision.card),
                decision.card,
                self.deck.len(),
            ),
        ]
    }

    fn outcome(&self) -> Option<Outcome> {
        if self.phase != Phase::Finished {
            return None;
        }
        Some(Outcome {
            scores: self.players.iter().map(|p| p.money).collect(),
            winners: self.winners.clone(),
        })
    }

    fn default_action(&self) -> Option<pb::Action> {
        self.default_choice()
            .map(|kind| pb::Action { kind: Some(kind) })
    }

    fn winners_among(&self, candidates: &[Seat]) -> Vec<Seat> {
        if self.phase != Phase::Finished {
            return Vec::new();
        }
        self.best_of(candidates)
    }

    fn same_undisclosed(&self, other: &Self) -> bool {
        // The RNG (each round's shuffle), the face-down deck and the cards removed from it, and
        // the progress stack (spec A6.3, A6.4, A13 S16). Hidden money is each seat's own secret,
        // covered by resampling.
        self.rng == other.rng
            && self.deck == other.deck
            && self.removed == other.removed
            && self.stack == other.stack
    }

    fn resample_hidden(&self, viewer: Viewer, seed: &Seed) -> Self {
        // Hidden from every viewer alike: the deck order, which unseen cards were removed, the
        // progress stack order and the RNG's future (spec A6.3, A6.4, A13 S16).
        let mut state = self.clone();
        let mut rng = GameRng::from_seed(seed);
        // Sorted before shuffling, so that the result depends on the seed and on what the viewer
        // may know (which cards are unseen, which tiles are in the stack) but not on the true
        // order: a bot determinizes with this, and must decide the same in every state its seat
        // cannot tell apart (src/bots).
        let mut unseen: Vec<CardId> = state.deck.iter().chain(&state.removed).copied().collect();
        unseen.sort_unstable();
        rng.shuffle(&mut unseen);
        state.removed = unseen.split_off(state.deck.len());
        state.deck = unseen;
        state.stack.sort_unstable();
        rng.shuffle(&mut state.stack);
        // With hidden money, every other seat's money while the game runs (spec A10, A13 S16):
        // any non-negative multiple of 5 (A14) is a total the viewer cannot rule out from what it
        // is sent. (A viewer who follows the board could work the totals out, as at a physical
        // table where payouts are made in the open; the screens hide the running totals only.)
        for seat in 0..self.n() {
            if !self.money_visible(seat, viewer) {
                state.players[seat as usize].money =
                    MONEY_STEP * rng.below(RESAMPLED_MONEY_STEPS) as i64;
            }
        }
        state.rng = GameRng::from_seed(&rng.next_seed());
        state
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.invariants()
    }
}

/// Every amount of money is a multiple of 5 (spec A14).
const MONEY_STEP: i64 = 5;
/// Resampled hidden money ranges over `0..MONEY_STEP * RESAMPLED_MONEY_STEPS`, beyond what a game
/// reaches.
const RESAMPLED_MONEY_STEPS: u64 = 400;

impl Strozzi {
    /// The initial state for `config`, and the events setup produced (round 1 started, the first
    /// card revealed: see [`Engine::opening_events`]).
    fn set_up(config: &pb::Config, seed: &Seed) -> Result<(Strozzi, Vec<pb::Event>), ConfigError> {
        let options = Options::from_pb(config)?;
        let catalogue = data::catalogue(options.layout).map_err(ConfigError)?;
        let mut rng = GameRng::from_seed(seed);
        let n = options.players;
        // Spec A6.5, A13 S17: a given seat (default 0) or a seeded draw.
        let first = if options.random_first_seat {
            rng.below(u64::from(n)) as Seat
        } else {
            options.first_seat
        };
        // Spec A6.3: shuffle the progress tiles and lay 3 face up.
        let mut stack: Vec<TileId> = (0..catalogue.tiles.len() as u8).collect();
        rng.shuffle(&mut stack);
        let display = stack.split_off(stack.len().saturating_sub(3));
        // Spec A6.1, A13 S3: every marker on its starting space, in seat order from the start player.
        let start_space: Vec<Seat> = clockwise_from(first, n).collect();
        let tracks = catalogue
            .tracks
            .iter()
            .map(|geometry| {
                let mut spaces = vec![Vec::new(); usize::from(geometry.top) + 1];
                spaces[0] = start_space.clone();
                spaces
            })
            .collect();
        let mut state = Strozzi {
            catalogue,
            rng,
            round: 1,
            round_start_seat: first,
            active: first,
            phase: Phase::Finished,
            deck: Vec::new(),
            removed: Vec::new(),
            set_aside: Vec::new(),
            players: vec![
                Player {
                    flags: FlagKind::ALL.to_vec(),
                    money: 0,
                    tiles: Vec::new()
                };
                n as usize
            ],
            ports: vec![Vec::new(); City::PORTS.len()],
            arrivals: 0,
            tracks,
            arrived_round: vec![[0; 4]; n as usize],
            stack,
            display,
            winners: Vec::new(),
            options,
        };
        let mut opening = Vec::new();
        state.start_round(first, &mut opening);
        Ok((state, opening))
    }
}
