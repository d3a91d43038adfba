//! The protobuf side of the game: config decoding, conversions between the rules' types and
//! their messages (`to_pb` / `from_pb`), and one builder per event kind (each wraps its message
//! with [`event`]).

use crate::games::{ActionError, ConfigError, Seat};
use crate::proto::strozzi::v1 as pb;

use super::{
    BonusPayment, CardId, Category, City, Claim, FlagKind, Goods, Layout, NextActiveRule, Options,
    ProgressTile, RoundEnd, RoundStartRule, ShipCard, TileId,
};
use pb::event::Kind;

// ------------------------------------------------------------------------------------------------
// Config

impl Options {
    /// The create-time options from the config, validated (unset fields take the recommended
    /// rulings).
    pub(super) fn from_pb(config: &pb::Config) -> Result<Options, ConfigError> {
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

    /// The options as the config message (shown in every view).
    pub(super) fn to_pb(&self) -> pb::Config {
        let o = self;
        pb::Config {
            players: o.players,
            first_seat: o.first_seat,
            random_first_seat: o.random_first_seat,
            hidden_money: o.hidden_money,
            track_layout: match o.layout {
                Layout::Short => pb::TrackLayout::Short,
                Layout::Numbered => pb::TrackLayout::Numbered,
            } as i32,
            round_start_rule: match o.round_start_rule {
                RoundStartRule::BestFlorence => pb::RoundStartRule::BestFlorence,
                RoundStartRule::KeepWhileNobodyMoved => pb::RoundStartRule::KeepWhileNobodyMoved,
            } as i32,
            rank_zero_progress_totals: o.rank_zero_progress_totals,
            bonus_payment: match o.bonus_payment {
                BonusPayment::EveryRound => pb::BonusPayment::EveryRound,
                BonusPayment::OnArrival => pb::BonusPayment::OnArrival,
            } as i32,
            goods_flag_needs_match: o.goods_flag_needs_match,
            optional_extra_steps: o.optional_extra_steps,
            pirate_chance_full_circle: o.pirate_chance_full_circle,
            tentative_overbid: o.tentative_overbid,
            next_active_rule: match o.next_active_rule {
                NextActiveRule::LeftOfTaker => pb::NextActiveRule::LeftOfTaker,
                NextActiveRule::LeftOfActive => pb::NextActiveRule::LeftOfActive,
            } as i32,
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Conversions

impl City {
    /// The city as its protobuf enum.
    pub fn to_pb(self) -> pb::City {
        match self {
            City::Venice => pb::City::Venice,
            City::Rome => pb::City::Rome,
            City::Naples => pb::City::Naples,
            City::Florence => pb::City::Florence,
        }
    }

    /// The city a client named; any other number is malformed.
    pub fn from_pb(value: i32) -> Result<City, ActionError> {
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
}

impl FlagKind {
    /// The flag as its protobuf enum.
    pub fn to_pb(self) -> pb::Flag {
        match self {
            FlagKind::Pirate => pb::Flag::Pirate,
            FlagKind::PlusOne => pb::Flag::PlusOne,
            FlagKind::Goods => pb::Flag::Goods,
        }
    }

    /// The flag a client named; any other number is malformed.
    pub fn from_pb(value: i32) -> Result<FlagKind, ActionError> {
        match pb::Flag::try_from(value) {
            Ok(pb::Flag::Pirate) => Ok(FlagKind::Pirate),
            Ok(pb::Flag::PlusOne) => Ok(FlagKind::PlusOne),
            Ok(pb::Flag::Goods) => Ok(FlagKind::Goods),
            _ => Err(ActionError::malformed(format!(
                "no flag {value}: use FLAG_PIRATE, FLAG_PLUS_ONE or FLAG_GOODS"
            ))),
        }
    }
}

impl Goods {
    /// The goods symbol as its protobuf enum.
    pub fn to_pb(self) -> pb::Goods {
        match self {
            Goods::Gold => pb::Goods::Gold,
            Goods::Grain => pb::Goods::Grain,
            Goods::Cloth => pb::Goods::Cloth,
        }
    }
}

impl Category {
    /// The category as its protobuf enum.
    pub fn to_pb(self) -> pb::Category {
        match self {
            Category::Art => pb::Category::Art,
            Category::Science => pb::Category::Science,
            Category::Architecture => pb::Category::Architecture,
        }
    }
}

impl ShipCard {
    /// The card, which is card `id` of the catalogue, as its protobuf message.
    pub fn to_pb(&self, id: CardId) -> pb::ShipCard {
        pb::ShipCard {
            id: u32::from(id),
            label: self.label.clone(),
            sails: u32::from(self.sails),
            gold: u32::from(self.gold),
            grain: u32::from(self.grain),
            cloth: u32::from(self.cloth),
            scrolls: u32::from(self.scrolls),
            progress: self.progress,
        }
    }
}

impl ProgressTile {
    /// The tile, which is tile `id` of the catalogue, as its protobuf message.
    pub fn to_pb(&self, id: TileId) -> pb::ProgressTile {
        pb::ProgressTile {
            id: u32::from(id),
            category: self.category.to_pb() as i32,
            value: u32::from(self.value),
            goods: self.goods.map_or(pb::Goods::Unspecified, Goods::to_pb) as i32,
        }
    }
}

impl Claim {
    /// The claim as its protobuf message.
    pub fn to_pb(self) -> pb::Claim {
        pb::Claim {
            seat: self.seat,
            flag: self.flag.to_pb() as i32,
        }
    }
}

impl RoundEnd {
    /// The reason as its protobuf enum.
    pub fn to_pb(self) -> pb::RoundEndReason {
        match self {
            RoundEnd::FlagsUsed => pb::RoundEndReason::FlagsUsed,
            RoundEnd::DeckEmpty => pb::RoundEndReason::DeckEmpty,
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Events

/// An event of `kind`.
pub fn event(kind: Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

/// A round began (spec A6.4, A11): its start player and the deck and removed counts.
pub fn round_started(round: u32, start_seat: Seat, deck: usize, removed: usize) -> pb::Event {
    event(Kind::RoundStarted(pb::RoundStarted {
        round,
        start_seat,
        deck_count: deck as u32,
        removed_count: removed as u32,
    }))
}

/// The active player turned over the top card (spec A7).
pub fn card_revealed(active_seat: Seat, card: &ShipCard, id: CardId, deck: usize) -> pb::Event {
    event(Kind::CardRevealed(pb::CardRevealed {
        active_seat,
        card: Some(card.to_pb(id)),
        deck_count: deck as u32,
    }))
}

/// A decider passed (spec A7).
pub fn passed(seat: Seat) -> pb::Event {
    event(Kind::Passed(pb::Passed { seat }))
}

/// A flag went on the card; tentative for +1/goods (spec A5, A7).
pub fn flag_played(seat: Seat, flag: FlagKind, tentative: bool) -> pb::Event {
    event(Kind::FlagPlayed(pb::FlagPlayed {
        seat,
        flag: flag.to_pb() as i32,
        tentative,
    }))
}

/// An overridden tentative flag went back to its owner (spec A5, A13 S10).
pub fn flag_returned(claim: Claim) -> pb::Event {
    event(Kind::FlagReturned(pb::FlagReturned {
        seat: claim.seat,
        flag: claim.flag.to_pb() as i32,
    }))
}

/// Everybody passed: the card is out for the round (spec A7).
pub fn card_set_aside(active_seat: Seat, card: &ShipCard, id: CardId) -> pb::Event {
    event(Kind::CardSetAside(pb::CardSetAside {
        active_seat,
        card: Some(card.to_pb(id)),
    }))
}

/// A claim stood or a pirate took the card (spec A7, A8.1).
pub fn ship_taken(claim: Claim, card: &ShipCard, id: CardId) -> pb::Event {
    event(Kind::ShipTaken(pb::ShipTaken {
        seat: claim.seat,
        flag: claim.flag.to_pb() as i32,
        card: Some(card.to_pb(id)),
    }))
}

/// The taker berthed the ship in a port, in speed order (spec A8.1, A8.2).
pub fn ship_placed(seat: Seat, port: City, speed: u8, place: usize, automatic: bool) -> pb::Event {
    event(Kind::ShipPlaced(pb::ShipPlaced {
        seat,
        port: port.to_pb() as i32,
        speed: u32::from(speed),
        place: place as u32,
        automatic,
    }))
}

/// A marker climbed (spec A8 "moving a marker").
pub fn marker_moved(
    seat: Seat,
    city: City,
    cause: pb::MoveCause,
    steps: u8,
    from: u8,
    to: u8,
    slot: usize,
) -> pb::Event {
    event(Kind::MarkerMoved(pb::MarkerMoved {
        seat,
        city: city.to_pb() as i32,
        cause: cause as i32,
        steps: u32::from(steps),
        from_space: u32::from(from),
        to_space: u32::from(to),
        slot: slot as u32,
    }))
}

/// The taker declined an optional step (spec A13 S8).
pub fn step_declined(seat: Seat, cause: pb::MoveCause) -> pb::Event {
    event(Kind::StepDeclined(pb::StepDeclined {
        seat,
        cause: cause as i32,
    }))
}

/// The taker took a face-up progress tile (spec A8.5).
pub fn tile_taken(seat: Seat, tile: &ProgressTile, id: TileId) -> pb::Event {
    event(Kind::ProgressTileTaken(pb::ProgressTileTaken {
        seat,
        tile: Some(tile.to_pb(id)),
    }))
}

/// The top of the stack was turned face up, if any was left (spec A8.5, A13 S13).
pub fn display_refilled(tile: Option<(&ProgressTile, TileId)>, stack: usize) -> pb::Event {
    event(Kind::DisplayRefilled(pb::DisplayRefilled {
        tile: tile.map(|(tile, id)| tile.to_pb(id)),
        stack_count: stack as u32,
    }))
}

/// Round scoring (spec A10); `money_hidden` marks the payouts and totals private to their seats (the
/// redaction in `view.rs` reads it).
pub fn round_scored(
    round: u32,
    reason: RoundEnd,
    payouts: Vec<pb::Payout>,
    earned: &[i64],
    money: &[i64],
    money_hidden: bool,
) -> pb::Event {
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
    event(Kind::RoundScored(pb::RoundScored {
        round,
        reason: reason.to_pb() as i32,
        payouts,
        money,
        money_hidden,
    }))
}

/// Final scoring and the winner (spec A12); everything is public now.
pub fn game_ended(
    awards: Vec<pb::ProgressAward>,
    money: Vec<i64>,
    winners: Vec<Seat>,
) -> pb::Event {
    event(Kind::GameEnded(pb::GameEnded {
        awards,
        money,
        winners,
    }))
}
