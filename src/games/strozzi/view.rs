//! What clients see: conversions to the protobuf types, the per-viewer view, event constructors
//! and event redaction. Hidden information (spec A13 S16): the deck order, the removed cards and
//! the progress stack are never put in a view or event; with `hidden_money`, money is shown only
//! to its owner until the game ends.

use crate::games::{ActionError, Seat, Viewer};
use crate::proto::v1::strozzi as pb;

use super::{
    CardId, Category, City, FlagKind, Goods, Phase, ProgressTile, ShipCard, Strozzi, TileId,
};

pub fn city_to_pb(city: City) -> pb::City {
    match city {
        City::Venice => pb::City::Venice,
        City::Rome => pb::City::Rome,
        City::Naples => pb::City::Naples,
        City::Florence => pb::City::Florence,
    }
}

pub fn city_from_pb(value: i32) -> Result<City, ActionError> {
    match pb::City::try_from(value) {
        Ok(pb::City::Venice) => Ok(City::Venice),
        Ok(pb::City::Rome) => Ok(City::Rome),
        Ok(pb::City::Naples) => Ok(City::Naples),
        Ok(pb::City::Florence) => Ok(City::Florence),
        _ => Err(ActionError::malformed(format!(
            "no city {value}: use CITY_VENICE, CITY_ROME or CITY_NAPLES"
        ))),
    }
}

pub fn flag_to_pb(flag: FlagKind) -> pb::Flag {
    match flag {
        FlagKind::Pirate => pb::Flag::Pirate,
        FlagKind::PlusOne => pb::Flag::PlusOne,
        FlagKind::Goods => pb::Flag::Goods,
    }
}

pub fn flag_from_pb(value: i32) -> Result<FlagKind, ActionError> {
    match pb::Flag::try_from(value) {
        Ok(pb::Flag::Pirate) => Ok(FlagKind::Pirate),
        Ok(pb::Flag::PlusOne) => Ok(FlagKind::PlusOne),
        Ok(pb::Flag::Goods) => Ok(FlagKind::Goods),
        _ => Err(ActionError::malformed(format!(
            "no flag {value}: use FLAG_PIRATE, FLAG_PLUS_ONE or FLAG_GOODS"
        ))),
    }
}

pub fn goods_to_pb(goods: Goods) -> pb::Goods {
    match goods {
        Goods::Gold => pb::Goods::Gold,
        Goods::Grain => pb::Goods::Grain,
        Goods::Cloth => pb::Goods::Cloth,
    }
}

pub fn category_to_pb(category: Category) -> pb::Category {
    match category {
        Category::Art => pb::Category::Art,
        Category::Science => pb::Category::Science,
        Category::Architecture => pb::Category::Architecture,
    }
}

pub fn card_to_pb(card: &ShipCard, id: CardId) -> pb::ShipCard {
    pb::ShipCard {
        id: u32::from(id),
        label: card.label.clone(),
        sails: u32::from(card.sails),
        gold: u32::from(card.gold),
        grain: u32::from(card.grain),
        cloth: u32::from(card.cloth),
        scrolls: u32::from(card.scrolls),
        progress: card.progress,
    }
}

pub fn tile_to_pb(tile: &ProgressTile, id: TileId) -> pb::ProgressTile {
    pb::ProgressTile {
        id: u32::from(id),
        category: category_to_pb(tile.category) as i32,
        value: u32::from(tile.value),
        goods: tile.goods.map_or(pb::Goods::Unspecified, goods_to_pb) as i32,
    }
}

fn claim_to_pb(seat: Seat, flag: FlagKind) -> pb::Claim {
    pb::Claim {
        seat,
        flag: flag_to_pb(flag) as i32,
    }
}

/// The event constructors, one per event kind.
pub mod event {
    use super::*;
    use crate::games::strozzi::Claim;
    use crate::games::strozzi::rules::RoundEnd;
    use pb::event::Kind;

    fn wrap(kind: Kind) -> pb::Event {
        pb::Event { kind: Some(kind) }
    }

    pub fn round_started(round: u32, start_seat: Seat, deck: usize, removed: usize) -> pb::Event {
        wrap(Kind::RoundStarted(pb::RoundStarted {
            round,
            start_seat,
            deck_count: deck as u32,
            removed_count: removed as u32,
        }))
    }

    pub fn card_revealed(active_seat: Seat, card: &ShipCard, id: CardId, deck: usize) -> pb::Event {
        wrap(Kind::CardRevealed(pb::CardRevealed {
            active_seat,
            card: Some(card_to_pb(card, id)),
            deck_count: deck as u32,
        }))
    }

    pub fn passed(seat: Seat) -> pb::Event {
        wrap(Kind::Passed(pb::Passed { seat }))
    }

    pub fn flag_played(seat: Seat, flag: FlagKind, tentative: bool) -> pb::Event {
        wrap(Kind::FlagPlayed(pb::FlagPlayed {
            seat,
            flag: flag_to_pb(flag) as i32,
            tentative,
        }))
    }

    pub fn flag_returned(claim: Claim) -> pb::Event {
        wrap(Kind::FlagReturned(pb::FlagReturned {
            seat: claim.seat,
            flag: flag_to_pb(claim.flag) as i32,
        }))
    }

    pub fn card_set_aside(active_seat: Seat, card: &ShipCard, id: CardId) -> pb::Event {
        wrap(Kind::CardSetAside(pb::CardSetAside {
            active_seat,
            card: Some(card_to_pb(card, id)),
        }))
    }

    pub fn ship_taken(claim: Claim, card: &ShipCard, id: CardId) -> pb::Event {
        wrap(Kind::ShipTaken(pb::ShipTaken {
            seat: claim.seat,
            flag: flag_to_pb(claim.flag) as i32,
            card: Some(card_to_pb(card, id)),
        }))
    }

    pub fn ship_placed(
        seat: Seat,
        port: City,
        speed: u8,
        place: usize,
        automatic: bool,
    ) -> pb::Event {
        wrap(Kind::ShipPlaced(pb::ShipPlaced {
            seat,
            port: city_to_pb(port) as i32,
            speed: u32::from(speed),
            place: place as u32,
            automatic,
        }))
    }

    pub fn marker_moved(
        seat: Seat,
        city: City,
        cause: pb::MoveCause,
        steps: u8,
        from: u8,
        to: u8,
        slot: usize,
    ) -> pb::Event {
        wrap(Kind::MarkerMoved(pb::MarkerMoved {
            seat,
            city: city_to_pb(city) as i32,
            cause: cause as i32,
            steps: u32::from(steps),
            from: u32::from(from),
            to: u32::from(to),
            slot: slot as u32,
        }))
    }

    pub fn step_declined(seat: Seat, cause: pb::MoveCause) -> pb::Event {
        wrap(Kind::StepDeclined(pb::StepDeclined {
            seat,
            cause: cause as i32,
        }))
    }

    pub fn tile_taken(seat: Seat, tile: &ProgressTile, id: TileId) -> pb::Event {
        wrap(Kind::ProgressTileTaken(pb::ProgressTileTaken {
            seat,
            tile: Some(tile_to_pb(tile, id)),
        }))
    }

    pub fn display_refilled(tile: Option<(&ProgressTile, TileId)>, stack: usize) -> pb::Event {
        wrap(Kind::DisplayRefilled(pb::DisplayRefilled {
            tile: tile.map(|(tile, id)| tile_to_pb(tile, id)),
            stack_count: stack as u32,
        }))
    }

    pub fn round_scored(
        round: u32,
        reason: RoundEnd,
        payouts: Vec<pb::Payout>,
        earned: &[i64],
        money: &[i64],
        money_hidden: bool,
    ) -> pb::Event {
        let reason = match reason {
            RoundEnd::FlagsUsed => pb::RoundEndReason::FlagsUsed,
            RoundEnd::DeckEmpty => pb::RoundEndReason::DeckEmpty,
        };
        let money = earned
            .iter()
            .zip(money)
            .enumerate()
            .map(|(seat, (&earned, &total))| pb::SeatMoney {
                seat: seat as Seat,
                earned,
                total,
            })
            .collect();
        wrap(Kind::RoundScored(pb::RoundScored {
            round,
            reason: reason as i32,
            payouts,
            money,
            money_hidden,
        }))
    }

    pub fn game_ended(
        awards: Vec<pb::ProgressAward>,
        money: Vec<i64>,
        winners: Vec<Seat>,
    ) -> pb::Event {
        wrap(Kind::GameEnded(pb::GameEnded {
            awards,
            money,
            winners,
        }))
    }
}

/// `event` as `viewer` may see it. Only round scoring under hidden money carries anything private:
/// each seat keeps its own payouts and money, a spectator none.
pub fn redact(event: &pb::Event, viewer: Viewer) -> pb::Event {
    let mut event = event.clone();
    if let Some(pb::event::Kind::RoundScored(scored)) = &mut event.kind
        && scored.money_hidden
    {
        scored.payouts.retain(|p| viewer.is(p.seat));
        scored.money.retain(|m| viewer.is(m.seat));
    }
    event
}

impl Strozzi {
    fn config_pb(&self) -> pb::Config {
        let o = &self.options;
        pb::Config {
            players: o.players,
            first_seat: o.first_seat,
            random_first_seat: o.random_first_seat,
            hidden_money: o.hidden_money,
            track_layout: match o.layout {
                super::Layout::Short => pb::TrackLayout::Short,
                super::Layout::Numbered => pb::TrackLayout::Numbered,
            } as i32,
            round_start_rule: match o.round_start_rule {
                super::RoundStartRule::BestFlorence => pb::RoundStartRule::BestFlorence,
                super::RoundStartRule::KeepWhileNobodyMoved => {
                    pb::RoundStartRule::KeepWhileNobodyMoved
                }
            } as i32,
            rank_zero_progress_totals: o.rank_zero_progress_totals,
            bonus_payment: match o.bonus_payment {
                super::BonusPayment::EveryRound => pb::BonusPayment::EveryRound,
                super::BonusPayment::OnArrival => pb::BonusPayment::OnArrival,
            } as i32,
            goods_flag_needs_match: o.goods_flag_needs_match,
            optional_extra_steps: o.optional_extra_steps,
            pirate_chance_full_circle: o.pirate_chance_full_circle,
            tentative_overbid: o.tentative_overbid,
            next_active_rule: match o.next_active_rule {
                super::NextActiveRule::LeftOfTaker => pb::NextActiveRule::LeftOfTaker,
                super::NextActiveRule::LeftOfActive => pb::NextActiveRule::LeftOfActive,
            } as i32,
        }
    }

    /// Whether `viewer` may see `seat`'s money now (spec A10, A13 S16).
    fn money_visible(&self, seat: Seat, viewer: Viewer) -> bool {
        !self.options.hidden_money || self.phase == Phase::Finished || viewer.is(seat)
    }

    pub(super) fn build_view(&self, viewer: Viewer) -> pb::View {
        let (phase, card, claim, taker, deciders) = match &self.phase {
            Phase::Deciding(decision) => (
                pb::Phase::Deciding,
                Some(decision.card),
                decision.claim.map(|c| claim_to_pb(c.seat, c.flag)),
                None,
                decision.deciders.clone(),
            ),
            Phase::PlacingShip { taker, flag, card } => (
                pb::Phase::PlacingShip,
                Some(*card),
                None,
                Some(claim_to_pb(*taker, *flag)),
                Vec::new(),
            ),
            Phase::ChoosingTile { taker, flag, card } => (
                pb::Phase::ChoosingTile,
                Some(*card),
                None,
                Some(claim_to_pb(*taker, *flag)),
                Vec::new(),
            ),
            Phase::Finished => (pb::Phase::Finished, None, None, None, Vec::new()),
        };
        let players = self
            .players
            .iter()
            .enumerate()
            .map(|(seat, player)| {
                let seat = seat as Seat;
                pb::PlayerView {
                    seat,
                    flags: player.flags.iter().map(|&f| flag_to_pb(f) as i32).collect(),
                    money: self.money_visible(seat, viewer).then_some(player.money),
                    tiles: player
                        .tiles
                        .iter()
                        .map(|&t| tile_to_pb(self.tile(t), t))
                        .collect(),
                }
            })
            .collect();
        let ports = City::PORTS
            .iter()
            .map(|&port| pb::Port {
                city: city_to_pb(port) as i32,
                ships: self.ports[port.index()]
                    .iter()
                    .map(|berth| pb::Berth {
                        owner: berth.owner,
                        card: Some(card_to_pb(self.card(berth.card), berth.card)),
                        flag: flag_to_pb(berth.flag) as i32,
                        speed: u32::from(berth.speed),
                    })
                    .collect(),
            })
            .collect();
        let tracks = City::ALL
            .iter()
            .map(|&city| {
                let geometry = &self.catalogue.tracks[city.index()];
                pb::Track {
                    city: city_to_pb(city) as i32,
                    top: u32::from(geometry.top),
                    bonus_spaces: geometry
                        .bonus
                        .iter()
                        .map(|b| pb::BonusSpace {
                            position: u32::from(b.position),
                            coins: b.coins,
                        })
                        .collect(),
                    spaces: self.tracks[city.index()]
                        .iter()
                        .enumerate()
                        .rev()
                        .filter(|(_, seats)| !seats.is_empty())
                        .map(|(position, seats)| pb::Space {
                            position: position as u32,
                            seats: seats.clone(),
                        })
                        .collect(),
                }
            })
            .collect();
        pb::View {
            round: self.round,
            phase: phase as i32,
            active_seat: self.active,
            to_act: self.seat_to_act(),
            card: card.map(|id| card_to_pb(self.card(id), id)),
            claim,
            taker,
            deciders,
            players,
            ports,
            tracks,
            display: self
                .display
                .iter()
                .map(|&t| tile_to_pb(self.tile(t), t))
                .collect(),
            stack_count: self.stack.len() as u32,
            deck_count: self.deck.len() as u32,
            removed_count: self.removed.len() as u32,
            set_aside: self
                .set_aside
                .iter()
                .map(|&c| card_to_pb(self.card(c), c))
                .collect(),
            round_start_seat: self.round_start_seat,
            winners: self.winners.clone(),
            config: Some(self.config_pb()),
        }
    }
}
