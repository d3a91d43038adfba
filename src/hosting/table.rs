//! Table entries: what happens at the table rather than in the game, the same in every game.
//!
//! A seat may resign; the server may log a timeout of the seat to act or abort the game. These
//! are logged actions like any move (the `table` case of the wire `Action`), appended through the
//! same conditional append and replayed with the log, so a replay needs no clock: what a timeout
//! does is fixed by the game's [`pb::TableConfig`], chosen at creation and stored with its config.
//!
//! The hosting layer keeps a [`Table`] beside the engine state: who left the game and whether the
//! table ended it. Engines know nothing of it; they only supply their default action
//! ([`crate::games::Engine::default_action`]) and their ranking ([`crate::games::Engine::winners_among`]).
//!
//! - **Resign.** The seat leaves. When a single seat remains, it wins at once (a two-player game
//!   always ends so). Otherwise the game goes on: the resigned seat ranks last and never wins, and
//!   whenever it must decide, its default action is played for it inside the entry that made it
//!   its turn, deterministically, so a replay reproduces it with no further entry.
//! - **Timeout** (server only) of the seat to act: its default action is played for it, or, under
//!   the forfeit policy, it resigns. Refused unless that seat is still the seat to act, so a move
//!   that arrived first wins.
//! - **Abort** (server only): the game ends with no winners, with the operator's reason.
//! - **Hand to a bot** (server only, for the operator): from this entry on the seat is played by a
//!   server bot. It changes no rule, but it is logged so that who played each move is part of the
//!   record, ordered against the moves by the same conditional append, and the same on every
//!   replica. A resigned seat may be handed over (issue #15: "take over a seat that left"): it
//!   stays resigned — it ranks last and never wins, and the table's "last seat left wins" still
//!   counts it as gone — but the bot decides for it instead of its default actions. Seats may also
//!   be bots from the start ([`pb::TableConfig::bots`]).
//!
//! Every default action played is announced by a [`pb::table_event::DefaultActionPlayed`] event
//! before the game's own events, all redacted per viewer like any other.

use serde::{Deserialize, Serialize};

use super::hosted::wrap_event;
use super::seating::{Seating, late_for_seats, waiting_refusal};
use super::undo::{Before, Decision};
use super::{Hosted, HostedGame};
use crate::games::{ActionError, Seat};
use crate::proto::v1 as pb;
use pb::table_action::Kind as TableKind;
use pb::table_event::Kind as TableEventKind;

/// The seat number of the entries the server appends itself (timeouts, aborts): no seat at any
/// table. The wire marks such entries `system` and carries this number as their seat.
pub const SYSTEM_SEAT: Seat = Seat::MAX;

/// The longest spectator delay accepted, in moves (`TableConfig.spectator_delay`).
pub const MAX_SPECTATOR_DELAY_MOVES: u32 = 1000;
/// The longest spectator delay accepted, in milliseconds: a day.
pub const MAX_SPECTATOR_DELAY_MS: u64 = 24 * 3600 * 1000;

/// The longest abort reason accepted, in bytes: it is stored in the log and shown to every player.
pub const MAX_ABORT_REASON_LEN: usize = 256;

/// A bound on the default actions one entry may play for resigned seats. Every game reaches a
/// decision of a seat still playing long before (tests play whole games of default actions), so
/// reaching it means an engine bug, reported instead of looping.
const MAX_DEFAULT_ACTIONS_PER_ENTRY: usize = 10_000;

/// Cited by refusals of table entries (the rules are the table's, not the game's).
const TABLE_RULES: &str = "table rules: resign, timeout, abort";

/// What a timeout of the seat to act does ([`pb::TimeoutPolicy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum TimeoutEffect {
    /// The seat's default action is played for it.
    DefaultAction,
    /// The seat resigns.
    Forfeit,
}

impl TimeoutEffect {
    fn to_pb(self) -> pb::TimeoutPolicy {
        match self {
            TimeoutEffect::DefaultAction => pb::TimeoutPolicy::DefaultAction,
            TimeoutEffect::Forfeit => pb::TimeoutPolicy::Forfeit,
        }
    }
}

/// The most iterations a bot seat's search may be given: about a second of one core per decision
/// in the slowest game, so a creator cannot make the service think for minutes; the server's time
/// limit per decision applies on top.
pub const MAX_BOT_ITERATIONS: u32 = 20_000;

/// Which bot plays a seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum BotPlayer {
    /// [`crate::bots::Bot::Random`].
    Random,
    /// [`crate::bots::Bot::Search`] with this many iterations per decision.
    Search { iterations: u32 },
}

/// A seat played by a bot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct BotSeat {
    pub(super) seat: Seat,
    pub(super) player: BotPlayer,
}

impl BotSeat {
    /// Checks a wire bot seat for a table of `seats` seats.
    pub(super) fn from_pb(bot: &pb::BotSeat, seats: u32) -> Result<BotSeat, String> {
        if bot.seat >= seats {
            return Err(format!(
                "bot seat {} does not exist: this game has {seats} seats",
                bot.seat
            ));
        }
        let player = match pb::BotKind::try_from(bot.kind) {
            Ok(pb::BotKind::Random) => BotPlayer::Random,
            Ok(pb::BotKind::Search) => {
                if bot.iterations > MAX_BOT_ITERATIONS {
                    return Err(format!(
                        "bot seat {}: {} iterations is over the limit of {MAX_BOT_ITERATIONS}",
                        bot.seat, bot.iterations
                    ));
                }
                BotPlayer::Search {
                    iterations: if bot.iterations == 0 {
                        crate::bots::DEFAULT_ITERATIONS
                    } else {
                        bot.iterations
                    },
                }
            }
            _ => {
                return Err(format!(
                    "bot seat {}: kind {} is not a bot: use BOT_KIND_RANDOM or BOT_KIND_SEARCH",
                    bot.seat, bot.kind
                ));
            }
        };
        Ok(BotSeat {
            seat: bot.seat,
            player,
        })
    }

    pub(super) fn to_pb(self) -> pb::BotSeat {
        let (kind, iterations) = match self.player {
            BotPlayer::Random => (pb::BotKind::Random, 0),
            BotPlayer::Search { iterations } => (pb::BotKind::Search, iterations),
        };
        pb::BotSeat {
            seat: self.seat,
            kind: kind as i32,
            iterations,
        }
    }

    /// The bot, its search cut short at `time_limit`.
    pub(super) fn bot(self, time_limit: Option<std::time::Duration>) -> crate::bots::Bot {
        match self.player {
            BotPlayer::Random => crate::bots::Bot::Random,
            BotPlayer::Search { iterations } => {
                crate::bots::Bot::Search(crate::bots::SearchSettings {
                    iterations,
                    time_limit,
                    ..Default::default()
                })
            }
        }
    }
}

/// A seat that left the game before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Departure {
    seat: Seat,
    /// It timed out under the forfeit policy rather than resigning itself.
    forfeit: bool,
}

/// How the table ended a game (the rules end it otherwise).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum TableEnd {
    /// Every other seat resigned.
    Resignation { winner: Seat },
    /// The server aborted it.
    Aborted { reason: String },
}

/// The table around one game: its timeout policy, who left, and whether the table ended it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Table {
    timeout: TimeoutEffect,
    /// In the order the seats left.
    departed: Vec<Departure>,
    end: Option<TableEnd>,
    /// The seats played by bots, in seat order.
    bots: Vec<BotSeat>,
}

impl Table {
    /// A table with nobody gone, run by `config` (unset: the defaults).
    pub(super) fn new(
        config: Option<&pb::TableConfig>,
        seats: u32,
    ) -> Result<Table, crate::games::ConfigError> {
        let mut bots: Vec<BotSeat> = Vec::new();
        for bot in config.map_or(&[][..], |config| &config.bots[..]) {
            let bot = BotSeat::from_pb(bot, seats)
                .map_err(|e| crate::games::ConfigError(format!("table.bots: {e}")))?;
            if bots.iter().any(|known| known.seat == bot.seat) {
                return Err(crate::games::ConfigError(format!(
                    "table.bots names seat {} twice",
                    bot.seat
                )));
            }
            bots.push(bot);
        }
        bots.sort_by_key(|bot| bot.seat);
        if let Some(delay) = config.and_then(|config| config.spectator_delay.as_ref())
            && (delay.moves > MAX_SPECTATOR_DELAY_MOVES || delay.ms > MAX_SPECTATOR_DELAY_MS)
        {
            return Err(crate::games::ConfigError(format!(
                "table.spectator_delay is {} moves and {} ms; the limits are \
                 {MAX_SPECTATOR_DELAY_MOVES} moves and {MAX_SPECTATOR_DELAY_MS} ms (a day)",
                delay.moves, delay.ms
            )));
        }
        let policy = config.map_or(0, |config| config.timeout_policy);
        let timeout = match pb::TimeoutPolicy::try_from(policy) {
            Ok(pb::TimeoutPolicy::Unspecified | pb::TimeoutPolicy::DefaultAction) => {
                TimeoutEffect::DefaultAction
            }
            Ok(pb::TimeoutPolicy::Forfeit) => TimeoutEffect::Forfeit,
            Err(_) => {
                return Err(crate::games::ConfigError(format!(
                    "unknown table.timeout_policy {policy}: use TIMEOUT_POLICY_DEFAULT_ACTION or \
                     TIMEOUT_POLICY_FORFEIT"
                )));
            }
        };
        Ok(Table {
            timeout,
            departed: Vec::new(),
            end: None,
            bots,
        })
    }

    /// The bot playing `seat`, if a bot does.
    pub(super) fn bot(&self, seat: Seat) -> Option<BotSeat> {
        self.bots.iter().copied().find(|bot| bot.seat == seat)
    }

    /// Whether `seat` has left and nobody decides for it: its default actions are played.
    fn plays_defaults(&self, seat: Seat) -> bool {
        self.has_left(seat) && self.bot(seat).is_none()
    }

    /// Who left, as a bot's search must model them (`crate::bots::Departures`).
    pub(super) fn departures(&self) -> crate::bots::Departures {
        let resigned = self.resigned();
        let playing_defaults = resigned
            .iter()
            .copied()
            .filter(|seat| self.plays_defaults(*seat))
            .collect();
        crate::bots::Departures {
            resigned,
            playing_defaults,
        }
    }

    /// The seats whose consent a table request (an undo) needs, of a table of `seat_count`: those
    /// still playing that a person plays (a bot and a resigned seat have no say).
    pub(super) fn consenting_seats(&self, seat_count: u32) -> Vec<Seat> {
        (0..seat_count)
            .filter(|seat| !self.has_left(*seat) && self.bot(*seat).is_none())
            .collect()
    }

    /// Whether `seat` resigned (or forfeited).
    pub(super) fn has_left(&self, seat: Seat) -> bool {
        self.departed.iter().any(|departure| departure.seat == seat)
    }

    /// The seats that resigned or forfeited, in order.
    pub(super) fn resigned(&self) -> Vec<Seat> {
        self.departed
            .iter()
            .map(|departure| departure.seat)
            .collect()
    }

    /// True once the table (not the rules) ended the game.
    pub(super) fn ended(&self) -> bool {
        self.end.is_some()
    }
}

pub(super) fn table_event(kind: TableEventKind) -> pb::Event {
    pb::Event {
        game: Some(pb::event::Game::Table(pb::TableEvent { kind: Some(kind) })),
        text: String::new(),
    }
}

fn game_ended(ending: pb::GameEnding, winners: Vec<Seat>) -> pb::Event {
    table_event(TableEventKind::GameEnded(pb::table_event::GameEnded {
        ending: ending as i32,
        winners,
    }))
}

impl<E: HostedGame> Hosted<E> {
    /// The seat that must act: nobody once the rules or the table ended the game, nor while
    /// seats are open.
    pub(super) fn seat_to_act(&self) -> Option<Seat> {
        if self.table.ended() || self.waiting_for_seats() {
            None
        } else {
            self.engine.to_act()
        }
    }

    /// True while the game waits for players to take its open seats.
    pub(super) fn waiting_for_seats(&self) -> bool {
        self.seating.as_ref().is_some_and(Seating::waiting)
    }

    /// The seats still playing (not resigned).
    fn remaining(&self) -> Vec<Seat> {
        (0..self.engine.seat_count())
            .filter(|seat| !self.table.has_left(*seat))
            .collect()
    }

    /// The game's status, with what the table adds: who resigned, how the game ended, and the
    /// winners when resigned seats cannot win.
    pub(super) fn table_status(&self) -> pb::GameStatus {
        let (ending, scores, winners, abort_reason) = match &self.table.end {
            Some(TableEnd::Aborted { reason }) => (
                pb::GameEnding::Aborted,
                Vec::new(),
                Vec::new(),
                reason.clone(),
            ),
            Some(TableEnd::Resignation { winner }) => (
                pb::GameEnding::Resignation,
                Vec::new(),
                vec![*winner],
                String::new(),
            ),
            None => match self.engine.outcome() {
                Some(outcome) => {
                    let winners = if self.table.departed.is_empty() {
                        outcome.winners
                    } else {
                        self.engine.winners_among(&self.remaining())
                    };
                    (
                        pb::GameEnding::Rules,
                        outcome.scores,
                        winners,
                        String::new(),
                    )
                }
                None => (
                    pb::GameEnding::Unspecified,
                    Vec::new(),
                    Vec::new(),
                    String::new(),
                ),
            },
        };
        pb::GameStatus {
            to_act: self.seat_to_act(),
            finished: ending != pb::GameEnding::Unspecified,
            scores,
            winners,
            resigned: self.table.resigned(),
            ending: ending as i32,
            abort_reason,
            bots: self.table.bots.iter().map(|bot| bot.to_pb()).collect(),
            open_seats: self
                .seating
                .as_ref()
                .map(|seating| seating.open().to_vec())
                .unwrap_or_default(),
            undo_request: self.undo.as_ref().and_then(|takeback| {
                takeback.request(&self.table.consenting_seats(self.engine.seat_count()))
            }),
        }
    }

    /// A move of the game by `seat`, followed by the default actions of resigned seats it leads
    /// to. All or nothing.
    pub(super) fn apply_move(
        &mut self,
        seat: Seat,
        action: &E::Action,
    ) -> Result<Vec<pb::Event>, ActionError> {
        if self.table.ended() {
            return Err(ActionError::GameOver);
        }
        if let Some(seating) = self.seating.as_ref().filter(|seating| seating.waiting()) {
            return Err(waiting_refusal(seating.open()));
        }
        if self.table.plays_defaults(seat) {
            return Err(ActionError::illegal(
                TABLE_RULES,
                format!("seat {seat} has resigned: it makes no more moves"),
            ));
        }
        if self.table.departed.is_empty() {
            // The common case: nobody to play for, and the engine's apply is all or nothing.
            let events = self.engine.apply(seat, action)?;
            return Ok(events.into_iter().map(wrap_event::<E>).collect());
        }
        self.atomically(|hosted, events| {
            let played = hosted.engine.apply(seat, action)?;
            events.extend(played.into_iter().map(wrap_event::<E>));
            hosted.play_for_resigned(events)
        })
    }

    /// A table entry by `author` (a seat, or [`SYSTEM_SEAT`] for the server). All or nothing.
    pub(super) fn apply_table(
        &mut self,
        author: Seat,
        action: &pb::TableAction,
    ) -> Result<Vec<pb::Event>, ActionError> {
        let kind = action.kind.as_ref().ok_or_else(|| {
            ActionError::malformed("the table action names no kind: set resign, timeout or abort")
        })?;
        let seats = self.engine.seat_count();
        if author != SYSTEM_SEAT && author >= seats {
            return Err(ActionError::malformed(format!(
                "seat {author} does not exist: this game has {seats} seats"
            )));
        }
        if let Some(seating) = self.seating.as_ref().filter(|seating| seating.waiting()) {
            // Before the game starts, only the seating entries and an abort.
            let open = seating.open().to_vec();
            return match kind {
                TableKind::Join(join) => {
                    only_the_server(author, "joins a player (JoinGame)")?;
                    self.atomically(|hosted, events| hosted.join(join, events))
                }
                TableKind::FillOpenSeats(fill) => {
                    only_the_server(author, "fills open seats (FillOpenSeats)")?;
                    self.atomically(|hosted, events| hosted.fill_open_seats(fill, events))
                }
                TableKind::Abort(abort) => self.abort(author, abort),
                TableKind::Resign(_)
                | TableKind::Timeout(_)
                | TableKind::HandToBot(_)
                | TableKind::Undo(_)
                | TableKind::AcceptUndo(_)
                | TableKind::DeclineUndo(_) => Err(waiting_refusal(&open)),
            };
        }
        if self.seat_to_act().is_none() {
            return Err(ActionError::GameOver);
        }
        match kind {
            TableKind::Join(_) | TableKind::FillOpenSeats(_) => {
                let join = match kind {
                    TableKind::Join(join) => Some(join),
                    _ => None,
                };
                Err(late_for_seats(self.seating.as_ref(), join))
            }
            TableKind::Resign(_) => {
                if author == SYSTEM_SEAT {
                    return Err(ActionError::illegal(
                        TABLE_RULES,
                        "only a seat resigns; the server appends a timeout instead",
                    ));
                }
                if self.table.has_left(author) {
                    return Err(ActionError::illegal(
                        TABLE_RULES,
                        format!("seat {author} has already resigned"),
                    ));
                }
                self.atomically(|hosted, events| hosted.depart(author, false, events))
            }
            TableKind::Timeout(timeout) => {
                if author != SYSTEM_SEAT {
                    return Err(ActionError::illegal(
                        TABLE_RULES,
                        "only the server appends a timeout",
                    ));
                }
                let expected = self.seat_to_act().unwrap_or_default();
                if timeout.seat != expected {
                    // Bounded: a seat number, not free text.
                    return Err(ActionError::illegal(
                        TABLE_RULES,
                        format!(
                            "seat {} is not the seat to act (seat {expected} is): a timeout only \
                             applies to the seat the game waits for",
                            timeout.seat
                        ),
                    ));
                }
                let seat = timeout.seat;
                let effect = self.table.timeout;
                self.atomically(|hosted, events| {
                    events.push(table_event(TableEventKind::SeatTimedOut(
                        pb::table_event::SeatTimedOut {
                            seat,
                            policy: effect.to_pb() as i32,
                        },
                    )));
                    match effect {
                        TimeoutEffect::DefaultAction => {
                            hosted.play_default(seat, true, events)?;
                            hosted.play_for_resigned(events)
                        }
                        TimeoutEffect::Forfeit => hosted.depart(seat, true, events),
                    }
                })
            }
            TableKind::HandToBot(hand) => {
                if author != SYSTEM_SEAT {
                    return Err(ActionError::illegal(
                        TABLE_RULES,
                        "only the server hands a seat to a bot (AdminService.HandSeatToBot)",
                    ));
                }
                let wire = hand.bot.as_ref().ok_or_else(|| {
                    ActionError::malformed("hand_to_bot.bot is required: name the seat and bot")
                })?;
                let bot = BotSeat::from_pb(wire, seats).map_err(ActionError::malformed)?;
                if self.table.bot(bot.seat).is_some() {
                    return Err(ActionError::illegal(
                        TABLE_RULES,
                        format!("seat {} is already played by a bot", bot.seat),
                    ));
                }
                self.table.bots.push(bot);
                self.table.bots.sort_by_key(|bot| bot.seat);
                Ok(vec![table_event(TableEventKind::SeatHandedToBot(
                    pb::table_event::SeatHandedToBot {
                        bot: Some(bot.to_pb()),
                    },
                ))])
            }
            TableKind::Abort(abort) => self.abort(author, abort),
            TableKind::Undo(_) | TableKind::AcceptUndo(_) | TableKind::DeclineUndo(_) => {
                self.undo_entry(author, kind)
            }
        }
    }

    /// An undo, or an answer to a request for one (`undo.rs`), by `author`. All or nothing.
    fn undo_entry(
        &mut self,
        author: Seat,
        kind: &TableKind,
    ) -> Result<Vec<pb::Event>, ActionError> {
        let needed = self.table.consenting_seats(self.engine.seat_count());
        if !needed.contains(&author) {
            return Err(ActionError::illegal(
                TABLE_RULES,
                "only a seat still playing takes moves back or answers a request to",
            ));
        }
        let to_act = self.seat_to_act();
        let Some(takeback) = self.undo.as_mut() else {
            return Err(ActionError::illegal(
                TABLE_RULES,
                "this game allows no undo (TableConfig.undo)",
            ));
        };
        let mut next = (**takeback).clone();
        let decision = match kind {
            TableKind::Undo(undo) => next.ask(author, undo.to_version, to_act, &needed),
            TableKind::AcceptUndo(_) => next.answer(author, true, &needed),
            _ => next.answer(author, false, &needed),
        }?;
        **takeback = next;
        match decision {
            Decision::GoBack(before, events) => {
                let Before {
                    table,
                    engine,
                    seating,
                } = *before;
                self.table = table;
                self.engine = engine;
                self.seating = seating;
                Ok(events)
            }
            Decision::Events(events) => Ok(events),
        }
    }

    /// The server's abort: the game ends with no winners.
    fn abort(
        &mut self,
        author: Seat,
        abort: &pb::table_action::Abort,
    ) -> Result<Vec<pb::Event>, ActionError> {
        only_the_server(author, "aborts a game")?;
        if abort.reason.len() > MAX_ABORT_REASON_LEN {
            return Err(ActionError::malformed(format!(
                "the abort reason is {} bytes long; the limit is {MAX_ABORT_REASON_LEN}",
                abort.reason.len()
            )));
        }
        self.table.end = Some(TableEnd::Aborted {
            reason: abort.reason.clone(),
        });
        Ok(vec![
            table_event(TableEventKind::GameAborted(pb::table_event::GameAborted {
                reason: abort.reason.clone(),
            })),
            game_ended(pb::GameEnding::Aborted, Vec::new()),
        ])
    }

    /// A join (see `seating.rs`); the last open seat taken starts the game.
    fn join(
        &mut self,
        join: &pb::table_action::Join,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let Some(seating) = self.seating.as_mut() else {
            return Err(ActionError::illegal(
                TABLE_RULES,
                "this game has no open seats (TableConfig.open_seats)",
            ));
        };
        seating.join(join)?;
        events.extend(seating.joined_event());
        self.start_when_seated(events)
    }

    /// Every open seat to a bot of `fill.bot`'s kind; the game starts.
    fn fill_open_seats(
        &mut self,
        fill: &pb::table_action::FillOpenSeats,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let wire = fill.bot.unwrap_or_default();
        let seats = self.engine.seat_count();
        let Some(seating) = self.seating.as_mut() else {
            return Err(ActionError::illegal(
                TABLE_RULES,
                "this game has no open seats (TableConfig.open_seats)",
            ));
        };
        for seat in seating.fill() {
            let bot = BotSeat::from_pb(&pb::BotSeat { seat, ..wire }, seats)
                .map_err(ActionError::malformed)?;
            self.table.bots.push(bot);
            events.push(table_event(TableEventKind::SeatHandedToBot(
                pb::table_event::SeatHandedToBot {
                    bot: Some(bot.to_pb()),
                },
            )));
        }
        self.table.bots.sort_by_key(|bot| bot.seat);
        self.start_when_seated(events)
    }

    /// Announces the start once no seat is open.
    fn start_when_seated(&mut self, events: &mut Vec<pb::Event>) -> Result<(), ActionError> {
        if !self.waiting_for_seats() {
            events.push(table_event(TableEventKind::GameStarted(
                pb::table_event::GameStarted {},
            )));
        }
        Ok(())
    }

    /// The default action for the seat to act, as the wire action (`None` once the game is over).
    pub(super) fn wire_default_action(&self) -> Option<pb::Action> {
        self.seat_to_act()?;
        self.engine.default_action().map(|action| pb::Action {
            game: Some(E::wrap_action(action)),
        })
    }

    /// Runs `change` on a copy and keeps the copy only if it succeeded: an entry is all or nothing
    /// even when it plays several actions.
    fn atomically(
        &mut self,
        change: impl FnOnce(&mut Self, &mut Vec<pb::Event>) -> Result<(), ActionError>,
    ) -> Result<Vec<pb::Event>, ActionError> {
        let mut next = self.clone();
        let mut events = Vec::new();
        change(&mut next, &mut events)?;
        *self = next;
        Ok(events)
    }

    /// `seat` leaves the game: the last seat left wins; otherwise play goes on without it.
    fn depart(
        &mut self,
        seat: Seat,
        forfeit: bool,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        self.table.departed.push(Departure { seat, forfeit });
        events.push(table_event(TableEventKind::SeatResigned(
            pb::table_event::SeatResigned { seat, forfeit },
        )));
        if let [winner] = self.remaining()[..] {
            self.table.end = Some(TableEnd::Resignation { winner });
            events.push(game_ended(pb::GameEnding::Resignation, vec![winner]));
            return Ok(());
        }
        self.play_for_resigned(events)
    }

    /// Plays the default action of every resigned seat the game waits for, until a seat still
    /// playing must decide or the game ends (then announcing the table's winners: resigned seats
    /// never win).
    fn play_for_resigned(&mut self, events: &mut Vec<pb::Event>) -> Result<(), ActionError> {
        for _ in 0..MAX_DEFAULT_ACTIONS_PER_ENTRY {
            match self.engine.to_act() {
                Some(seat) if self.table.plays_defaults(seat) => {
                    self.play_default(seat, false, events)?
                }
                Some(_) => return Ok(()),
                None => {
                    if !self.table.departed.is_empty() {
                        let winners = self.engine.winners_among(&self.remaining());
                        events.push(game_ended(pb::GameEnding::Rules, winners));
                    }
                    return Ok(());
                }
            }
        }
        Err(ActionError::illegal(
            TABLE_RULES,
            format!(
                "resigned seats played {MAX_DEFAULT_ACTIONS_PER_ENTRY} default actions in a row \
                 without the game reaching a seat still playing"
            ),
        ))
    }

    /// Plays the default action of `seat`, the seat to act, announcing it first.
    fn play_default(
        &mut self,
        seat: Seat,
        timed_out: bool,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let action = self.engine.default_action().ok_or_else(|| {
            ActionError::illegal(
                TABLE_RULES,
                format!("the game has no default action for seat {seat}"),
            )
        })?;
        let played = self.engine.apply(seat, &action)?;
        events.push(table_event(TableEventKind::DefaultActionPlayed(
            pb::table_event::DefaultActionPlayed {
                seat,
                action: Some(pb::Action {
                    game: Some(E::wrap_action(action)),
                }),
                timed_out,
            },
        )));
        events.extend(played.into_iter().map(wrap_event::<E>));
        Ok(())
    }
}

/// Whether `action` is an undo's own entry (an undo, an answer to a request for one), which
/// keeps the moves kept for taking back; any other table entry forgets them.
pub(super) fn is_undo_entry(action: &pb::TableAction) -> bool {
    matches!(
        action.kind,
        Some(TableKind::Undo(_) | TableKind::AcceptUndo(_) | TableKind::DeclineUndo(_))
    )
}

/// Refuses an entry only the server appends when `author` is a seat: "only the server `what`".
fn only_the_server(author: Seat, what: &str) -> Result<(), ActionError> {
    if author == SYSTEM_SEAT {
        Ok(())
    } else {
        Err(ActionError::illegal(
            TABLE_RULES,
            format!("only the server {what}"),
        ))
    }
}

/// What `viewer` may see of a table event: all of it, except that a default action played for a
/// seat is shown as that seat's action would be ([`crate::games::Engine::redact_action`]).
pub(super) fn redact_table_event<E: HostedGame>(
    event: &pb::Event,
    table: &pb::TableEvent,
    viewer: crate::games::Viewer,
) -> pb::Event {
    match &table.kind {
        Some(TableEventKind::DefaultActionPlayed(played)) => {
            let action = played
                .action
                .as_ref()
                .and_then(|action| action.game.as_ref())
                .and_then(E::action_of)
                .map(|typed| pb::Action {
                    game: Some(E::wrap_action(E::redact_action(typed, played.seat, viewer))),
                });
            table_event(TableEventKind::DefaultActionPlayed(
                pb::table_event::DefaultActionPlayed {
                    action,
                    ..played.clone()
                },
            ))
        }
        _ => event.clone(),
    }
}

#[cfg(test)]
mod tests;
