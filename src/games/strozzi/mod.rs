//! Strozzi (Knizia, 2008) for 3 to 6 players. Spec: `strozzi.md` part A; the project's rules
//! document is `docs/rules/strozzi.md`.
//!
//! Layout of this module:
//! - `mod.rs` (here): the state, the create-time options and the [`Engine`] implementation
//!   (validation of actions, invariants, hidden-information resampling);
//! - [`rules`]: the round loop: revealing ships, the decision pass, resolving a claim, markers;
//! - [`scoring`]: round-end scoring and the final progress majorities and winner;
//! - [`view`]: conversion to the protobuf view and events, and their redaction;
//! - [`data`]: the provisional component data (JSON files).

mod data;
mod invariants;
mod rules;
mod scoring;
mod view;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::games::common::{GameRng, clockwise_from};
use crate::games::{ActionError, ConfigError, Engine, LegalAction, Outcome, Seat, Seed, Viewer};
use crate::proto::v1::strozzi as pb;

pub use data::{Catalogue, Category, City, Goods, Layout, ProgressTile, ShipCard};

/// Index of a ship card in [`Catalogue::cards`].
pub type CardId = u8;
/// Index of a progress tile in [`Catalogue::tiles`].
pub type TileId = u8;

/// Rounds in a game (spec A12).
pub const ROUNDS: u32 = 3;

/// Cards removed face down each round by player count (spec A6.4): 17/14/11/8 for 3/4/5/6,
/// leaving 3 per player + 3.
pub fn removed_cards(players: u32) -> usize {
    data::SHIP_CARD_COUNT - deck_size(players)
}

/// Cards in each round's deck: 3 per player + 3 (spec A6.4, A14).
pub fn deck_size(players: u32) -> usize {
    3 * players as usize + 3
}

/// The three flags (spec A5), in the order hands are kept sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FlagKind {
    Pirate,
    PlusOne,
    Goods,
}

impl FlagKind {
    pub const ALL: [FlagKind; 3] = [FlagKind::Pirate, FlagKind::PlusOne, FlagKind::Goods];
}

/// Who starts rounds 2 and 3 (Config `round_start_rule`, spec A11, A13 S3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RoundStartRule {
    BestFlorence,
    KeepWhileNobodyMoved,
}

/// When bonus spaces pay (Config `bonus_payment`, spec A13 S6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BonusPayment {
    EveryRound,
    OnArrival,
}

/// Who is active after a ship was taken (Config `next_active_rule`, spec A13 S11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NextActiveRule {
    LeftOfTaker,
    LeftOfActive,
}

/// The create-time options, decoded from [`pb::Config`] (see the proto for each one's spec §).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
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

impl Options {
    fn from_config(config: &pb::Config) -> Result<Options, ConfigError> {
        let players = config.players;
        if !(3..=6).contains(&players) {
            return Err(ConfigError(format!(
                "players must be 3 to 6 (spec A1), got {players}"
            )));
        }
        if config.first_seat >= players {
            return Err(ConfigError(format!(
                "first_seat {} is not a seat of {players}",
                config.first_seat
            )));
        }
        let bad = |field: &str, value: i32| ConfigError(format!("unknown {field} value {value}"));
        let layout = match pb::TrackLayout::try_from(config.track_layout) {
            Ok(pb::TrackLayout::Unspecified | pb::TrackLayout::Short) => Layout::Short,
            Ok(pb::TrackLayout::Numbered) => Layout::Numbered,
            Err(_) => return Err(bad("track_layout", config.track_layout)),
        };
        let round_start_rule = match pb::RoundStartRule::try_from(config.round_start_rule) {
            Ok(pb::RoundStartRule::Unspecified | pb::RoundStartRule::BestFlorence) => {
                RoundStartRule::BestFlorence
            }
            Ok(pb::RoundStartRule::KeepWhileNobodyMoved) => RoundStartRule::KeepWhileNobodyMoved,
            Err(_) => return Err(bad("round_start_rule", config.round_start_rule)),
        };
        let bonus_payment = match pb::BonusPayment::try_from(config.bonus_payment) {
            Ok(pb::BonusPayment::Unspecified | pb::BonusPayment::EveryRound) => {
                BonusPayment::EveryRound
            }
            Ok(pb::BonusPayment::OnArrival) => BonusPayment::OnArrival,
            Err(_) => return Err(bad("bonus_payment", config.bonus_payment)),
        };
        let next_active_rule = match pb::NextActiveRule::try_from(config.next_active_rule) {
            Ok(pb::NextActiveRule::Unspecified | pb::NextActiveRule::LeftOfTaker) => {
                NextActiveRule::LeftOfTaker
            }
            Ok(pb::NextActiveRule::LeftOfActive) => NextActiveRule::LeftOfActive,
            Err(_) => return Err(bad("next_active_rule", config.next_active_rule)),
        };
        Ok(Options {
            players,
            first_seat: config.first_seat,
            random_first_seat: config.random_first_seat,
            hidden_money: config.hidden_money,
            layout,
            round_start_rule,
            rank_zero_progress_totals: config.rank_zero_progress_totals,
            bonus_payment,
            goods_flag_needs_match: config.goods_flag_needs_match,
            optional_extra_steps: config.optional_extra_steps,
            pirate_chance_full_circle: config.pirate_chance_full_circle,
            tentative_overbid: config.tentative_overbid,
            next_active_rule,
        })
    }
}

/// One player's holdings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    /// Flags still in hand this round, sorted (spec A5).
    pub flags: Vec<FlagKind>,
    pub money: i64,
    /// Progress tiles taken, in order taken (public, spec A4).
    pub tiles: Vec<TileId>,
}

/// A ship lying in a port (spec A8.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Berth {
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
pub struct Claim {
    pub seat: Seat,
    pub flag: FlagKind,
}

/// The decision pass on one revealed card (spec A7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
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
pub enum Phase {
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

    /// Every action the seat to act may take, as plain values (shared by `legal_actions`, the
    /// forced-choice shortcut and validation).
    fn choices(&self) -> Vec<pb::action::Kind> {
        use pb::action::Kind;
        match &self.phase {
            Phase::Deciding(decision) => {
                let Some(&seat) = decision.deciders.first() else {
                    return Vec::new();
                };
                let mut out = vec![Kind::Pass(pb::Pass {})];
                for flag in self.playable_flags(seat, decision) {
                    out.push(Kind::PlayFlag(pb::PlayFlag {
                        flag: view::flag_to_pb(flag) as i32,
                    }));
                }
                out
            }
            Phase::PlacingShip { taker, flag, card } => {
                let mut out = Vec::new();
                for port in self.free_ports(*taker) {
                    for decline in self.goods_flag_step_choices(*flag, *card, port) {
                        out.push(Kind::PlaceShip(pb::PlaceShip {
                            port: view::city_to_pb(port) as i32,
                            decline_goods_flag_step: decline,
                        }));
                    }
                }
                out
            }
            Phase::ChoosingTile { .. } => {
                let mut out = Vec::new();
                for &tile in &self.display {
                    for decline in self.tile_step_choices(tile) {
                        out.push(Kind::TakeProgressTile(pb::TakeProgressTile {
                            tile_id: u32::from(tile),
                            decline_goods_step: decline,
                        }));
                    }
                }
                out
            }
            Phase::Finished => Vec::new(),
        }
    }

    /// Checks `kind` by the seat to act against the rules, without changing anything.
    fn validate(&self, kind: &pb::action::Kind) -> Result<(), ActionError> {
        use pb::action::Kind;
        match (kind, &self.phase) {
            (_, Phase::Finished) => Err(ActionError::GameOver),
            (Kind::Pass(_), Phase::Deciding(_)) => Ok(()),
            (Kind::PlayFlag(play), Phase::Deciding(decision)) => {
                let flag = view::flag_from_pb(play.flag)?;
                let seat = decision.deciders.first().copied().unwrap_or_default();
                self.check_flag_play(seat, decision, flag)
            }
            (Kind::PlaceShip(place), Phase::PlacingShip { taker, flag, card }) => {
                let port = view::city_from_pb(place.port)?;
                if port == City::Florence {
                    return Err(ActionError::illegal(
                        "§A8.1",
                        "Florence is not a port: choose Venice, Rome or Naples",
                    ));
                }
                if !self.free_ports(*taker).contains(&port) {
                    return Err(ActionError::illegal(
                        "§A8.1",
                        format!(
                            "you already have a ship in {port:?} this round: choose another port"
                        ),
                    ));
                }
                if place.decline_goods_flag_step
                    && !self
                        .goods_flag_step_choices(*flag, *card, port)
                        .contains(&true)
                {
                    return Err(self.decline_error("§A8.3", *flag == FlagKind::Goods));
                }
                Ok(())
            }
            (Kind::TakeProgressTile(take), Phase::ChoosingTile { .. }) => {
                let tile = u8::try_from(take.tile_id)
                    .ok()
                    .filter(|t| usize::from(*t) < self.catalogue.tiles.len())
                    .ok_or_else(|| {
                        ActionError::malformed(format!("no progress tile {}", take.tile_id))
                    })?;
                if !self.display.contains(&tile) {
                    return Err(ActionError::illegal(
                        "§A8.5",
                        format!(
                            "progress tile {} is not face up: choose one of the displayed tiles",
                            take.tile_id
                        ),
                    ));
                }
                if take.decline_goods_step && !self.tile_step_choices(tile).contains(&true) {
                    return Err(self.decline_error("§A8.5", self.tile(tile).value == 1));
                }
                Ok(())
            }
            (_, Phase::Deciding(_)) => Err(ActionError::illegal(
                "§A7",
                "a card is being decided on: pass or play a flag (Pass, PlayFlag)",
            )),
            (_, Phase::PlacingShip { .. }) => Err(ActionError::illegal(
                "§A8.1",
                "you took the ship: choose its port first (PlaceShip)",
            )),
            (_, Phase::ChoosingTile { .. }) => Err(ActionError::illegal(
                "§A8.5",
                "the ship shows the progress symbol: take a face-up tile first (TakeProgressTile)",
            )),
        }
    }

    /// Why a step cannot be declined: the option is off, or there is no such step.
    fn decline_error(&self, rule: &'static str, step_exists: bool) -> ActionError {
        if !self.options.optional_extra_steps {
            ActionError::illegal(
                "§A13 S8",
                "moves are mandatory in this game (optional_extra_steps is off)",
            )
        } else if step_exists {
            ActionError::illegal(rule, "this step cannot be declined")
        } else {
            ActionError::illegal(rule, "there is no extra step to decline here")
        }
    }
}

impl Engine for Strozzi {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const NAME: &'static str = "strozzi";
    const RULES_VERSION: &'static str = "strozzi-1";

    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
        let options = Options::from_config(config)?;
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
        state.start_round(first, &mut Vec::new());
        Ok(state)
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

    fn redact_event(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        Some(view::redact(event, viewer))
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

    fn resample_hidden(&self, _viewer: Viewer, seed: &Seed) -> Self {
        // Every viewer is missing the same things: the deck order, which unseen cards were removed,
        // the progress stack order and the RNG's future. (Hidden money is no secret of the state:
        // it follows from the public scoring, so it is kept.)
        let mut state = self.clone();
        let mut rng = GameRng::from_seed(seed);
        let mut unseen: Vec<CardId> = state.deck.iter().chain(&state.removed).copied().collect();
        rng.shuffle(&mut unseen);
        state.removed = unseen.split_off(state.deck.len());
        state.deck = unseen;
        rng.shuffle(&mut state.stack);
        state.rng = GameRng::from_seed(&rng.next_seed());
        state
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.invariants()
    }
}
