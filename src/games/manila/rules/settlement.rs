//! The end of a voyage: wrecks, payouts in the rulebook's order A-D (spec §4.8) and the value
//! increase (§4.9); then the next voyage, or the end of the game (`scoring.rs`).

use crate::games::Seat;
use crate::games::manila::data::*;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

impl Manila {
    fn credit(&mut self, seat: Seat, amount: u64) {
        self.players[seat as usize].cash += amount;
    }

    /// Settles the voyage and starts the next one, or ends the game.
    pub(super) fn settle(&mut self, events: &mut Vec<pb::Event>) {
        // Every punt still at sea is wrecked (spec §4.7).
        for i in 0..self.voyage.punts.len() {
            if self.voyage.punts[i].at_sea() {
                let berth = self.wreck(i);
                let ware = self.voyage.punts[i].ware.to_pb();
                events.push(event(E::PuntWrecked(pb::PuntWrecked {
                    ware,
                    berth: berth_to_pb(berth),
                })));
            }
        }
        self.pay_pirates(events);
        self.pay_crews(events);
        self.pay_harbour(events);
        let insurance = self.pay_shipyard(events);
        self.raise_values(events, insurance);
        if self.values.contains(&TOP_STEP) {
            self.end_game(events);
        } else {
            let opener = self.voyage.harbour_master.unwrap_or(self.start_seat);
            self.start_voyage(opener, events);
        }
    }

    /// A. The pirates still on the ship share each plundered ware's payoff (spec §4.7, §4.8 A).
    /// Payoffs are even, so two pirates always split exactly (spec §2.1 note).
    fn pay_pirates(&mut self, events: &mut Vec<pb::Event>) {
        let pirates: Vec<Seat> = self.voyage.pirates.iter().flatten().copied().collect();
        if pirates.is_empty() {
            return;
        }
        let plundered: Vec<Ware> = self
            .voyage
            .punts
            .iter()
            .filter(|p| p.plundered)
            .map(|p| p.ware)
            .collect();
        for ware in plundered {
            let share = ware.payoff() / pirates.len() as u64;
            for &seat in &pirates {
                self.credit(seat, share);
                events.push(event(payout(
                    seat,
                    share,
                    pb::PayoutReason::Plunder,
                    Some(ware),
                    None,
                )));
            }
        }
    }

    /// B. Each unplundered punt in the harbour pays its payoff split among its crew (spec §4.8 B).
    fn pay_crews(&mut self, events: &mut Vec<pb::Event>) {
        let paying: Vec<(Ware, Vec<Seat>)> = self
            .voyage
            .punts
            .iter()
            .filter(|p| {
                matches!(p.place, PuntPlace::Harbour(_)) && !p.plundered && !p.crew.is_empty()
            })
            .map(|p| (p.ware, p.crew.clone()))
            .collect();
        for (ware, crew) in paying {
            let share = ware.payoff() / crew.len() as u64;
            for seat in crew {
                self.credit(seat, share);
                events.push(event(payout(
                    seat,
                    share,
                    pb::PayoutReason::Crew,
                    Some(ware),
                    None,
                )));
            }
        }
    }

    /// C. Wharf A/B/C pays its occupant when a punt lies there (spec §4.8 C).
    fn pay_harbour(&mut self, events: &mut Vec<pb::Event>) {
        for (berth, &pays) in BERTH_PAYS.iter().enumerate().take(self.voyage.docked) {
            if let Some(seat) = self.voyage.wharves[berth] {
                self.credit(seat, pays);
                events.push(event(payout(
                    seat,
                    pays,
                    pb::PayoutReason::Harbour,
                    None,
                    Some(berth),
                )));
            }
        }
    }

    /// D. Each shipyard berth holding a wreck owes 6/8/15 to its occupant (or, with an insurer, to
    /// the bank when empty). The insurer pays after collecting his other income, mortgaging as
    /// needed; what he still cannot pay the bank covers (spec §4.8 D). Returns the insurer and
    /// his total liability, his own berths included.
    fn pay_shipyard(&mut self, events: &mut Vec<pb::Event>) -> Option<(Seat, u64)> {
        let insurer = self.voyage.insurer;
        let mut owed = 0;
        let mut liability = 0;
        let mut to_occupants = Vec::new();
        for (berth, &amount) in BERTH_PAYS.iter().enumerate().take(self.voyage.wrecked) {
            let occupant = self.voyage.shipyard[berth];
            owed += amount;
            match (insurer, occupant) {
                // Paying himself nets to zero (spec §4.8 D, §10 example 11).
                (Some(i), Some(o)) if i == o => {}
                (Some(_), occupant) => {
                    liability += amount;
                    if let Some(o) = occupant {
                        to_occupants.push((o, amount, berth));
                    }
                }
                (None, Some(o)) => {
                    self.credit(o, amount);
                    events.push(event(payout(
                        o,
                        amount,
                        pb::PayoutReason::Shipyard,
                        None,
                        Some(berth),
                    )));
                }
                (None, None) => {}
            }
        }
        let insurer = insurer?;
        self.raise_cash(insurer, liability, events);
        let paid = liability.min(self.players[insurer as usize].cash);
        self.players[insurer as usize].cash -= paid;
        events.push(event(E::InsuranceSettled(pb::InsuranceSettled {
            insurer,
            owed,
            paid,
            bank_covered: liability - paid,
        })));
        for (seat, amount, berth) in to_occupants {
            self.credit(seat, amount);
            let mut paid_out = payout(seat, amount, pb::PayoutReason::Shipyard, None, Some(berth));
            if let E::Payout(p) = &mut paid_out {
                p.paid_by = Some(insurer);
            }
            events.push(event(paid_out));
        }
        Some((insurer, owed))
    }

    /// Every ware whose punt lies in the harbour moves one step up the track (spec §4.9).
    fn raise_values(&mut self, events: &mut Vec<pb::Event>, insurance: Option<(Seat, u64)>) {
        let before = self.values;
        let mut raised = Vec::new();
        for punt in &self.voyage.punts {
            if matches!(punt.place, PuntPlace::Harbour(_)) {
                let step = &mut self.values[punt.ware.index()];
                *step = (*step + 1).min(TOP_STEP);
                raised.push(pb::WareStatus {
                    ware: punt.ware.to_pb(),
                    value: VALUE_TRACK[*step] as u32,
                    supply: self.supply[punt.ware.index()],
                });
            }
        }
        if !raised.is_empty() {
            events.push(event(E::ValuesRaised(pb::ValuesRaised { raised })));
        }
        self.last_settlement = Some(SettlementRecord {
            loaded: self.voyage.punts.iter().map(|p| p.ware).collect(),
            docked: self.voyage.docked,
            wrecked: self.voyage.wrecked,
            insurance,
            values_before: before,
            values_after: self.values,
        });
    }
}
