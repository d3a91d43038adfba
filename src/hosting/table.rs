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
//!
//! Every default action played is announced by a [`pb::table_event::DefaultActionPlayed`] event
//! before the game's own events, all redacted per viewer like any other.

use serde::{Deserialize, Serialize};

use super::{Hosted, HostedGame, wrap_event};
use crate::games::{ActionError, Seat};
use crate::proto::v1 as pb;
use pb::table_action::Kind as TableKind;
use pb::table_event::Kind as TableEventKind;

/// The seat number of the entries the server appends itself (timeouts, aborts): no seat at any
/// table. The wire marks such entries `system` and carries this number as their seat.
pub const SYSTEM_SEAT: Seat = Seat::MAX;

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
}

impl Table {
    /// A table with nobody gone, run by `config` (unset: the defaults).
    pub(super) fn new(
        config: Option<&pb::TableConfig>,
    ) -> Result<Table, crate::games::ConfigError> {
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
        })
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

fn table_event(kind: TableEventKind) -> pb::Event {
    pb::Event {
        game: Some(pb::event::Game::Table(pb::TableEvent { kind: Some(kind) })),
    }
}

fn game_ended(ending: pb::GameEnding, winners: Vec<Seat>) -> pb::Event {
    table_event(TableEventKind::GameEnded(pb::table_event::GameEnded {
        ending: ending as i32,
        winners,
    }))
}

impl<E: HostedGame> Hosted<E> {
    /// The seat that must act: nobody once the rules or the table ended the game.
    pub(super) fn seat_to_act(&self) -> Option<Seat> {
        if self.table.ended() {
            None
        } else {
            self.engine.to_act()
        }
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
        if self.table.has_left(seat) {
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
        if self.seat_to_act().is_none() {
            return Err(ActionError::GameOver);
        }
        match kind {
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
            TableKind::Abort(abort) => {
                if author != SYSTEM_SEAT {
                    return Err(ActionError::illegal(
                        TABLE_RULES,
                        "only the server aborts a game",
                    ));
                }
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
        }
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
                Some(seat) if self.table.has_left(seat) => {
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
mod tests {
    use super::*;
    use crate::games::common::GameRng;
    use crate::games::{Seed, Viewer};
    use crate::hosting::{GameState, restore, setup};
    use crate::proto::{la_strada, manila, strozzi};

    fn config(game: pb::game_config::Game, policy: pb::TimeoutPolicy) -> pb::GameConfig {
        pb::GameConfig {
            game: Some(game),
            table: Some(pb::TableConfig {
                timeout_policy: policy as i32,
                ..Default::default()
            }),
        }
    }

    fn strozzi(players: u32) -> pb::game_config::Game {
        pb::game_config::Game::Strozzi(strozzi::v1::Config {
            players,
            hidden_money: true,
            ..Default::default()
        })
    }

    fn manila(players: u32) -> pb::game_config::Game {
        pb::game_config::Game::Manila(manila::v1::Config {
            players,
            ..Default::default()
        })
    }

    fn la_strada(players: u32) -> pb::game_config::Game {
        pb::game_config::Game::LaStrada(la_strada::v1::Config {
            players,
            ..Default::default()
        })
    }

    fn medici() -> pb::game_config::Game {
        pb::game_config::Game::MediciVsStrozzi(Default::default())
    }

    fn table(kind: TableKind) -> pb::Action {
        pb::Action {
            game: Some(pb::action::Game::Table(pb::TableAction {
                kind: Some(kind),
            })),
        }
    }

    fn resign() -> pb::Action {
        table(TableKind::Resign(pb::table_action::Resign {}))
    }

    fn timeout(seat: Seat) -> pb::Action {
        table(TableKind::Timeout(pb::table_action::Timeout { seat }))
    }

    fn abort(reason: &str) -> pb::Action {
        table(TableKind::Abort(pb::table_action::Abort {
            reason: reason.into(),
        }))
    }

    fn table_events(events: &[pb::Event]) -> Vec<TableEventKind> {
        events
            .iter()
            .filter_map(|event| match &event.game {
                Some(pb::event::Game::Table(table)) => table.kind.clone(),
                _ => None,
            })
            .collect()
    }

    /// One random legal move by the seat to act.
    fn random_move(state: &mut Box<dyn GameState>, rng: &mut GameRng) -> Vec<pb::Event> {
        let seat = state.status().to_act.expect("someone acts");
        let legal = state.legal_actions(Viewer::Seat(seat));
        let entry = &legal[rng.index(legal.len())];
        let action = match &entry.amount_range {
            Some(range) => crate::hosting::with_amount(
                entry.action.as_ref().expect("action"),
                range.min + rng.below(range.max - range.min + 1),
            ),
            None => entry.action.clone().expect("action"),
        };
        state
            .apply(seat, &action)
            .expect("a listed move is accepted")
    }

    #[test]
    fn a_resignation_in_a_two_player_game_ends_it() {
        for game in [medici(), la_strada(2)] {
            let mut state = setup(
                &config(game, pb::TimeoutPolicy::Unspecified),
                &Seed::from_u64(1),
            )
            .expect("setup");
            let waiting = state.status().to_act.expect("someone acts");
            let events = state.apply(waiting, &resign()).expect("resigns");
            let status = state.status();
            assert!(status.finished && state.is_finished());
            assert_eq!(status.ending, pb::GameEnding::Resignation as i32);
            assert_eq!(status.winners, vec![1 - waiting]);
            assert_eq!(status.resigned, vec![waiting]);
            assert!(status.scores.is_empty());
            assert!(matches!(
                table_events(&events)[..],
                [
                    TableEventKind::SeatResigned(_),
                    TableEventKind::GameEnded(_)
                ]
            ));
            assert!(state.legal_actions(Viewer::Seat(1 - waiting)).is_empty());
            assert_eq!(
                state.apply(1 - waiting, &resign()),
                Err(ActionError::GameOver)
            );
        }
    }

    #[test]
    fn resigned_seats_play_their_defaults_and_never_win() {
        for (game, seats) in [(strozzi(4), 4u32), (manila(4), 4), (la_strada(3), 3)] {
            for seed in 0..20 {
                let mut state = setup(
                    &config(game, pb::TimeoutPolicy::Unspecified),
                    &Seed::from_u64(seed),
                )
                .expect("setup");
                let mut rng = GameRng::from_seed(&Seed::from_u64(seed + 100));
                for _ in 0..rng.below(30) {
                    random_move(&mut state, &mut rng);
                }
                let resigned = rng.below(u64::from(seats)) as Seat;
                state.apply(resigned, &resign()).expect("resigns");
                // The resigned seat moves no more, by itself or otherwise.
                assert!(matches!(
                    state.apply(resigned, &resign()),
                    Err(ActionError::Illegal { .. })
                ));
                let mut defaults = 0;
                while let Some(seat) = state.status().to_act {
                    assert_ne!(seat, resigned, "the game never waits for a resigned seat");
                    assert!(state.legal_actions(Viewer::Seat(resigned)).is_empty());
                    let events = random_move(&mut state, &mut rng);
                    defaults += table_events(&events)
                        .iter()
                        .filter(|kind| matches!(kind, TableEventKind::DefaultActionPlayed(played) if played.seat == resigned && !played.timed_out))
                        .count();
                }
                let status = state.status();
                assert_eq!(status.ending, pb::GameEnding::Rules as i32);
                assert_eq!(status.resigned, vec![resigned]);
                assert_eq!(status.scores.len(), seats as usize);
                assert!(!status.winners.is_empty());
                assert!(!status.winners.contains(&resigned), "{status:?}");
                assert!(
                    defaults > 0 || seats == 3,
                    "the resigned seat had to decide"
                );
                // The encoded state survives a round trip, table included.
                let restored = restore(state.kind(), &state.encode()).expect("restores");
                assert_eq!(restored.encode(), state.encode());
                assert_eq!(restored.status(), status);
            }
        }
    }

    #[test]
    fn the_last_seat_standing_wins() {
        let mut state = setup(
            &config(strozzi(4), pb::TimeoutPolicy::Unspecified),
            &Seed::from_u64(5),
        )
        .expect("setup");
        for seat in [3, 0, 2] {
            state.apply(seat, &resign()).expect("resigns");
        }
        let status = state.status();
        assert_eq!(status.ending, pb::GameEnding::Resignation as i32);
        assert_eq!(status.winners, vec![1]);
        assert_eq!(status.resigned, vec![3, 0, 2]);
    }

    #[test]
    fn a_timeout_plays_the_default_or_forfeits() {
        let seed = Seed::from_u64(9);
        let mut played =
            setup(&config(manila(3), pb::TimeoutPolicy::DefaultAction), &seed).expect("setup");
        let mut reference =
            setup(&config(manila(3), pb::TimeoutPolicy::DefaultAction), &seed).expect("setup");
        let waiting = played.status().to_act.expect("someone acts");
        let default = played.default_action().expect("a default");
        let events = played
            .apply(SYSTEM_SEAT, &timeout(waiting))
            .expect("times out");
        let kinds = table_events(&events);
        assert!(matches!(&kinds[0], TableEventKind::SeatTimedOut(t) if t.seat == waiting));
        assert!(
            matches!(&kinds[1], TableEventKind::DefaultActionPlayed(p) if p.seat == waiting && p.timed_out && p.action.as_ref() == Some(&default))
        );
        // The same as the seat playing its default itself, apart from the announcements.
        let own = reference.apply(waiting, &default).expect("plays");
        assert_eq!(&events[events.len() - own.len()..], &own[..]);
        assert_eq!(played.encode(), reference.encode());
        assert!(played.status().resigned.is_empty());

        let mut forfeited =
            setup(&config(manila(3), pb::TimeoutPolicy::Forfeit), &seed).expect("setup");
        let events = forfeited
            .apply(SYSTEM_SEAT, &timeout(waiting))
            .expect("times out");
        assert!(table_events(&events).iter().any(
            |kind| matches!(kind, TableEventKind::SeatResigned(r) if r.seat == waiting && r.forfeit)
        ));
        assert_eq!(forfeited.status().resigned, vec![waiting]);
        assert_ne!(forfeited.status().to_act, Some(waiting));
    }

    #[test]
    fn refusals_change_nothing() {
        let mut state = setup(
            &config(strozzi(3), pb::TimeoutPolicy::Unspecified),
            &Seed::from_u64(2),
        )
        .expect("setup");
        let before = state.encode();
        let waiting = state.status().to_act.expect("someone acts");
        let other = (waiting + 1) % 3;
        let refused = [
            (SYSTEM_SEAT, timeout(other)), // not the seat to act
            (waiting, timeout(waiting)),   // only the server times out
            (waiting, abort("no")),        // only the server aborts
            (SYSTEM_SEAT, resign()),       // the server does not resign
            (7, resign()),                 // no such seat
            (SYSTEM_SEAT, abort(&"x".repeat(MAX_ABORT_REASON_LEN + 1))),
            (
                waiting,
                pb::Action {
                    game: Some(pb::action::Game::Table(pb::TableAction { kind: None })),
                },
            ),
        ];
        for (author, action) in refused {
            assert!(state.apply(author, &action).is_err(), "{author} {action:?}");
            assert_eq!(state.encode(), before);
        }
        let legal = state.legal_actions(Viewer::Seat(waiting));
        let mv = legal[0].action.clone().expect("action");
        assert!(
            state.apply(SYSTEM_SEAT, &mv).is_err(),
            "the server makes no moves"
        );
        assert_eq!(state.encode(), before);
    }

    #[test]
    fn an_unknown_timeout_policy_is_a_config_error() {
        let unknown = pb::GameConfig {
            game: Some(medici()),
            table: Some(pb::TableConfig {
                timeout_policy: 99,
                ..Default::default()
            }),
        };
        let refused = setup(&unknown, &Seed::from_u64(1)).expect_err("refused");
        assert!(
            refused.to_string().contains("timeout_policy 99"),
            "{refused}"
        );
    }

    #[test]
    fn an_abort_ends_the_game_with_no_winners() {
        let mut state = setup(
            &config(la_strada(4), pb::TimeoutPolicy::Unspecified),
            &Seed::from_u64(4),
        )
        .expect("setup");
        state
            .apply(SYSTEM_SEAT, &abort("server maintenance"))
            .expect("aborts");
        let status = state.status();
        assert!(status.finished && status.to_act.is_none());
        assert_eq!(status.ending, pb::GameEnding::Aborted as i32);
        assert_eq!(status.abort_reason, "server maintenance");
        assert!(status.winners.is_empty() && status.scores.is_empty());
        assert_eq!(state.default_action(), None);
        assert_eq!(
            state.apply(SYSTEM_SEAT, &abort("again")),
            Err(ActionError::GameOver)
        );
    }

    #[test]
    fn an_older_state_format_is_refused_not_misread() {
        let manila_config = manila::v1::Config {
            players: 3,
            ..Default::default()
        };
        let engine = <crate::games::manila::Manila as crate::games::Engine>::setup(
            &manila_config,
            &Seed::from_u64(1),
        )
        .expect("setup");
        // What a snapshot held before table entries existed: the engine state alone.
        let legacy = postcard::to_stdvec(&engine).expect("encodes");
        assert!(restore(pb::GameKind::Manila, &legacy).is_err());
        let current = setup(
            &config(manila(3), pb::TimeoutPolicy::Unspecified),
            &Seed::from_u64(1),
        )
        .expect("setup");
        let mut trailing = current.encode();
        trailing.push(0);
        assert!(restore(pb::GameKind::Manila, &trailing).is_err());
        assert!(restore(pb::GameKind::Manila, &current.encode()).is_ok());
    }

    #[test]
    fn a_default_played_for_a_seat_is_redacted_like_its_action() {
        // Manila's mortgages are the only actions with a secret, and never defaults; the
        // announcement still goes through the game's action redaction.
        let state = setup(
            &config(manila(3), pb::TimeoutPolicy::Unspecified),
            &Seed::from_u64(3),
        )
        .expect("setup");
        let mortgage = pb::Action {
            game: Some(pb::action::Game::Manila(manila::v1::Action {
                kind: Some(manila::v1::action::Kind::MortgageShare(
                    manila::v1::MortgageShare {
                        ware: manila::v1::Ware::Jade as i32,
                    },
                )),
            })),
        };
        let announced = table_event(TableEventKind::DefaultActionPlayed(
            pb::table_event::DefaultActionPlayed {
                seat: 1,
                action: Some(mortgage.clone()),
                timed_out: true,
            },
        ));
        let seen = |viewer| state.redact(std::slice::from_ref(&announced), viewer);
        assert_eq!(seen(Viewer::Seat(1)), vec![announced.clone()]);
        let for_others = seen(Viewer::Seat(0));
        assert_ne!(for_others, vec![announced.clone()], "the ware is blanked");
        assert_eq!(
            for_others,
            vec![table_event(TableEventKind::DefaultActionPlayed(
                pb::table_event::DefaultActionPlayed {
                    seat: 1,
                    action: Some(state.redact_action(&mortgage, 1, Viewer::Seat(0))),
                    timed_out: true,
                },
            ))]
        );
    }
}
