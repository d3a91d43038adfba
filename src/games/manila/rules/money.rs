//! Money (spec §5): mortgages (12), redemptions (15), forced mortgages to cover a payment, and the
//! anti-cycle guard on voluntary money actions (§9 A10, A11).

use crate::games::manila::data::*;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::games::{ActionError, LegalAction, Seat};
use crate::proto::manila::v1 as pb;

impl Manila {
    /// Voluntary mortgages and redemptions open to `seat` at its decision point (spec §5, §9 A11).
    /// Guard: after a mortgage, no redemption at the same decision point, and vice versa, so the
    /// listing can never offer an endless mortgage/redeem cycle (the pair is a pure loss of 3).
    pub(in crate::games::manila) fn money_actions(
        &self,
        seat: Seat,
        legal: &mut Vec<LegalAction<pb::Action>>,
    ) {
        let player = &self.players[seat as usize];
        let holdings = player.holdings();
        for ware in Ware::ALL {
            let i = ware.index();
            if self.money_mode != MoneyMode::Redeeming && holdings[i] > player.mortgaged[i] {
                legal.push(LegalAction::Exact(mortgage_share(ware)));
            }
            if self.money_mode != MoneyMode::Mortgaging
                && player.mortgaged[i] > 0
                && player.cash >= REDEMPTION_PRICE
            {
                legal.push(LegalAction::Exact(redeem_share(ware)));
            }
        }
    }

    /// A voluntary mortgage at the player's own decision point (spec §5, §9 A11 guard).
    pub(in crate::games::manila) fn mortgage_action(
        &mut self,
        seat: Seat,
        ware: i32,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let ware = Ware::from_pb(ware)
            .ok_or_else(|| ActionError::malformed("mortgage_share needs a ware"))?;
        if self.money_mode == MoneyMode::Redeeming {
            return Err(ActionError::illegal(
                "§5",
                "you redeemed a share at this decision point: mortgaging now would only lose money; make your move first",
            ));
        }
        let player = &self.players[seat as usize];
        if player.holdings()[ware.index()] <= player.mortgaged[ware.index()] {
            return Err(ActionError::illegal(
                "§5",
                format!("you have no unmortgaged {ware:?} share to mortgage"),
            ));
        }
        self.mortgage(seat, ware, false, events);
        self.money_mode = MoneyMode::Mortgaging;
        Ok(())
    }

    /// A voluntary redemption at the player's own decision point (spec §5, §9 A11 guard).
    pub(in crate::games::manila) fn redeem_action(
        &mut self,
        seat: Seat,
        ware: i32,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let ware = Ware::from_pb(ware)
            .ok_or_else(|| ActionError::malformed("redeem_share needs a ware"))?;
        if self.money_mode == MoneyMode::Mortgaging {
            return Err(ActionError::illegal(
                "§5",
                "you mortgaged a share at this decision point: redeeming now would only lose money; make your move first",
            ));
        }
        let player = &mut self.players[seat as usize];
        if player.mortgaged[ware.index()] == 0 {
            return Err(ActionError::illegal(
                "§5",
                format!("you have no mortgaged {ware:?} share to redeem"),
            ));
        }
        if player.cash < REDEMPTION_PRICE {
            return Err(ActionError::illegal(
                "§5",
                format!("redeeming costs 15 but you have {}", player.cash),
            ));
        }
        player.cash -= REDEMPTION_PRICE;
        player.mortgaged[ware.index()] -= 1;
        self.money_mode = MoneyMode::Redeeming;
        events.push(event(pb::event::Kind::ShareRedeemed(pb::ShareRedeemed {
            seat,
            ware: ware.to_pb(),
        })));
        Ok(())
    }

    /// Turns one share face down for 12 (caller checked one is free).
    pub(super) fn mortgage(
        &mut self,
        seat: Seat,
        ware: Ware,
        forced: bool,
        events: &mut Vec<pb::Event>,
    ) {
        let player = &mut self.players[seat as usize];
        player.mortgaged[ware.index()] += 1;
        player.cash += MORTGAGE_LOAN;
        events.push(event(pb::event::Kind::ShareMortgaged(pb::ShareMortgaged {
            seat,
            ware: ware.to_pb(),
            forced,
        })));
    }

    /// The share a forced mortgage takes: which one does not matter for scoring (spec §7, §9 A10),
    /// so the engine picks the free share of the least valuable ware (then the first in ware order).
    fn share_for_forced_mortgage(&self, seat: Seat) -> Option<Ware> {
        let player = &self.players[seat as usize];
        let holdings = player.holdings();
        Ware::ALL
            .into_iter()
            .filter(|w| holdings[w.index()] > player.mortgaged[w.index()])
            .min_by_key(|w| (self.values[w.index()], w.index()))
    }

    /// Pays `amount` to the bank, mortgaging as few shares as needed first (spec §5: bids, the
    /// share purchase and placements may be financed by mortgages). The caller has checked that
    /// `amount` is within [`super::Player::capacity`].
    pub(in crate::games::manila) fn pay(
        &mut self,
        seat: Seat,
        amount: u64,
        events: &mut Vec<pb::Event>,
    ) {
        self.raise_cash(seat, amount, events);
        let player = &mut self.players[seat as usize];
        player.cash -= amount.min(player.cash);
    }

    /// Mortgages shares (the minimum number, spec §9 A10) until `seat` has `amount` in cash or no
    /// free share is left.
    pub(super) fn raise_cash(&mut self, seat: Seat, amount: u64, events: &mut Vec<pb::Event>) {
        while self.players[seat as usize].cash < amount {
            let Some(ware) = self.share_for_forced_mortgage(seat) else {
                break;
            };
            self.mortgage(seat, ware, true, events);
        }
    }
}
