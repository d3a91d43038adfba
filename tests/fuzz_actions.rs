//! Structured fuzzing of every engine through the wire messages clients send.
//!
//! Byte-level fuzzing (the random-play harness corrupts encoded actions) rarely produces a
//! well-formed action with a hostile *value*: an `i32::MIN` step count, an enum number no version
//! of the proto defines, a price of `u32::MAX`. This test builds such actions from the protobuf
//! descriptors themselves, so it covers every field of every game's actions with no per-game code
//! and keeps covering new fields as the protos grow:
//! - a listed legal action with one or more fields replaced by an extreme or arbitrary value;
//! - an action of the right game built from scratch (a random case, random fields);
//! - occasionally an action of another game.
//!
//! Each is applied to a random reachable state (random legal play from a seeded setup), as the
//! seat to act and as another seat. The test profile keeps overflow checks on, so arithmetic on a
//! client's number that could overflow panics here. The contract: never a panic, and a refused
//! action leaves the state byte-identical.

use std::panic::{AssertUnwindSafe, catch_unwind};

use prost::Message;
use prost_reflect::{
    DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value,
};
use tabula::games::common::GameRng;
use tabula::games::{Seed, Viewer};
use tabula::hosting::{self, GameState};
use tabula::proto::{FILE_DESCRIPTOR_SET, manila, medici_vs_strozzi, strozzi, v1 as pb};

/// Fuzzed actions per game (split over the game's configs and seeds).
const ACTIONS_PER_GAME: usize = 1_000_000;
/// Fuzzed actions tried on each reached state before play moves on.
const ACTIONS_PER_STATE: usize = 64;

fn pool() -> DescriptorPool {
    DescriptorPool::decode(FILE_DESCRIPTOR_SET).expect("the bundled descriptor set decodes")
}

/// Extreme and ordinary values for every integer width: the boundaries, their neighbours, small
/// numbers near the rules' ranges, and anything at all.
fn int_value(rng: &mut GameRng, min: i64, max: i64) -> i64 {
    let special = [
        min,
        min.saturating_add(1),
        -1,
        0,
        1,
        2,
        3,
        13,
        14,
        255,
        256,
        65_535,
        max.saturating_sub(1),
        max,
    ];
    match rng.below(4) {
        0 | 1 => special[rng.index(special.len())].clamp(min, max),
        2 => (rng.below(40) as i64 - 10).clamp(min, max),
        _ => {
            let bits = rng.below(u64::MAX) as i64;
            if min == 0 {
                bits.rem_euclid(max.max(1))
            } else {
                bits.clamp(min, max)
            }
        }
    }
}

fn uint_value(rng: &mut GameRng, max: u64) -> u64 {
    let special = [0, 1, 2, 3, 13, 255, 256, 65_535, max - 1, max];
    match rng.below(4) {
        0 | 1 => special[rng.index(special.len())],
        2 => rng.below(40),
        _ => rng.below(max),
    }
}

/// A value for one (non-repeated) field.
fn scalar(rng: &mut GameRng, field: &FieldDescriptor, depth: u32) -> Value {
    match field.kind() {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            Value::I32(int_value(rng, i32::MIN.into(), i32::MAX.into()) as i32)
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            Value::I64(int_value(rng, i64::MIN, i64::MAX))
        }
        Kind::Uint32 | Kind::Fixed32 => Value::U32(uint_value(rng, u32::MAX.into()) as u32),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(uint_value(rng, u64::MAX)),
        Kind::Bool => Value::Bool(rng.below(2) == 1),
        Kind::Float => Value::F32([0.0, -1.0, f32::NAN, f32::INFINITY][rng.index(4)]),
        Kind::Double => Value::F64([0.0, -1.0, f64::NAN, f64::INFINITY][rng.index(4)]),
        Kind::String => Value::String(["", "x", "\u{0}", "🂡"][rng.index(4)].repeat(rng.index(3))),
        Kind::Bytes => Value::Bytes(vec![0xFF; rng.index(4)].into()),
        Kind::Enum(descriptor) => {
            let known: Vec<i32> = descriptor.values().map(|v| v.number()).collect();
            // Mostly defined numbers, sometimes numbers no version of the proto defines.
            Value::EnumNumber(match rng.below(3) {
                0 | 1 => known[rng.index(known.len())],
                _ => [i32::MIN, -1, 99, 12_345, i32::MAX][rng.index(5)],
            })
        }
        Kind::Message(descriptor) => Value::Message(random_message(rng, &descriptor, depth + 1)),
    }
}

fn field_value(rng: &mut GameRng, field: &FieldDescriptor, depth: u32) -> Value {
    if field.is_list() {
        let len = if depth > 3 { 0 } else { rng.index(5) };
        Value::List((0..len).map(|_| scalar(rng, field, depth)).collect())
    } else {
        scalar(rng, field, depth)
    }
}

/// A message of `descriptor` with a random subset of its fields set (one case per oneof).
fn random_message(rng: &mut GameRng, descriptor: &MessageDescriptor, depth: u32) -> DynamicMessage {
    let mut message = DynamicMessage::new(descriptor.clone());
    if depth > 4 {
        return message;
    }
    for oneof in descriptor.oneofs() {
        let cases: Vec<FieldDescriptor> = oneof.fields().collect();
        if !cases.is_empty() && rng.below(8) != 0 {
            let case = &cases[rng.index(cases.len())];
            message.set_field(case, field_value(rng, case, depth));
        }
    }
    for field in descriptor
        .fields()
        .filter(|f| f.containing_oneof().is_none())
    {
        if rng.below(3) != 0 {
            message.set_field(&field, field_value(rng, &field, depth));
        }
    }
    message
}

/// Replaces one field somewhere inside `message` (at any depth) with a random value.
fn mutate(rng: &mut GameRng, message: &mut DynamicMessage, depth: u32) {
    let set: Vec<FieldDescriptor> = message
        .descriptor()
        .fields()
        .filter(|f| message.has_field(f))
        .collect();
    // Descend into a set sub-message half the time, so deep fields get hit as often as shallow.
    if !set.is_empty() && rng.below(2) == 0 {
        let field = &set[rng.index(set.len())];
        if let Kind::Message(_) = field.kind()
            && !field.is_list()
            && !field.is_map()
            && let Some(Value::Message(inner)) = message.get_field_mut(field).into()
        {
            mutate(rng, inner, depth + 1);
            return;
        }
    }
    let fields: Vec<FieldDescriptor> = message.descriptor().fields().collect();
    if fields.is_empty() {
        return;
    }
    let field = &fields[rng.index(fields.len())];
    if field.is_list() && rng.below(2) == 0 {
        // Grow or shrink a list: duplicated or missing entries.
        if let Value::List(items) = message.get_field_mut(field) {
            match items.pop() {
                Some(last) if rng.below(2) == 0 => {
                    items.push(last.clone());
                    items.push(last);
                }
                _ => {}
            }
            return;
        }
    }
    message.set_field(field, field_value(rng, field, depth));
}

struct Fuzzer {
    rng: GameRng,
    action: MessageDescriptor,
    /// The `tabula.v1.Action` oneof case of the game under test.
    own_case: FieldDescriptor,
    tried: usize,
    refused: usize,
}

impl Fuzzer {
    fn new(seed: u64, game_case: &str) -> Fuzzer {
        let action = pool()
            .get_message_by_name("tabula.v1.Action")
            .expect("tabula.v1.Action");
        let own_case = action
            .get_field_by_name(game_case)
            .unwrap_or_else(|| panic!("Action has no case {game_case}"));
        Fuzzer {
            rng: GameRng::from_seed(&Seed::from_u64(seed)),
            action,
            own_case,
            tried: 0,
            refused: 0,
        }
    }

    /// One hostile action for `state`, derived from its legal actions when it has some.
    fn hostile(&mut self, legal: &[pb::LegalAction]) -> pb::Action {
        let mut message = match self.rng.below(8) {
            0 => random_message(&mut self.rng, &self.action, 0),
            1 => {
                let mut message = DynamicMessage::new(self.action.clone());
                let Kind::Message(game) = self.own_case.kind() else {
                    unreachable!("a game case is a message")
                };
                message.set_field(
                    &self.own_case,
                    Value::Message(random_message(&mut self.rng, &game, 1)),
                );
                message
            }
            _ if !legal.is_empty() => {
                let entry = &legal[self.rng.index(legal.len())];
                let action = entry.action.clone().unwrap_or_default();
                let mut message =
                    DynamicMessage::decode(self.action.clone(), action.encode_to_vec().as_slice())
                        .expect("a listed action decodes");
                for _ in 0..=self.rng.index(3) {
                    mutate(&mut self.rng, &mut message, 0);
                }
                message
            }
            _ => random_message(&mut self.rng, &self.action, 0),
        };
        // Round-trip through bytes, exactly as a request arrives (unknown enum numbers included).
        let bytes = std::mem::replace(&mut message, DynamicMessage::new(self.action.clone()))
            .encode_to_vec();
        pb::Action::decode(bytes.as_slice()).unwrap_or_default()
    }

    /// Applies fuzzed actions to `state` (unchanged) and checks the contract.
    fn attack(&mut self, state: &dyn GameState, count: usize) -> Result<(), String> {
        let to_act = state.status().to_act;
        let legal = to_act
            .map(|seat| state.legal_actions(Viewer::Seat(seat)))
            .unwrap_or_default();
        let before = state.encode();
        for _ in 0..count {
            let action = self.hostile(&legal);
            let seat = match (to_act, self.rng.below(6)) {
                (Some(seat), 0..=3) => seat,
                // Another seat, or one that does not exist (a tampered log can name any).
                (_, 4) => self.rng.below(u64::from(state.seat_count()) + 2) as u32,
                _ => [u32::MAX, state.seat_count()][self.rng.index(2)],
            };
            let mut probe = state.clone_box();
            self.tried += 1;
            let outcome = catch_unwind(AssertUnwindSafe(|| probe.apply(seat, &action)));
            match outcome {
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    return Err(format!(
                        "seat {seat} applying {action:?} panicked: {message}"
                    ));
                }
                Ok(Err(_)) => {
                    self.refused += 1;
                    if probe.encode() != before {
                        return Err(format!(
                            "the refused action {action:?} by seat {seat} changed the state"
                        ));
                    }
                }
                Ok(Ok(_)) => {
                    // Accepted: it must have been legal, so the state must still be sound (a
                    // hostile value that slipped through shows up as a broken invariant later or
                    // as a listing that no longer works).
                    let _ = probe.legal_actions(Viewer::Spectator);
                    if let Some(next) = probe.status().to_act {
                        let _ = probe.legal_actions(Viewer::Seat(next));
                    }
                    let _ = probe.view(Viewer::Spectator);
                }
            }
        }
        Ok(())
    }
}

/// Plays random legal games of `config`, attacking every reached state, until `budget` fuzzed
/// actions were tried.
fn fuzz_game(case: &str, configs: &[pb::GameConfig], seed: u64, budget: usize) {
    let mut fuzzer = Fuzzer::new(seed, case);
    let mut play = GameRng::from_seed(&Seed::from_u64(seed ^ 0xF0CC));
    let mut game = 0u64;
    while fuzzer.tried < budget {
        let config = &configs[game as usize % configs.len()];
        let mut state = hosting::setup(config, &Seed::from_u64(seed * 1_000 + game))
            .unwrap_or_else(|e| panic!("{case}: config {config:?} refused: {e}"));
        game += 1;
        let mut step = 0usize;
        while let Some(seat) = state.status().to_act {
            // Attack a sample of the states along the game (every state would spend the budget on
            // the first few games only).
            if play.below(4) == 0 {
                let count = ACTIONS_PER_STATE.min(budget - fuzzer.tried);
                if let Err(error) = fuzzer.attack(state.as_ref(), count) {
                    panic!("{case} game {game} step {step}: {error}");
                }
                if fuzzer.tried >= budget {
                    break;
                }
            }
            let legal = state.legal_actions(Viewer::Seat(seat));
            assert!(!legal.is_empty(), "{case}: seat {seat} has no legal action");
            let entry = &legal[play.index(legal.len())];
            let action = entry.action.clone().unwrap_or_default();
            let action = match &entry.amount_range {
                Some(range) => {
                    let top = range.max.min(range.min + 40);
                    hosting::with_amount(&action, range.min + play.below(top - range.min + 1))
                }
                None => action,
            };
            state
                .apply(seat, &action)
                .unwrap_or_else(|e| panic!("{case}: listed action refused: {e}"));
            step += 1;
            assert!(step < 20_000, "{case}: random game does not end");
        }
        if state.status().to_act.is_none() {
            // The finished state too: everything is refused, nothing changes.
            let count = 16.min(budget - fuzzer.tried);
            if let Err(error) = fuzzer.attack(state.as_ref(), count) {
                panic!("{case} game {game} (finished): {error}");
            }
        }
    }
    assert!(
        fuzzer.refused * 2 > fuzzer.tried,
        "{case}: only {} of {} hostile actions were refused: the fuzzer is not hostile",
        fuzzer.refused,
        fuzzer.tried
    );
    eprintln!(
        "{case}: {} hostile actions over {game} games, {} refused, 0 panics",
        fuzzer.tried, fuzzer.refused
    );
}

/// Each game's budget is split over two tests so the two cores share the work.
const HALF: usize = ACTIONS_PER_GAME / 2;

/// The seat counts the registry states for the game named `name`.
fn seats(name: &str) -> std::ops::RangeInclusive<u32> {
    hosting::registry()
        .iter()
        .find(|game| game.game_type.name == name)
        .unwrap_or_else(|| panic!("{name} is not hosted"))
        .game_type
        .seats()
}

/// The games fuzzed by a test of their own below, with a mix of their options.
const FUZZED_WITH_OPTIONS: [&str; 4] = ["medici_vs_strozzi", "strozzi", "manila", "la_strada"];

fn medici_configs() -> Vec<pb::GameConfig> {
    use medici_vs_strozzi::v1::{Config, MarkerMovement};
    [MarkerMovement::Unspecified, MarkerMovement::Net]
        .into_iter()
        .map(|movement| pb::GameConfig {
            table: None,
            game: Some(pb::game_config::Game::MediciVsStrozzi(Config {
                marker_movement: movement as i32,
                ..Config::default()
            })),
        })
        .collect()
}

fn strozzi_configs() -> Vec<pb::GameConfig> {
    use strozzi::v1::Config;
    seats("strozzi")
        .map(|players| pb::GameConfig {
            table: None,
            game: Some(pb::game_config::Game::Strozzi(Config {
                players,
                hidden_money: players % 2 == 0,
                tentative_overbid: players >= 5,
                pirate_chance_full_circle: players == 4,
                optional_extra_steps: players == 3,
                ..Config::default()
            })),
        })
        .collect()
}

fn manila_configs() -> Vec<pb::GameConfig> {
    use manila::v1::Config;
    seats("manila")
        .map(|players| pb::GameConfig {
            table: None,
            game: Some(pb::game_config::Game::Manila(Config {
                players,
                pirate_variant: players != 4,
                ..Config::default()
            })),
        })
        .collect()
}

fn la_strada_configs() -> Vec<pb::GameConfig> {
    let game = hosting::registry()
        .iter()
        .find(|game| game.game_type.name == "la_strada")
        .expect("la_strada is hosted");
    seats("la_strada")
        .map(|players| game.config(players))
        .collect()
}

/// Every hosted game without a test of its own above (a game added since), at every seat count
/// with its options at their defaults.
#[test]
fn every_other_game_survives_hostile_actions() {
    for (index, game) in hosting::registry()
        .iter()
        .filter(|game| !FUZZED_WITH_OPTIONS.contains(&game.game_type.name))
        .enumerate()
    {
        let configs: Vec<pb::GameConfig> = game
            .game_type
            .seats()
            .map(|players| game.config(players))
            .collect();
        fuzz_game(game.game_type.name, &configs, 100 + index as u64, HALF);
    }
}

#[test]
fn medici_vs_strozzi_survives_hostile_actions_a() {
    fuzz_game("medici_vs_strozzi", &medici_configs(), 1, HALF);
}

#[test]
fn medici_vs_strozzi_survives_hostile_actions_b() {
    fuzz_game("medici_vs_strozzi", &medici_configs(), 2, HALF);
}

#[test]
fn strozzi_survives_hostile_actions_a() {
    fuzz_game("strozzi", &strozzi_configs(), 3, HALF);
}

#[test]
fn strozzi_survives_hostile_actions_b() {
    fuzz_game("strozzi", &strozzi_configs(), 4, HALF);
}

#[test]
fn manila_survives_hostile_actions_a() {
    fuzz_game("manila", &manila_configs(), 5, HALF);
}

#[test]
fn manila_survives_hostile_actions_b() {
    fuzz_game("manila", &manila_configs(), 6, HALF);
}

#[test]
fn la_strada_survives_hostile_actions_a() {
    fuzz_game("la_strada", &la_strada_configs(), 7, HALF);
}

#[test]
fn la_strada_survives_hostile_actions_b() {
    fuzz_game("la_strada", &la_strada_configs(), 8, HALF);
}
