//! [`Hosted`]: one game's engine state with the table around it (its clock, open seats and kept
//! moves), and its [`GameState`] impl, the bridge between the generic wire messages and the
//! engine. The table entries themselves are in `table.rs`, `seating.rs` and `undo.rs`.

use super::table::SYSTEM_SEAT;
use super::{GameState, HostError, HostedGame, check_rules_version, clock, seating, table, undo};
use crate::bots::{Bot, BotError};
use crate::games::{ActionError, LegalAction, Redaction, Seat, Seed, Viewer};
use crate::narration::{self, Names};
use crate::proto::v1 as pb;

/// The start of every encoded state ([`GameState::encode`]): the format of the encoding, the
/// table and the engine state, then the turn clock. A snapshot of an older format (the engine
/// state alone, before table entries existed; no bot seats, before those; no clock, before turn
/// clocks; no open seats nor kept moves, before those) lacks it and is ignored, and the game replayed from its
/// log, instead of being decoded as something it is not.
const STATE_FORMAT: &[u8] = b"tabula-state/5:";

/// What the state hash covers: the table and the engine state, encoded as [`STATE_FORMAT`] does,
/// under the prefix of the format that had no clock. The clock is derived from the server times
/// logged with the entries, which the rules never read, so it is left out: a replay without
/// those times (VerifyLog) reaches the same hash, and hashes of games from before turn clocks
/// are unchanged. A game with open seats appends its seating ([`seating::Seating`]), one with an
/// undo policy its kept moves ([`undo::Takeback`]); games without either hash as they did before
/// those existed.
const HASHED_STATE_FORMAT: &[u8] = b"tabula-state/2:";

/// One hosted game's state: the engine's, and the table around it.
#[derive(Clone, Debug)]
pub(super) struct Hosted<E> {
    pub(super) table: table::Table,
    pub(super) engine: E,
    pub(super) clock: Option<clock::Clock>,
    /// The open seats, for a game created with some (`None` otherwise).
    pub(super) seating: Option<seating::Seating>,
    /// The moves kept for taking back, for a game with an undo policy (`None` otherwise).
    pub(super) undo: Option<Box<undo::Takeback<E>>>,
}

impl<E: HostedGame> Hosted<E> {
    /// The game `config` (this game's case) sets up, with randomness from `seed`.
    pub(super) fn set_up(
        config: &E::Config,
        table: Option<&pb::TableConfig>,
        seed: &Seed,
        rules_version: &str,
    ) -> Result<Self, HostError> {
        check_rules_version(E::KIND, rules_version)?;
        let engine = E::setup_under(rules_version, config, seed)?;
        let clock = clock::Clock::new(table, engine.seat_count())?;
        let seats = engine.seat_count();
        let hosted_table = table::Table::new(table, seats)?;
        let seating = seating::Seating::new(table, seats, |seat| hosted_table.bot(seat).is_some())?;
        Ok(Hosted {
            table: hosted_table,
            engine,
            clock,
            seating,
            undo: undo::Takeback::new(table)?.map(Box::new),
        })
    }

    /// A state back from [`GameState::encode`].
    pub(super) fn decode(bytes: &[u8]) -> Result<Self, HostError> {
        let restore_error = |reason: String| HostError::Restore {
            game: E::NAME,
            reason,
        };
        let encoded = bytes.strip_prefix(STATE_FORMAT).ok_or_else(|| {
            restore_error("not the current state format (an older snapshot?)".into())
        })?;
        let ((table, engine), rest): ((table::Table, E), &[u8]) =
            postcard::take_from_bytes(encoded).map_err(|e| restore_error(e.to_string()))?;
        let (clock, rest): (Option<clock::Clock>, &[u8]) =
            postcard::take_from_bytes(rest).map_err(|e| restore_error(e.to_string()))?;
        let (seating, rest): (Option<seating::Seating>, &[u8]) =
            postcard::take_from_bytes(rest).map_err(|e| restore_error(e.to_string()))?;
        let (undo, rest): (Option<Box<undo::Takeback<E>>>, &[u8]) =
            postcard::take_from_bytes(rest).map_err(|e| restore_error(e.to_string()))?;
        if !rest.is_empty() {
            return Err(restore_error(format!(
                "{} bytes left over after the state",
                rest.len()
            )));
        }
        Ok(Hosted {
            table,
            engine,
            clock,
            seating,
            undo,
        })
    }
}

pub(super) fn wrap_event<E: HostedGame>(event: E::Event) -> pb::Event {
    pb::Event {
        game: Some(E::wrap_event(event)),
        text: String::new(),
    }
}

impl<E: HostedGame> GameState for Hosted<E> {
    fn kind(&self) -> pb::GameKind {
        E::KIND
    }

    fn seat_count(&self) -> u32 {
        self.engine.seat_count()
    }

    fn status(&self) -> pb::GameStatus {
        self.table_status()
    }

    fn is_finished(&self) -> bool {
        self.seat_to_act().is_none() && !self.waiting_for_seats()
    }

    fn default_action(&self) -> Option<pb::Action> {
        self.wire_default_action()
    }

    fn legal_actions(&self, viewer: Viewer) -> Vec<pb::LegalAction> {
        let Viewer::Seat(seat) = viewer else {
            return Vec::new();
        };
        // Nobody acts once the table ended the game, and a resigned seat never does (unless it was
        // handed to a bot, which then decides for it).
        let resigned = self.table.has_left(seat) && self.table.bot(seat).is_none();
        if seat >= self.engine.seat_count()
            || self.is_finished()
            || self.waiting_for_seats()
            || resigned
        {
            return Vec::new();
        }
        self.engine
            .legal_actions(seat)
            .into_iter()
            .map(|legal| {
                let (action, amount_range, amount_field) = match legal {
                    LegalAction::Exact(action) => (action, None, String::new()),
                    LegalAction::Amount { action, min, max } => {
                        // The path from the generic Action: this game's case, then the game's
                        // own path to the field.
                        let field = E::amount_field(&action)
                            .map(|path| format!("{}.{path}", E::WIRE_CASE))
                            .unwrap_or_default();
                        (action, Some(pb::AmountRange { min, max }), field)
                    }
                };
                pb::LegalAction {
                    action: Some(pb::Action {
                        game: Some(E::wrap_action(action)),
                    }),
                    amount_range,
                    amount_field,
                    label: String::new(),
                }
            })
            .collect()
    }

    fn names(&self, players: &[pb::Player]) -> Names {
        Names::new(self.engine.seat_count(), players, E::seat_name)
    }

    fn event_text(&self, event: &pb::Event, names: &Names) -> Option<String> {
        match event.game.as_ref()? {
            pb::event::Game::Table(table) => narration::table_event_text(table, names),
            game => E::event_text(E::event_of(game)?, names),
        }
    }

    fn label_legal_actions(&self, viewer: Viewer, legal: &mut [pb::LegalAction], names: &Names) {
        if legal.is_empty() {
            return;
        }
        // One view for every label: the deciding seat's, which shows prices and its own hand.
        let view = self.engine.view(viewer);
        for entry in legal {
            let typed = entry
                .action
                .as_ref()
                .and_then(|action| action.game.as_ref())
                .and_then(E::action_of);
            if let Some(action) = typed {
                entry.label = E::choice_label(action, &view, names);
            }
        }
    }

    fn apply(&mut self, seat: Seat, action: &pb::Action) -> Result<Vec<pb::Event>, ActionError> {
        let game = action.game.as_ref().ok_or_else(|| {
            ActionError::malformed("the action names no game: set the case for this game's actions")
        })?;
        if let pb::action::Game::Table(table) = game {
            let events = self.apply_table(seat, table)?;
            if let Some(takeback) = self.undo.as_mut() {
                takeback.table_entry(table::is_undo_entry(table));
            }
            return Ok(events);
        }
        // Logs under verification can name any seat; engines may index by seat.
        if seat == SYSTEM_SEAT {
            return Err(ActionError::malformed(
                "the server makes no moves: a system entry is a timeout or an abort",
            ));
        }
        if seat >= self.engine.seat_count() {
            return Err(ActionError::malformed(format!(
                "seat {seat} does not exist: this game has {} seats",
                self.engine.seat_count()
            )));
        }
        let action = E::action_of(game).ok_or_else(|| {
            ActionError::malformed(format!(
                "this is a {} game; the action is for another game",
                E::NAME
            ))
        })?;
        // A game with an undo policy keeps the state before each move (`undo.rs`).
        let before = self.undo.as_ref().map(|_| undo::Before {
            table: self.table.clone(),
            engine: self.engine.clone(),
            seating: self.seating.clone(),
        });
        let events = self.apply_move(seat, action)?;
        if let (Some(takeback), Some(before)) = (self.undo.as_mut(), before) {
            takeback.moved(seat, action, before);
        }
        Ok(events)
    }

    fn apply_at(
        &mut self,
        seat: Seat,
        action: &pb::Action,
        server_time_ms: u64,
    ) -> Result<Vec<pb::Event>, ActionError> {
        let before = self.seat_to_act();
        let waited = self.waiting_for_seats();
        let events = self.apply(seat, action)?;
        if waited && !self.waiting_for_seats() {
            // The entry that took the last open seat starts the game: the first decision's
            // clock runs from it, not from the creation.
            if let Some(clock) = &mut self.clock {
                clock.start(server_time_ms);
            }
            return Ok(events);
        }
        if self.clock.is_some() {
            let timed_out = matches!(
                &action.game,
                Some(pb::action::Game::Table(pb::TableAction {
                    kind: Some(pb::table_action::Kind::Timeout(_))
                }))
            );
            let after = self.seat_to_act();
            if let Some(clock) = &mut self.clock {
                clock.tick(seat, before, after, timed_out, server_time_ms);
            }
        }
        Ok(events)
    }

    fn start_clock(&mut self, created_at_ms: u64) {
        if let Some(clock) = &mut self.clock {
            clock.start(created_at_ms);
        }
    }

    fn has_clock(&self) -> bool {
        self.clock.is_some()
    }

    fn deadline(&self) -> Option<(Seat, u64)> {
        let clock = self.clock.as_ref()?;
        let seat = self.seat_to_act()?;
        Some((seat, clock.deadline_ms(seat)))
    }

    fn decision_started_ms(&self) -> Option<u64> {
        self.deadline()?;
        Some(self.clock.as_ref()?.decision_started_ms())
    }

    fn clock_state(&self, now_ms: u64) -> Option<pb::ClockState> {
        Some(self.clock.as_ref()?.state(self.seat_to_act(), now_ms))
    }

    fn view(&self, viewer: Viewer) -> pb::View {
        pb::View {
            game: Some(E::wrap_view(self.engine.view(viewer))),
        }
    }

    fn redact(&self, events: &[pb::Event], viewer: Viewer) -> Vec<pb::Event> {
        events
            .iter()
            .filter_map(|event| {
                if let Some(pb::event::Game::Table(table)) = &event.game {
                    return Some(table::redact_table_event::<E>(event, table, viewer));
                }
                // Not this game's event: it was never produced here, so nothing to show.
                let typed = event.game.as_ref().and_then(E::event_of)?;
                match E::redact_event(typed, viewer) {
                    // The wire event as it is: one copy, no unwrapping and wrapping again.
                    Redaction::Public => Some(event.clone()),
                    Redaction::Hidden => None,
                    Redaction::Replaced(redacted) => Some(wrap_event::<E>(redacted)),
                }
            })
            .collect()
    }

    fn redact_action(&self, action: &pb::Action, author: Seat, viewer: Viewer) -> pb::Action {
        // Table entries carry no secret: resigning, a timeout and an abort happen in the open.
        if let Some(pb::action::Game::Table(_)) = &action.game {
            return action.clone();
        }
        match action.game.as_ref().and_then(E::action_of) {
            Some(typed) => pb::Action {
                game: Some(E::wrap_action(E::redact_action(typed, author, viewer))),
            },
            // Not this game's action: it was never accepted, so there is nothing to hide, but
            // nothing to show either.
            None => pb::Action::default(),
        }
    }

    fn opening_events(&self) -> Vec<pb::Event> {
        self.engine
            .opening_events()
            .into_iter()
            .map(wrap_event::<E>)
            .collect()
    }

    fn encode(&self) -> Vec<u8> {
        // Serializing plain data into a Vec cannot fail; an empty encoding would only make
        // hashes disagree (and a snapshot be ignored), never corrupt a log.
        let bytes = STATE_FORMAT.to_vec();
        postcard::to_extend(&(&self.table, &self.engine), bytes)
            .and_then(|bytes| postcard::to_extend(&self.clock, bytes))
            .and_then(|bytes| postcard::to_extend(&self.seating, bytes))
            .and_then(|bytes| postcard::to_extend(&self.undo, bytes))
            .unwrap_or_default()
    }

    fn hashed_encoding(&self) -> Vec<u8> {
        let bytes = HASHED_STATE_FORMAT.to_vec();
        let hashed = postcard::to_extend(&(&self.table, &self.engine), bytes);
        let hashed = match &self.seating {
            None => hashed,
            Some(seating) => hashed.and_then(|bytes| postcard::to_extend(seating, bytes)),
        };
        match &self.undo {
            None => hashed,
            Some(undo) => hashed.and_then(|bytes| postcard::to_extend(undo, bytes)),
        }
        .unwrap_or_default()
    }

    fn clone_box(&self) -> Box<dyn GameState> {
        Box::new(self.clone())
    }

    fn bot_action(&self, seat: Seat, bot: &Bot, seed: &Seed) -> Result<pb::Action, BotError> {
        // The bot knows who left the table: it plays their default actions in its search as the
        // table will, and does not count on them winning.
        let departures = self.table.departures();
        let action = crate::bots::decide_at_table(&self.engine, seat, bot, seed, &departures)?;
        Ok(pb::Action {
            game: Some(E::wrap_action(action)),
        })
    }

    fn bot_to_act(&self, time_limit: Option<std::time::Duration>) -> Option<(Seat, Bot)> {
        let seat = self.seat_to_act()?;
        let bot = self.table.bot(seat)?;
        Some((seat, bot.bot(time_limit)))
    }

    fn is_bot_seat(&self, seat: Seat) -> bool {
        self.table.bot(seat).is_some()
    }

    fn has_open_seating(&self) -> bool {
        self.seating.is_some()
    }

    fn joined_token_hash(&self, seat: Seat) -> Option<[u8; 32]> {
        self.seating.as_ref()?.token_hash(seat).copied()
    }

    fn invitation_used(&self, invitation: u32) -> bool {
        self.seating
            .as_ref()
            .is_some_and(|seating| seating.invitation_used(invitation))
    }

    fn joined_players(&self) -> Vec<pb::Player> {
        let Some(seating) = &self.seating else {
            return Vec::new();
        };
        let mut players: Vec<pb::Player> = seating
            .joined()
            .iter()
            .map(|joined| pb::Player {
                seat: joined.seat,
                display_name: joined.display_name.clone(),
                external_id: joined.external_id.clone(),
            })
            .collect();
        players.sort_by_key(|player| player.seat);
        players
    }
}
