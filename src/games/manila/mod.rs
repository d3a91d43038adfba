//! Manila (Franz-Benno Delonge, Zoch 2005) for 3 to 5 players. Spec: /work/shared/rules/manila.md;
//! this project's rules: docs/rules/manila.md.
//!
//! Where to find a rule:
//! - `data.rs`: the board's numbers and spaces (costs, payoffs, value track; spec §2);
//! - `rules/`: a voyage step by step, one file per spec section (see `rules/mod.rs`): auction
//!   (§4.1), harbour master (§4.2), schedule and placement (§4.3), dice (§4.4), boarding (§4.5,
//!   §8), pilots (§4.6), plunder (§4.7), settlement (§4.8, §4.9) and money (§5);
//! - `scoring.rs`: the end of the game and final scores (§6);
//! - `view.rs`: what each viewer sees, the redaction of events and actions, and the
//!   hidden-information resampling (§7);
//! - `wire.rs`: conversions to and from the protobuf messages, and the event builders;
//! - `invariants.rs`: the spec's invariants (§10);
//! - this file: the state, setup (§3) and the [`Engine`] implementation;
//! - `tests/`: the spec's worked examples and every rule, by topic.

pub(crate) mod data;
mod invariants;
mod rules;
mod scoring;
mod view;
mod wire;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::games::common::GameRng;
use crate::games::{
    ActionError, Chance, ConfigError, Engine, GameType, Information, LegalAction, Outcome,
    Redaction, Seat, Seed, Viewer,
};
use crate::proto::manila::v1 as pb;

use data::Ware;
use data::*;
use wire::*;

/// The create-time options (spec §8, §9), copied from [`pb::Config`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Options {
    /// Spec §8: pirates may displace crew of full punts on 13.
    pub pirate_variant: bool,
    /// Spec §9 A7 alternative: no placing on a docked punt's crew or an occupied wharf.
    pub forbid_placing_on_docked: bool,
    /// Spec §9 A9 alternative: the insurer may stow away too.
    pub stowaway_insurer_allowed: bool,
    /// Spec §9 A13 alternative: an unguarded punt on 13 after roll 3 is wrecked.
    pub wreck_unguarded_on_13: bool,
    /// Spec §9 A12: break a tie for first by cash.
    pub tie_break_most_cash: bool,
    /// Spec §9 A8 alternative: no new pirates once one has boarded.
    pub close_pirate_ship_after_boarding: bool,
    /// Spec §4.3 note: the 3-player extra placement round comes before roll 2.
    pub three_player_extra_round_before_roll_two: bool,
}

/// One player's holdings. Shares are tracked per origin because the dealt ones are secret while
/// the bought ones were taken openly (spec §7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Player {
    pub cash: u64,
    /// The 2 shares dealt face down at setup (secret).
    pub dealt: Vec<Ware>,
    /// Shares bought as harbour master (public).
    pub bought: Vec<Ware>,
    /// Mortgaged shares per ware (the count is public, the wares are secret).
    pub mortgaged: [u32; 4],
    /// Accomplices not placed this voyage.
    pub in_hand: u32,
    /// Declined to place this voyage (spec §4.3).
    pub declined: bool,
}

impl Player {
    /// Shares owned per ware, mortgaged ones included.
    pub fn holdings(&self) -> [u32; 4] {
        let mut counts = [0; 4];
        for ware in self.dealt.iter().chain(&self.bought) {
            counts[ware.index()] += 1;
        }
        counts
    }

    pub fn share_count(&self) -> u32 {
        (self.dealt.len() + self.bought.len()) as u32
    }

    pub fn mortgaged_count(&self) -> u32 {
        self.mortgaged.iter().sum()
    }

    pub fn unmortgaged_count(&self) -> u32 {
        self.share_count() - self.mortgaged_count()
    }

    /// The most this player can pay now: cash plus a mortgage on every free share (spec §5).
    pub fn capacity(&self) -> u64 {
        self.cash + MORTGAGE_LOAN * u64::from(self.unmortgaged_count())
    }
}

/// Where a punt is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum PuntPlace {
    AtSea,
    /// In the harbour at berth 0..2 (A..C).
    Harbour(usize),
    /// In the shipyard at berth 0..2 (A..C).
    Shipyard(usize),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Punt {
    pub ware: Ware,
    pub start: u32,
    /// Lane space 0..=13 while at sea; 14 once it has arrived.
    pub position: u32,
    pub place: PuntPlace,
    /// The seat on each filled crew slot; slots always fill cheapest first, so this is a prefix.
    pub crew: Vec<Seat>,
    pub plundered: bool,
}

impl Punt {
    pub fn slots(&self) -> usize {
        self.ware.crew_costs().len()
    }

    pub fn has_empty_slot(&self) -> bool {
        self.crew.len() < self.slots()
    }

    pub fn at_sea(&self) -> bool {
        self.place == PuntPlace::AtSea
    }
}

/// Everything on the board during one voyage; reset when the next voyage starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Voyage {
    pub number: u32,
    pub harbour_master: Option<Seat>,
    /// The three loaded punts in ware order (empty before loading). Lane = index.
    pub punts: Vec<Punt>,
    pub wharves: [Option<Seat>; 3],
    pub shipyard: [Option<Seat>; 3],
    /// Punts in the harbour / shipyard so far: also the next free berth (spec §4.4, §4.7).
    pub docked: usize,
    pub wrecked: usize,
    /// Pirate ship: [bow = captain, second place] (spec §4.3).
    pub pirates: [Option<Seat>; 2],
    pub small_pilot: Option<Seat>,
    pub large_pilot: Option<Seat>,
    pub insurer: Option<Seat>,
    /// A pirate boarded this voyage (for the A8 alternative).
    pub pirate_boarded: bool,
    /// Index into the schedule.
    pub step: usize,
    /// Rolls made so far this voyage (0..=3).
    pub rolls: u32,
    /// The dice of every roll this voyage; until its first roll, those of the previous voyage.
    pub dice: Vec<Vec<(Ware, u32)>>,
    pub values_at_start: [usize; 4],
}

impl Voyage {
    fn new(number: u32, values: [usize; 4]) -> Self {
        Voyage {
            number,
            harbour_master: None,
            punts: Vec::new(),
            wharves: [None; 3],
            shipyard: [None; 3],
            docked: 0,
            wrecked: 0,
            pirates: [None; 2],
            small_pilot: None,
            large_pilot: None,
            insurer: None,
            pirate_boarded: false,
            step: 0,
            rolls: 0,
            dice: Vec::new(),
            values_at_start: values,
        }
    }

    pub fn punt(&self, ware: Ware) -> Option<&Punt> {
        self.punts.iter().find(|p| p.ware == ware)
    }

    fn punt_index(&self, ware: Ware) -> Option<usize> {
        self.punts.iter().position(|p| p.ware == ware)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Auction {
    pub opener: Seat,
    pub turn: Seat,
    pub high: Option<(Seat, u64)>,
    pub passed: Vec<bool>,
}

/// Whose decision the game waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Phase {
    Auction(Auction),
    /// The harbour master may buy a share.
    Purchase,
    /// The harbour master loads and launches the punts.
    Loading,
    /// A placement round; the seat to act is `offset` places clockwise of the harbour master.
    Placement {
        offset: u32,
    },
    /// A pirate on ship place `decider` decides; `decisions` made so far (the captain's first).
    /// `boarded` lists the (punt, slot) taken this phase, which the variant may not displace.
    Boarding {
        decider: usize,
        decisions: u32,
        boarded: Vec<(Ware, usize)>,
    },
    Pilot {
        large: bool,
    },
    /// The captain still has to direct these plundered punts.
    Plunder {
        pending: Vec<Ware>,
    },
    Over,
}

/// Money actions already taken at the current decision point (the anti-cycle guard, spec §9 A11:
/// mortgaging and redeeming at the same decision point is never useful and could loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum MoneyMode {
    Free,
    Mortgaging,
    Redeeming,
}

/// What the last settlement did, kept for the §10 invariants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SettlementRecord {
    pub loaded: Vec<Ware>,
    pub docked: usize,
    pub wrecked: usize,
    /// Insurer and what he owed in total (his own berths included).
    pub insurance: Option<(Seat, u64)>,
    pub values_before: [usize; 4],
    pub values_after: [usize; 4],
}

/// A game of Manila: the whole state, hosted through its [`Engine`] impl. Hidden parts: the wares
/// of each seat's dealt and mortgaged shares (spec §7) and the RNG.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manila {
    players_count: u32,
    start_seat: Seat,
    options: Options,
    rng: GameRng,
    players: Vec<Player>,
    /// Face-up purchasable shares per ware (spec §3.3).
    supply: [u32; 4],
    /// Value-track index per ware (spec §2.4).
    values: [usize; 4],
    voyage: Voyage,
    phase: Phase,
    money_mode: MoneyMode,
    last_settlement: Option<SettlementRecord>,
    /// Final scores and winners once the game is over.
    result: Option<(Vec<i64>, Vec<Seat>)>,
}

impl Manila {
    /// What setup did, rebuilt from the state it returned: each seat's dealt shares (spec §3.3),
    /// then the start of voyage 1 with its opener (spec §3.6, §4.1). The same events, in the same
    /// order, as [`Manila::setup_with_events`] emits.
    fn opening(&self) -> Vec<pb::Event> {
        let mut events = Vec::new();
        for (seat, player) in self.players.iter().enumerate() {
            events.push(event(shares_dealt(seat as Seat, &player.dealt)));
        }
        let opener = match &self.phase {
            Phase::Auction(auction) => auction.opener,
            _ => self.start_seat,
        };
        events.push(event(pb::event::Kind::VoyageStarted(pb::VoyageStarted {
            voyage: self.voyage.number,
            opener,
        })));
        events
    }

    fn accomplices_total(&self) -> u32 {
        accomplices_for(self.players_count)
    }

    fn value(&self, ware: Ware) -> u64 {
        VALUE_TRACK[self.values[ware.index()]]
    }

    fn seat_error(&self, seat: Seat, expected: Seat, rule: &'static str) -> ActionError {
        ActionError::NotYourTurn {
            seat,
            expected: format!("seat {expected}"),
            rule,
        }
    }
}

impl Manila {
    /// [`Engine::setup`], also returning what setup did as events: each seat's dealt shares and
    /// the start of voyage 1 (the opening events, see [`Engine::opening_events`]).
    fn setup_with_events(
        config: &pb::Config,
        seed: &Seed,
    ) -> Result<(Self, Vec<pb::Event>), ConfigError> {
        if !(3..=5).contains(&config.players) {
            return Err(ConfigError(format!(
                "players must be 3 to 5 (got {})",
                config.players
            )));
        }
        if config.start_seat >= config.players {
            return Err(ConfigError(format!(
                "start_seat {} is not a seat of a {}-player game",
                config.start_seat, config.players
            )));
        }
        let tie_break = pb::TieBreak::try_from(config.tie_break)
            .map_err(|_| ConfigError(format!("unknown tie_break {}", config.tie_break)))?;
        let options = Options {
            pirate_variant: config.pirate_variant,
            forbid_placing_on_docked: config.forbid_placing_on_docked,
            stowaway_insurer_allowed: config.stowaway_insurer_allowed,
            wreck_unguarded_on_13: config.wreck_unguarded_on_13,
            tie_break_most_cash: tie_break == pb::TieBreak::MostCash,
            close_pirate_ship_after_boarding: config.close_pirate_ship_after_boarding,
            three_player_extra_round_before_roll_two: config
                .three_player_extra_round_before_roll_two,
        };
        let mut rng = GameRng::from_seed(seed);
        let mut events = Vec::new();
        // Spec §3.3: 3 shares of each ware are shuffled and 2 dealt to each player; the rest of
        // the shuffled ones join the 2 per ware left out in the face-up supply.
        let mut pool: Vec<Ware> = Ware::ALL
            .iter()
            .flat_map(|w| std::iter::repeat_n(*w, DEALT_POOL_PER_WARE as usize))
            .collect();
        rng.shuffle(&mut pool);
        let mut supply = [SHARES_PER_WARE; 4];
        let total = accomplices_for(config.players);
        let players = pool
            .chunks(SHARES_DEALT_EACH)
            .take(config.players as usize)
            .enumerate()
            .map(|(seat, dealt)| {
                for ware in dealt {
                    supply[ware.index()] -= 1;
                }
                events.push(event(shares_dealt(seat as Seat, dealt)));
                Player {
                    cash: STARTING_CASH,
                    dealt: dealt.to_vec(),
                    bought: Vec::new(),
                    mortgaged: [0; 4],
                    in_hand: total,
                    declined: false,
                }
            })
            .collect();
        let mut state = Manila {
            players_count: config.players,
            start_seat: config.start_seat,
            options,
            rng,
            players,
            supply,
            values: [0; 4],
            voyage: Voyage::new(0, [0; 4]),
            phase: Phase::Over,
            money_mode: MoneyMode::Free,
            last_settlement: None,
            result: None,
        };
        state.start_voyage(config.start_seat, &mut events);
        Ok((state, events))
    }
}

impl Engine for Manila {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const GAME_TYPE: GameType = GameType {
        name: "manila",
        display_name: "Manila",
        min_seats: 3,
        max_seats: 5,
        chance: Chance::Seeded,
        information: Information::Imperfect,
    };
    const RULES_VERSION: &'static str = "manila-2";

    fn config_for(players: u32) -> pb::Config {
        pb::Config {
            players,
            ..Default::default()
        }
    }

    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
        Self::setup_with_events(config, seed).map(|(state, _)| state)
    }

    fn seat_count(&self) -> u32 {
        self.players_count
    }

    fn to_act(&self) -> Option<Seat> {
        let voyage = &self.voyage;
        match &self.phase {
            Phase::Auction(auction) => Some(auction.turn),
            Phase::Purchase | Phase::Loading => voyage.harbour_master,
            Phase::Placement { offset } => voyage
                .harbour_master
                .map(|hm| (hm + offset) % self.players_count),
            Phase::Boarding { decider, .. } => voyage.pirates[*decider],
            Phase::Pilot { large: false } => voyage.small_pilot,
            Phase::Pilot { large: true } => voyage.large_pilot,
            Phase::Plunder { .. } => voyage.pirates[0],
            Phase::Over => None,
        }
    }

    fn legal_actions(&self, seat: Seat) -> Vec<LegalAction<pb::Action>> {
        if self.to_act() != Some(seat) {
            return Vec::new();
        }
        let mut legal = self.phase_actions(seat);
        self.money_actions(seat, &mut legal);
        legal
    }

    fn with_amount(action: &pb::Action, amount: u64) -> pb::Action {
        match &action.kind {
            Some(pb::action::Kind::Bid(_)) => pb::Action {
                kind: Some(pb::action::Kind::Bid(pb::Bid { price: amount })),
            },
            _ => action.clone(),
        }
    }

    fn amount_field(action: &pb::Action) -> Option<&'static str> {
        match &action.kind {
            Some(pb::action::Kind::Bid(_)) => Some("bid.price"),
            _ => None,
        }
    }

    fn apply(&mut self, seat: Seat, action: &pb::Action) -> Result<Vec<pb::Event>, ActionError> {
        let Some(expected) = self.to_act() else {
            return Err(ActionError::GameOver);
        };
        if seat >= self.players_count {
            return Err(ActionError::malformed(format!(
                "seat {seat} is not at this table"
            )));
        }
        let Some(kind) = &action.kind else {
            return Err(ActionError::malformed("the action has no kind"));
        };
        if seat != expected {
            return Err(self.seat_error(seat, expected, self.phase_rule()));
        }
        let mut events = Vec::new();
        use pb::action::Kind;
        match kind {
            Kind::MortgageShare(m) => {
                return self
                    .mortgage_action(seat, m.ware, &mut events)
                    .map(|_| events);
            }
            Kind::RedeemShare(r) => {
                return self
                    .redeem_action(seat, r.ware, &mut events)
                    .map(|_| events);
            }
            Kind::Bid(bid) => self.bid(seat, bid.price, &mut events)?,
            Kind::PassAuction(_) => self.pass_auction(seat, &mut events)?,
            Kind::BuyShare(buy) => self.buy_share(seat, buy.ware, &mut events)?,
            Kind::SkipPurchase(_) => self.skip_purchase(seat, &mut events)?,
            Kind::LoadPunts(load) => self.load_punts(seat, load, &mut events)?,
            Kind::PlaceAccomplice(place) => self.place_accomplice(seat, place, &mut events)?,
            Kind::DeclinePlacement(_) => self.decline_placement(seat, &mut events)?,
            Kind::BoardPunt(board) => self.board_punt(seat, board, &mut events)?,
            Kind::StayAboard(_) => self.stay_aboard(seat, &mut events)?,
            Kind::PilotPunts(pilot) => self.pilot_punts(seat, pilot, &mut events)?,
            Kind::DirectPlunder(direct) => self.direct_plunder(seat, direct, &mut events)?,
        }
        // Any move other than a mortgage or redemption ends the decision point (spec §9 A11 guard).
        self.money_mode = MoneyMode::Free;
        Ok(events)
    }

    fn view(&self, viewer: Viewer) -> pb::View {
        self.build_view(viewer)
    }

    fn redact_event(event: &pb::Event, viewer: Viewer) -> Redaction<pb::Event> {
        view::redact(event, viewer)
    }

    fn redact_action(action: &pb::Action, author: Seat, viewer: Viewer) -> pb::Action {
        view::redact_action(action, author, viewer)
    }

    fn opening_events(&self) -> Vec<pb::Event> {
        self.opening()
    }

    fn outcome(&self) -> Option<Outcome> {
        let (scores, winners) = self.result.clone()?;
        Some(Outcome { scores, winners })
    }

    fn default_action(&self) -> Option<pb::Action> {
        self.default_choice()
    }

    fn winners_among(&self, candidates: &[Seat]) -> Vec<Seat> {
        if self.result.is_none() {
            return Vec::new();
        }
        self.best_of(candidates)
    }

    fn same_undisclosed(&self, other: &Self) -> bool {
        // The RNG, which rolls the dice (spec §4.3, §4.4). The dealt shares and which ones are
        // mortgaged are each seat's own secrets (§7), covered by resampling.
        self.rng == other.rng
    }

    fn resample_hidden(&self, viewer: Viewer, seed: &Seed) -> Self {
        self.resampled(viewer, seed)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.invariants()
    }
}
