//! The harbour master's share purchase, loading and start spaces (spec §4.2, §2.5, §9 A1, A15).

use crate::games::manila::data::*;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::games::{ActionError, Seat};
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

/// The 25 ordered start triples 0..=5 summing to 9 (spec §2.5).
pub(super) fn start_triples() -> impl Iterator<Item = [u32; 3]> {
    (0..=MAX_START).flat_map(|a| {
        (0..=MAX_START).filter_map(move |b| {
            let c = START_SUM.checked_sub(a + b)?;
            (c <= MAX_START).then_some([a, b, c])
        })
    })
}

impl Manila {
    /// The price of a share: its value, but at least 5 (spec §4.2 a).
    fn share_price(&self, ware: Ware) -> u64 {
        self.value(ware).max(MIN_SHARE_PRICE)
    }

    /// The price `seat` pays for a share of `ware`, if the supply has one and he can raise it
    /// (spec §4.2 a, §9 A15).
    pub(super) fn share_purchase_check(&self, seat: Seat, ware: Ware) -> Result<u64, ActionError> {
        if self.supply[ware.index()] == 0 {
            return Err(ActionError::illegal(
                "§4.2",
                format!("no {ware:?} share is left in the supply"),
            ));
        }
        let price = self.share_price(ware);
        let capacity = self.players[seat as usize].capacity();
        if price > capacity {
            return Err(ActionError::illegal(
                "§4.2",
                format!("a {ware:?} share costs {price} but you can raise at most {capacity}"),
            ));
        }
        Ok(price)
    }

    /// The harbour master buys one share from the supply (spec §4.2 a).
    pub(in crate::games::manila) fn buy_share(
        &mut self,
        seat: Seat,
        ware: i32,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let ware = ware_from_pb(ware, "buy_share")?;
        if self.phase != Phase::Purchase {
            return Err(self.wrong_phase());
        }
        let price = self.share_purchase_check(seat, ware)?;
        self.pay(seat, price, events);
        self.supply[ware.index()] -= 1;
        self.players[seat as usize].bought.push(ware);
        events.push(event(E::ShareBought(pb::ShareBought {
            seat,
            ware: ware.to_pb(),
            price,
        })));
        self.phase = Phase::Loading;
        Ok(())
    }

    /// The harbour master buys no share this voyage (spec §9 A15).
    pub(in crate::games::manila) fn skip_purchase(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        if self.phase != Phase::Purchase {
            return Err(self.wrong_phase());
        }
        events.push(event(E::PurchaseSkipped(pb::PurchaseSkipped { seat })));
        self.phase = Phase::Loading;
        Ok(())
    }

    /// The harbour master loads 3 different wares on start spaces 0..5 summing to 9, then the
    /// schedule runs (spec §4.2 b-c, §2.5, §9 A1).
    pub(in crate::games::manila) fn load_punts(
        &mut self,
        seat: Seat,
        load: &pb::LoadPunts,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let mut starts = Vec::with_capacity(load.punts.len());
        for punt in &load.punts {
            starts.push((ware_from_pb(punt.ware, "each loaded punt")?, punt.start));
        }
        if self.phase != Phase::Loading {
            return Err(self.wrong_phase());
        }
        starts.sort_unstable();
        if starts.len() != 3 || starts.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(ActionError::illegal(
                "§4.2",
                "load exactly 3 different wares, one per punt (the fourth sits out)",
            ));
        }
        if let Some((ware, start)) = starts.iter().find(|(_, start)| *start > MAX_START) {
            return Err(ActionError::illegal(
                "§2.5",
                format!("{ware:?} cannot start on {start}: starts are 0 to 5"),
            ));
        }
        let sum: u32 = starts.iter().map(|(_, start)| start).sum();
        if sum != START_SUM {
            return Err(ActionError::illegal(
                "§2.5",
                format!("the start spaces must sum to 9 (they sum to {sum})"),
            ));
        }
        let left_out = Ware::ALL
            .into_iter()
            .find(|w| starts.iter().all(|(ware, _)| ware != w))
            .unwrap_or(Ware::Jade);
        self.voyage.punts = starts
            .iter()
            .map(|&(ware, start)| Punt {
                ware,
                start,
                position: start,
                place: PuntPlace::AtSea,
                crew: Vec::new(),
                plundered: false,
            })
            .collect();
        let punts = starts
            .iter()
            .map(|&(ware, start)| pb::PuntStart {
                ware: ware.to_pb(),
                start,
            })
            .collect();
        events.push(event(E::PuntsLoaded(pb::PuntsLoaded {
            seat,
            left_out: left_out.to_pb(),
            punts,
        })));
        self.voyage.step = 0;
        self.run_schedule(events);
        Ok(())
    }
}
