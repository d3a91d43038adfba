//! Manila (Franz-Benno Delonge, Zoch 2005) for 3 to 5 players. Spec: /work/shared/rules/manila.md;
//! this project's rules: docs/rules/manila.md.
//!
//! Where to find a rule:
//! - `data.rs`: the board's numbers (costs, payoffs, value track; spec §2);
//! - `flow.rs`: the voyage step by step: auction (§4.1), harbour master (§4.2), placement (§4.3),
//!   dice (§4.4), boarding (§4.5), pilots (§4.6), plunder (§4.7), and the schedule tying them;
//! - `settlement.rs`: payouts (§4.8), value increase (§4.9), game end and scoring (§6);
//! - `money.rs`: mortgages, redemptions, forced mortgages and payment capacity (§5);
//! - `view.rs`: what each viewer sees, event redaction and hidden-information resampling (§7);
//! - this file: the state, the [`Engine`] implementation and the invariants (§10).

mod data;
mod flow;
mod money;
mod settlement;
mod view;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::games::common::GameRng;
use crate::games::{ActionError, ConfigError, Engine, LegalAction, Outcome, Seat, Seed, Viewer};
use crate::proto::v1::manila as pb;

pub use data::Ware;
use data::*;

/// The create-time options (spec §8, §9), copied from [`pb::Config`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
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
pub struct Player {
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
pub enum PuntPlace {
    AtSea,
    /// In the harbour at berth 0..2 (A..C).
    Harbour(usize),
    /// In the shipyard at berth 0..2 (A..C).
    Shipyard(usize),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Punt {
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

/// The steps of a voyage after the harbour master's actions (spec §4.3 schedule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    Place,
    Roll,
    Boarding,
    SmallPilot,
    LargePilot,
    Plunder,
    Settle,
}

/// 4-5 players: three placement rounds, each followed by a roll (spec §4.3).
const SCHEDULE_STANDARD: &[Step] = &[
    Step::Place,
    Step::Roll,
    Step::Place,
    Step::Roll,
    Step::Boarding,
    Step::Place,
    Step::SmallPilot,
    Step::LargePilot,
    Step::Roll,
    Step::Plunder,
    Step::Settle,
];
/// 3 players: two placement rounds before the first roll (spec §4.3).
const SCHEDULE_THREE: &[Step] = &[
    Step::Place,
    Step::Place,
    Step::Roll,
    Step::Place,
    Step::Roll,
    Step::Boarding,
    Step::Place,
    Step::SmallPilot,
    Step::LargePilot,
    Step::Roll,
    Step::Plunder,
    Step::Settle,
];
/// 3 players, fan-sheet timing (spec §4.3 note): the extra round comes before roll 2.
const SCHEDULE_THREE_LATE_EXTRA: &[Step] = &[
    Step::Place,
    Step::Roll,
    Step::Place,
    Step::Place,
    Step::Roll,
    Step::Boarding,
    Step::Place,
    Step::SmallPilot,
    Step::LargePilot,
    Step::Roll,
    Step::Plunder,
    Step::Settle,
];

/// Everything on the board during one voyage; reset when the next voyage starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Voyage {
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
    /// Rolls made so far (0..=3) and the latest dice.
    pub rolls: u32,
    pub last_roll: Vec<(Ware, u32)>,
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
            last_roll: Vec::new(),
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
pub struct Auction {
    pub opener: Seat,
    pub turn: Seat,
    pub high: Option<(Seat, u64)>,
    pub passed: Vec<bool>,
}

/// Whose decision the game waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
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
pub enum MoneyMode {
    Free,
    Mortgaging,
    Redeeming,
}

/// What the last settlement did, kept for the §10 invariants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettlementRecord {
    pub loaded: Vec<Ware>,
    pub docked: usize,
    pub wrecked: usize,
    /// Insurer and what he owed in total (his own berths included).
    pub insurance: Option<(Seat, u64)>,
    pub values_before: [usize; 4],
    pub values_after: [usize; 4],
}

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

pub(crate) fn emit(events: &mut Vec<pb::Event>, kind: pb::event::Kind) {
    events.push(pb::Event { kind: Some(kind) });
}

impl Manila {
    fn schedule(&self) -> &'static [Step] {
        match (
            self.players_count,
            self.options.three_player_extra_round_before_roll_two,
        ) {
            (3, false) => SCHEDULE_THREE,
            (3, true) => SCHEDULE_THREE_LATE_EXTRA,
            _ => SCHEDULE_STANDARD,
        }
    }

    fn accomplices_total(&self) -> u32 {
        accomplices_for(self.players_count)
    }

    fn value(&self, ware: Ware) -> u64 {
        VALUE_TRACK[self.values[ware.index()]]
    }

    /// Fortune at the end (spec §6): cash + every share at its value − 15 per mortgaged share.
    fn score(&self, seat: Seat) -> i64 {
        let player = &self.players[seat as usize];
        let holdings = player.holdings();
        let shares: u64 = Ware::ALL
            .iter()
            .map(|w| u64::from(holdings[w.index()]) * self.value(*w))
            .sum();
        player.cash as i64 + shares as i64
            - (REDEMPTION_PRICE * u64::from(player.mortgaged_count())) as i64
    }

    fn seat_error(&self, seat: Seat, expected: Seat, rule: &'static str) -> ActionError {
        ActionError::NotYourTurn {
            seat,
            expected: format!("seat {expected}"),
            rule,
        }
    }
}

impl Engine for Manila {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const NAME: &'static str = "manila";
    const RULES_VERSION: &'static str = "manila-1";

    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
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
            .map(|dealt| {
                for ware in dealt {
                    supply[ware.index()] -= 1;
                }
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
        state.start_voyage(config.start_seat, &mut Vec::new());
        Ok(state)
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
                kind: Some(pb::action::Kind::Bid(pb::Bid { amount })),
            },
            _ => action.clone(),
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
            Kind::Bid(bid) => self.bid(seat, bid.amount, &mut events)?,
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

    fn redact_event(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        Some(view::redact(event, viewer))
    }

    fn outcome(&self) -> Option<Outcome> {
        let (scores, winners) = self.result.clone()?;
        Some(Outcome { scores, winners })
    }

    fn resample_hidden(&self, viewer: Viewer, seed: &Seed) -> Self {
        self.resampled(viewer, seed)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.invariants()
    }
}

impl Manila {
    /// The spec's invariants (§10 and the bookkeeping they rest on).
    fn invariants(&self) -> Result<(), String> {
        let n = self.players_count as usize;
        if self.players.len() != n {
            return Err("wrong number of players".into());
        }
        // Shares: 5 per ware between the supply and the players (spec §1, §3.3).
        for ware in Ware::ALL {
            let held: u32 = self
                .players
                .iter()
                .map(|p| p.holdings()[ware.index()])
                .sum();
            if held + self.supply[ware.index()] != SHARES_PER_WARE {
                return Err(format!(
                    "{ware:?}: {held} held + {} in supply != 5",
                    self.supply[ware.index()]
                ));
            }
        }
        for (seat, player) in self.players.iter().enumerate() {
            if player.dealt.len() != SHARES_DEALT_EACH {
                return Err(format!(
                    "seat {seat} holds {} dealt shares",
                    player.dealt.len()
                ));
            }
            let holdings = player.holdings();
            if Ware::ALL
                .iter()
                .any(|w| player.mortgaged[w.index()] > holdings[w.index()])
            {
                return Err(format!("seat {seat} has more mortgaged shares than shares"));
            }
        }
        // Values stay on the track; the game is over exactly when a ware reached 30 (spec §6).
        if self.values.iter().any(|v| *v > TOP_STEP) {
            return Err("a value left the track".into());
        }
        let at_top = self.values.contains(&TOP_STEP);
        if at_top != matches!(self.phase, Phase::Over) || at_top != self.result.is_some() {
            return Err(format!(
                "game over ({:?}) but values {:?}",
                self.phase, self.values
            ));
        }
        if let Some(record) = &self.last_settlement {
            check_settlement(record)?;
        }
        self.voyage_invariants()
    }

    fn voyage_invariants(&self) -> Result<(), String> {
        let voyage = &self.voyage;
        if matches!(self.phase, Phase::Over) {
            return Ok(());
        }
        // Values only move at settlement (spec §4.9).
        if self.values != voyage.values_at_start {
            return Err("a value changed in the middle of a voyage".into());
        }
        if let Phase::Auction(auction) = &self.phase {
            if auction.passed[auction.turn as usize]
                || auction.high.is_some_and(|(s, _)| s == auction.turn)
            {
                return Err(
                    "the auction turn is on a seat that passed or holds the high bid".into(),
                );
            }
            if let Some((bidder, bid)) = auction.high
                && bid > self.players[bidder as usize].capacity()
            {
                return Err("the high bid exceeds the bidder's means".into());
            }
        }
        // Accomplices: every one is in hand or on exactly one space (spec §3.2).
        let mut placed = vec![0u32; self.players.len()];
        let spaces = voyage
            .punts
            .iter()
            .flat_map(|p| p.crew.iter().copied())
            .chain(voyage.wharves.iter().flatten().copied())
            .chain(voyage.shipyard.iter().flatten().copied())
            .chain(voyage.pirates.iter().flatten().copied())
            .chain(
                [voyage.small_pilot, voyage.large_pilot, voyage.insurer]
                    .into_iter()
                    .flatten(),
            );
        for seat in spaces {
            let slot = placed
                .get_mut(seat as usize)
                .ok_or("an accomplice of an unknown seat")?;
            *slot += 1;
        }
        for (seat, player) in self.players.iter().enumerate() {
            if player.in_hand + placed[seat] != self.accomplices_total() {
                return Err(format!(
                    "seat {seat}: {} in hand + {} placed != {}",
                    player.in_hand,
                    placed[seat],
                    self.accomplices_total()
                ));
            }
        }
        // The pirate bow fills first (spec §4.3, §4.5).
        if voyage.pirates[1].is_some() && voyage.pirates[0].is_none() {
            return Err("second pirate place taken while the bow is empty".into());
        }
        if voyage.punts.is_empty() {
            return Ok(());
        }
        // Exactly 3 distinct wares, starts 0..5 summing to 9 (spec §2.5, §4.2, §9 A1).
        if voyage.punts.len() != 3 || voyage.punts.windows(2).any(|w| w[0].ware >= w[1].ware) {
            return Err("the punts are not 3 distinct wares in ware order".into());
        }
        if voyage.punts.iter().map(|p| p.start).sum::<u32>() != START_SUM
            || voyage.punts.iter().any(|p| p.start > MAX_START)
        {
            return Err("start spaces break the 0..5 / sum 9 rule".into());
        }
        let mut harbour_berths = Vec::new();
        let mut shipyard_berths = Vec::new();
        for punt in &voyage.punts {
            if punt.crew.len() > punt.slots() {
                return Err(format!("{:?} has more crew than slots", punt.ware));
            }
            if punt.plundered && !punt.crew.is_empty() {
                return Err("a plundered punt still has crew".into());
            }
            match punt.place {
                PuntPlace::AtSea if punt.position > LAST_SPACE => {
                    return Err(format!("{:?} at sea beyond 13", punt.ware));
                }
                PuntPlace::AtSea => {}
                PuntPlace::Harbour(berth) => harbour_berths.push(berth),
                PuntPlace::Shipyard(berth) => shipyard_berths.push(berth),
            }
        }
        // Berths fill A, B, C in order (spec §2.2, §4.4).
        harbour_berths.sort_unstable();
        shipyard_berths.sort_unstable();
        if harbour_berths != (0..voyage.docked).collect::<Vec<_>>()
            || shipyard_berths != (0..voyage.wrecked).collect::<Vec<_>>()
        {
            return Err("harbour or shipyard berths are not filled A, B, C in order".into());
        }
        if voyage.rolls < 2 && voyage.docked > 0 {
            // After roll 1 no punt can have arrived (spec §4.4).
            return Err("a punt arrived before roll 2".into());
        }
        Ok(())
    }
}

/// The §10 invariants of a settled voyage.
fn check_settlement(record: &SettlementRecord) -> Result<(), String> {
    if record.docked + record.wrecked != 3 {
        return Err(format!(
            "harbour {} + shipyard {} != 3",
            record.docked, record.wrecked
        ));
    }
    if let Some((_, owed)) = record.insurance
        && owed != INSURANCE_LIABILITY[record.wrecked]
    {
        return Err(format!("insurer owed {owed} for {} wrecks", record.wrecked));
    }
    let mut raised = 0;
    for ware in Ware::ALL {
        let (before, after) = (
            record.values_before[ware.index()],
            record.values_after[ware.index()],
        );
        if after < before || after > before + 1 {
            return Err(format!("{ware:?} moved from step {before} to {after}"));
        }
        if after > before {
            raised += 1;
            if !record.loaded.contains(&ware) {
                return Err(format!("{ware:?} rose without being loaded"));
            }
        }
    }
    if raised != record.docked {
        return Err(format!(
            "{raised} wares rose but {} punts docked",
            record.docked
        ));
    }
    Ok(())
}
