//! What each viewer may see (spec §7): cash, the board, dice and placements are public; the wares
//! of each player's dealt shares and of his mortgaged shares are his secret (others see counts and
//! the shares he bought openly). The RNG never appears in a view or event.

use super::flow::berth_to_proto;
use super::{Manila, Phase, PuntPlace, Step, Ware, data::*};
use crate::games::common::GameRng;
use crate::games::{Engine, Seed, Viewer};
use crate::proto::v1::manila as pb;
use pb::event::Kind as E;

fn ware_counts(counts: [u32; 4]) -> Vec<pb::WareCount> {
    Ware::ALL
        .iter()
        .filter(|w| counts[w.index()] > 0)
        .map(|w| pb::WareCount {
            ware: w.to_proto(),
            count: counts[w.index()],
        })
        .collect()
}

/// `event` as `viewer` sees it: the ware of a mortgage or redemption is the owner's secret.
pub(super) fn redact(event: &pb::Event, viewer: Viewer) -> pb::Event {
    let mut event = event.clone();
    match &mut event.kind {
        Some(E::ShareMortgaged(m)) if !viewer.is(m.seat) => m.ware = 0,
        Some(E::ShareRedeemed(r)) if !viewer.is(r.seat) => r.ware = 0,
        _ => {}
    }
    event
}

impl Manila {
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
                    bought: player.bought.iter().map(|w| w.to_proto()).collect(),
                    shares: if own {
                        ware_counts(player.holdings())
                    } else {
                        Vec::new()
                    },
                    mortgaged: if own {
                        ware_counts(player.mortgaged)
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
                ware: w.to_proto(),
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
                    PuntPlace::Harbour(b) => (pb::PuntStatus::Harbour, berth_to_proto(b)),
                    PuntPlace::Shipyard(b) => (pb::PuntStatus::Shipyard, berth_to_proto(b)),
                };
                pb::PuntView {
                    ware: p.ware.to_proto(),
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
                    berth: berth_to_proto(b),
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
            phase: phase_to_proto(&self.phase) as i32,
            to_act: self.to_act(),
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
                .last_roll
                .iter()
                .map(|&(w, pips)| pb::DieView {
                    ware: w.to_proto(),
                    pips,
                })
                .collect(),
            plunder_pending: match &self.phase {
                Phase::Plunder { pending } => pending.iter().map(|w| w.to_proto()).collect(),
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

fn phase_to_proto(phase: &Phase) -> pb::Phase {
    match phase {
        Phase::Auction(_) => pb::Phase::Auction,
        Phase::Purchase => pb::Phase::SharePurchase,
        Phase::Loading => pb::Phase::Loading,
        Phase::Placement { .. } => pb::Phase::Placement,
        Phase::Boarding { .. } => pb::Phase::Boarding,
        Phase::Pilot { large: false } => pb::Phase::SmallPilot,
        Phase::Pilot { large: true } => pb::Phase::LargePilot,
        Phase::Plunder { .. } => pb::Phase::Plunder,
        Phase::Over => pb::Phase::Finished,
    }
}
