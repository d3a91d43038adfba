//! Nim, two players: the smallest game the service hosts, built only with the `nim` feature (test
//! builds). It exists to show, and to test, what adding a game takes: this folder, its proto file
//! (`proto/tabula/nim/v1/nim.proto`), one case in each generic `oneof` and one registry line.
//!
//! The rules, cited by refusals:
//! 1. The table starts with the config's number of heaps of 3, 4, 5, … counters (by default four
//!    heaps; three under rules version `nim-1`); seat 0 moves first, then the seats alternate.
//! 2. A move takes at least one counter from one heap, and at most the config's `max_take` (when
//!    set) and what the heap holds.
//! 3. Whoever takes the last counter wins.
//!
//! There is no chance and nothing hidden; the whole game is this file.
//!
//! # Rules versions
//!
//! Nim also shows what a rules change takes (docs/compatibility.md, *Rules versions*): `nim-2`
//! changed the default number of heaps from three to four, so `nim-1` stays listed in
//! [`Engine::EARLIER_RULES_VERSIONS`] and [`Engine::setup_under`] keeps its default for games
//! created under it; nothing else differs, so nothing else needs the version.

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::games::{
    ActionError, Chance, ConfigError, Engine, GameType, Information, LegalAction, Outcome,
    Redaction, Seat, Seed, Viewer,
};
use crate::proto::nim::v1 as pb;

/// How many heaps when the config says nothing (rule 1), under `nim-2`.
const DEFAULT_HEAPS: u32 = 4;
/// How many heaps when the config says nothing, under `nim-1`.
const DEFAULT_HEAPS_NIM_1: u32 = 3;
/// The most heaps a config may ask for.
const MAX_HEAPS: u32 = 16;
/// Counters on the first heap; each next heap has one more.
const FIRST_HEAP: u32 = 3;

/// A game of Nim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nim {
    heaps: Vec<u32>,
    /// The most counters one move may take; 0: no limit.
    max_take: u32,
    /// The seat to move next (meaningless once someone won).
    next: Seat,
    /// The seat that took the last counter (rule 3).
    winner: Option<Seat>,
}

impl Nim {
    /// The most counters a move may take from `heap` (rule 2).
    fn most_from(&self, heap: u32) -> u32 {
        match self.max_take {
            0 => heap,
            limit => heap.min(limit),
        }
    }
}

impl Engine for Nim {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const GAME_TYPE: GameType = GameType {
        name: "nim",
        display_name: "Nim",
        min_seats: 2,
        max_seats: 2,
        chance: Chance::Deterministic,
        information: Information::Perfect,
    };
    const RULES_VERSION: &'static str = "nim-2";
    const EARLIER_RULES_VERSIONS: &'static [&'static str] = &["nim-1"];

    fn config_for(_players: u32) -> pb::Config {
        pb::Config::default()
    }

    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
        Self::setup_under(Self::RULES_VERSION, config, seed)
    }

    fn setup_under(
        rules_version: &str,
        config: &pb::Config,
        _seed: &Seed,
    ) -> Result<Self, ConfigError> {
        let count = match (config.heaps, rules_version) {
            (0, "nim-1") => DEFAULT_HEAPS_NIM_1,
            (0, _) => DEFAULT_HEAPS,
            (count, _) => count,
        };
        if count > MAX_HEAPS {
            return Err(ConfigError(format!(
                "at most {MAX_HEAPS} heaps (got {count})"
            )));
        }
        let heaps = (0..count).map(|index| FIRST_HEAP + index).collect();
        Ok(Nim {
            heaps,
            max_take: config.max_take,
            next: 0,
            winner: None,
        })
    }

    fn seat_count(&self) -> u32 {
        2
    }

    fn to_act(&self) -> Option<Seat> {
        self.winner.is_none().then_some(self.next)
    }

    fn legal_actions(&self, seat: Seat) -> Vec<LegalAction<pb::Action>> {
        if self.to_act() != Some(seat) {
            return Vec::new();
        }
        (0u32..)
            .zip(&self.heaps)
            .filter(|(_, heap)| **heap > 0)
            .map(|(index, heap)| {
                let action = pb::Action {
                    heap: index,
                    count: 1,
                };
                match self.most_from(*heap) {
                    1 => LegalAction::Exact(action),
                    most => LegalAction::Amount {
                        action,
                        min: 1,
                        max: u64::from(most),
                    },
                }
            })
            .collect()
    }

    fn with_amount(action: &pb::Action, amount: u64) -> pb::Action {
        pb::Action {
            count: u32::try_from(amount).unwrap_or(u32::MAX),
            ..*action
        }
    }

    fn amount_field(_action: &pb::Action) -> Option<&'static str> {
        Some("count")
    }

    fn apply(&mut self, seat: Seat, action: &pb::Action) -> Result<Vec<pb::Event>, ActionError> {
        let Some(expected) = self.to_act() else {
            return Err(ActionError::GameOver);
        };
        if seat != expected {
            return Err(ActionError::NotYourTurn {
                seat,
                expected: format!("seat {expected}"),
                rule: "rule 1",
            });
        }
        let Some(heap) = self.heaps.get(action.heap as usize).copied() else {
            return Err(ActionError::malformed(format!(
                "there is no heap {} (the table has {})",
                action.heap,
                self.heaps.len()
            )));
        };
        if action.count == 0 {
            return Err(ActionError::illegal("rule 2", "take at least one counter"));
        }
        if action.count > self.most_from(heap) {
            return Err(ActionError::illegal(
                "rule 2",
                format!(
                    "heap {} allows taking at most {} counters, not {}",
                    action.heap,
                    self.most_from(heap),
                    action.count
                ),
            ));
        }
        let left = heap - action.count;
        self.heaps[action.heap as usize] = left;
        let mut events = vec![pb::Event {
            kind: Some(pb::event::Kind::Took(pb::event::Took {
                seat,
                heap: action.heap,
                count: action.count,
                left,
            })),
        }];
        if self.heaps.iter().all(|heap| *heap == 0) {
            self.winner = Some(seat);
            events.push(pb::Event {
                kind: Some(pb::event::Kind::Won(pb::event::Won { seat })),
            });
        } else {
            self.next = 1 - seat;
        }
        Ok(events)
    }

    fn view(&self, _viewer: Viewer) -> pb::View {
        pb::View {
            heaps: self.heaps.clone(),
            max_take: self.max_take,
        }
    }

    fn redact_event(_event: &pb::Event, _viewer: Viewer) -> Redaction<pb::Event> {
        Redaction::Public
    }

    fn outcome(&self) -> Option<Outcome> {
        let winner = self.winner?;
        Some(Outcome {
            scores: (0..2).map(|seat| i64::from(seat == winner)).collect(),
            winners: vec![winner],
        })
    }

    /// One counter from the first heap that has any: the smallest move, and a game of them ends.
    fn default_action(&self) -> Option<pb::Action> {
        self.to_act()?;
        let heap = self.heaps.iter().position(|heap| *heap > 0)?;
        Some(pb::Action {
            heap: heap as u32,
            count: 1,
        })
    }

    fn same_undisclosed(&self, _other: &Self) -> bool {
        // Nim has no chance and nothing face down.
        true
    }

    fn resample_hidden(&self, _viewer: Viewer, _seed: &Seed) -> Self {
        // Nothing is hidden.
        self.clone()
    }

    fn check_invariants(&self) -> Result<(), String> {
        let empty = self.heaps.iter().all(|heap| *heap == 0);
        if empty != self.winner.is_some() {
            return Err(format!(
                "heaps {:?} with winner {:?}: the game ends exactly when they are empty",
                self.heaps, self.winner
            ));
        }
        if self.next > 1 || self.heaps.len() > MAX_HEAPS as usize {
            return Err(format!("seat {} or {} heaps", self.next, self.heaps.len()));
        }
        Ok(())
    }
}
