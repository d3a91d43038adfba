//! What each viewer may see (spec §7): cash, the board, dice and placements are public; the wares
//! of each player's dealt shares and of his mortgaged shares are his secret (others see counts and
//! the shares he bought openly). The RNG never appears in a view or event. Also here: the
//! redaction of events and actions, and the resampling of what a viewer cannot see that the tests
//! use to prove it.

use super::data::*;
use super::rules::Step;
use super::wire::*;
use super::*;
use crate::games::common::GameRng;
use crate::games::{Redaction, Seat, Seed, Viewer};
use crate::proto::manila::v1 as pb;
use pb::action::Kind as A;
use pb::event::Kind as E;

/// `event` as `viewer` sees it (spec §7): the wares of a seat's dealt shares and of a share it
/// mortgages or redeems are its secret; everyone else sees the shares face down (the count stays).
/// Every other event, and these for their own seat, are public.
pub(super) fn redact(event: &pb::Event, viewer: Viewer) -> Redaction<pb::Event> {
    let secret_of = match &event.kind {
        Some(E::SharesDealt(d)) => d.seat,
        Some(E::ShareMortgaged(m)) => m.seat,
        Some(E::ShareRedeemed(r)) => r.seat,
        _ => return Redaction::Public,
    };
    if viewer.is(secret_of) {
        return Redaction::Public;
    }
    let mut event = event.clone();
    match &mut event.kind {
        Some(E::SharesDealt(d)) => d.wares.fill(0),
        Some(E::ShareMortgaged(m)) => m.ware = 0,
        Some(E::ShareRedeemed(r)) => r.ware = 0,
        _ => {}
    }
    Redaction::Replaced(event)
}

/// `action` by `author` as `viewer` sees it while the game runs (spec §7): which share a player
/// turns face down, or face up again, is his secret, so the ware of a mortgage or redemption is
/// blanked for everyone else; the table sees only that a share was turned. Every other action is
/// made openly.
pub(super) fn redact_action(action: &pb::Action, author: Seat, viewer: Viewer) -> pb::Action {
    let mut action = action.clone();
    if !viewer.is(author) {
        match &mut action.kind {
            Some(A::MortgageShare(m)) => m.ware = 0,
            Some(A::RedeemShare(r)) => r.ware = 0,
            _ => {}
        }
    }
    action
}

impl Manila {
    /// The state as `viewer` may see it (spec §7).
    pub(super) fn build_view(&self, viewer: Viewer) -> pb::View {
        let voyage = &self.voyage;
        let players = self
            .players
            .iter()
            .enumerate()
            .map(|(seat, player)| {
                let own = viewer.is(seat as u32);
                pb::PlayerView {
                    seat: seat as u32,
                    cash: player.cash,
                    accomplices_in_hand: player.in_hand,
                    accomplices_total: self.accomplices_total(),
                    share_count: player.share_count(),
                    mortgaged_count: player.mortgaged_count(),
                    bought: player.bought.iter().map(|w| w.to_pb()).collect(),
                    shares: if own {
                        ware_counts_to_pb(player.holdings())
                    } else {
                        Vec::new()
                    },
                    mortgaged: if own {
                        ware_counts_to_pb(player.mortgaged)
                    } else {
                        Vec::new()
                    },
                    declined: player.declined,
                    capacity: player.capacity(),
                }
            })
            .collect();
        let wares = Ware::ALL
            .iter()
            .map(|w| pb::WareStatus {
                ware: w.to_pb(),
                value: self.value(*w) as u32,
                supply: self.supply[w.index()],
            })
            .collect();
        let auction = match &self.phase {
            Phase::Auction(a) => Some(pb::AuctionView {
                opener: a.opener,
                high_bidder: a.high.map(|(s, _)| s),
                high_bid: a.high.map_or(0, |(_, b)| b),
                passed: (0..self.players_count)
                    .filter(|s| a.passed[*s as usize])
                    .collect(),
            }),
            _ => None,
        };
        let punts = voyage
            .punts
            .iter()
            .enumerate()
            .map(|(lane, p)| {
                let (status, berth) = match p.place {
                    PuntPlace::AtSea => (pb::PuntStatus::AtSea, 0),
                    PuntPlace::Harbour(b) => (pb::PuntStatus::Harbour, berth_to_pb(b)),
                    PuntPlace::Shipyard(b) => (pb::PuntStatus::Shipyard, berth_to_pb(b)),
                };
                pb::PuntView {
                    ware: p.ware.to_pb(),
                    lane: lane as u32,
                    start: p.start,
                    position: p.position,
                    status: status as i32,
                    berth,
                    crew: p.crew.clone(),
                    slot_costs: p.ware.crew_costs().iter().map(|c| *c as u32).collect(),
                    plundered: p.plundered,
                }
            })
            .collect();
        let berths = |occupants: &[Option<u32>; 3], filled: usize| {
            (0..3)
                .map(|b| pb::BerthView {
                    berth: berth_to_pb(b),
                    occupant: occupants[b],
                    has_punt: b < filled,
                })
                .collect()
        };
        let schedule = self.schedule();
        let through = (voyage.step + 1).min(schedule.len());
        let started = !voyage.punts.is_empty();
        let placement_round = if started {
            schedule[..through]
                .iter()
                .filter(|s| **s == Step::Place)
                .count() as u32
        } else {
            0
        };
        let (scores, winners) = self.result.clone().unwrap_or_default();
        pb::View {
            voyage: voyage.number,
            phase: phase_to_pb(&self.phase) as i32,
            harbour_master: voyage.harbour_master,
            players,
            wares,
            auction,
            punts,
            wharves: berths(&voyage.wharves, voyage.docked),
            shipyard: berths(&voyage.shipyard, voyage.wrecked),
            pirate_captain: voyage.pirates[0],
            pirate_second: voyage.pirates[1],
            small_pilot: voyage.small_pilot,
            large_pilot: voyage.large_pilot,
            insurer: voyage.insurer,
            placement_round,
            placement_rounds_total: schedule.iter().filter(|s| **s == Step::Place).count() as u32,
            rolls: voyage.rolls,
            last_roll: voyage
                .dice
                .last()
                .map_or_else(Vec::new, |dice| dice_to_pb(dice)),
            rolled: voyage
                .dice
                .iter()
                .enumerate()
                .map(|(i, dice)| pb::RollView {
                    roll: i as u32 + 1,
                    dice: dice_to_pb(dice),
                })
                .collect(),
            plunder_pending: match &self.phase {
                Phase::Plunder { pending } => pending.iter().map(|w| w.to_pb()).collect(),
                _ => Vec::new(),
            },
            scores,
            winners,
        }
    }

    /// Redraws what `viewer` cannot see: the dice to come, which player was dealt which of the
    /// secretly dealt shares (the multiset is known from the public supply and the viewer's own
    /// hand), and which of each other player's shares are the mortgaged ones.
    pub(super) fn resampled(&self, viewer: Viewer, seed: &Seed) -> Self {
        let mut state = self.clone();
        let mut rng = GameRng::from_seed(seed);
        let others: Vec<usize> = (0..self.players.len())
            .filter(|s| !viewer.is(*s as u32))
            .collect();
        let mut pool: Vec<Ware> = others
            .iter()
            .flat_map(|s| self.players[*s].dealt.clone())
            .collect();
        // Sorted before shuffling, so that the result depends on the seed and on what the viewer
        // may know (the multiset of the others' dealt shares) but not on who holds which: a bot
        // determinizes with this, and must decide the same in every state its seat cannot tell
        // apart (src/bots).
        pool.sort_unstable();
        rng.shuffle(&mut pool);
        for (&seat, dealt) in others.iter().zip(pool.chunks(SHARES_DEALT_EACH)) {
            let player = &mut state.players[seat];
            player.dealt = dealt.to_vec();
            let mut shares: Vec<Ware> =
                player.dealt.iter().chain(&player.bought).copied().collect();
            rng.shuffle(&mut shares);
            let mortgaged_count = self.players[seat].mortgaged_count() as usize;
            player.mortgaged = [0; 4];
            for ware in &shares[..mortgaged_count] {
                player.mortgaged[ware.index()] += 1;
            }
        }
        state.rng = GameRng::from_seed(&rng.next_seed());
        state
    }
}
