//! The games this build hosts: the `hosted_games!` invocation at the end of this file declares
//! them, one line each, and generates their [`HostedGame`] impls, the [`registry`] the command
//! line, `ListGameTypes`, tests and benchmarks read, and the generic [`setup`] and [`restore`].

use super::{GameState, HostError, Hosted, HostedGame};
use crate::games::{Chance, Engine, GameType, Information, Seed};
use crate::proto::v1 as pb;

/// A rules version as an error may quote it: a stored or submitted value, so cut short.
fn quoted_version(rules_version: &str) -> String {
    const LONGEST: usize = 64;
    match rules_version.char_indices().nth(LONGEST) {
        Some((end, _)) => format!("{:?}…", &rules_version[..end]),
        None => format!("{rules_version:?}"),
    }
}
/// One game this build hosts, as the [`registry`] lists it: the facts its engine states
/// ([`Engine::GAME_TYPE`]), its number on the wire, its rules version, and its default config.
#[derive(Clone, Copy, Debug)]
pub struct RegisteredGame {
    /// The engine's facts.
    pub game_type: GameType,
    /// The game's number on the wire.
    pub kind: pb::GameKind,
    /// The rules version new games get: the newest this build plays.
    pub rules_version: &'static str,
    /// The earlier rules versions this build still plays, oldest first
    /// ([`Engine::EARLIER_RULES_VERSIONS`]).
    pub earlier_rules_versions: &'static [&'static str],
    /// The game's case of `GameConfig.game` for a table of that many seats, options at their
    /// defaults ([`Engine::config_for`]).
    config_case: fn(u32) -> pb::game_config::Game,
}

impl RegisteredGame {
    /// The config of a table of `players` seats with every option at its default (a fixed seat
    /// count ignores `players`), and the table's settings unset.
    pub fn config(&self, players: u32) -> pb::GameConfig {
        pb::GameConfig {
            game: Some(self.config_case(players)),
            table: None,
        }
    }

    /// The game's case of `GameConfig.game` for a table of `players` seats, options at their
    /// defaults: for callers that set the table's settings themselves.
    pub fn config_case(&self, players: u32) -> pb::game_config::Game {
        (self.config_case)(players)
    }

    /// Every rules version this build plays the game by, oldest first (the newest last).
    pub fn rules_versions(&self) -> Vec<&'static str> {
        let mut versions = self.earlier_rules_versions.to_vec();
        versions.push(self.rules_version);
        versions
    }

    /// Whether this build plays the game under `rules_version`.
    pub fn plays(&self, rules_version: &str) -> bool {
        rules_version == self.rules_version || self.earlier_rules_versions.contains(&rules_version)
    }

    /// The entry as `ListGameTypes` answers it.
    pub fn to_pb(&self) -> pb::GameType {
        let facts = &self.game_type;
        pb::GameType {
            game: self.kind as i32,
            name: facts.name.to_owned(),
            display_name: facts.display_name.to_owned(),
            min_seats: facts.min_seats,
            max_seats: facts.max_seats,
            chance: match facts.chance {
                Chance::Deterministic => pb::ChanceMode::Deterministic,
                Chance::Seeded => pb::ChanceMode::Seeded,
            } as i32,
            information: match facts.information {
                Information::Perfect => pb::InformationKind::Perfect,
                Information::Imperfect => pb::InformationKind::Imperfect,
            } as i32,
            rules_version: self.rules_version.to_owned(),
            rules_versions: self
                .rules_versions()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// The hosted game of kind `kind`, if this build hosts it.
pub fn registered(kind: pb::GameKind) -> Option<&'static RegisteredGame> {
    registry().iter().find(|game| game.kind == kind)
}

/// A game name the [`registry`] does not know, or knows several games by.
#[derive(Debug, thiserror::Error)]
#[error("{name:?} is not a game{}: use {}", if *.ambiguous { " (it could be several)" } else { "" }, cli_names())]
pub struct UnknownGame {
    /// The name as given.
    pub name: String,
    /// True when it is the start of several games' names.
    pub ambiguous: bool,
}

/// Every hosted game's command-line name, in words: "a, b or c".
pub fn cli_names() -> String {
    let names: Vec<String> = registry()
        .iter()
        .map(|game| game.game_type.cli_name())
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// The hosted game a person names `name` (the command line): its name in any case, with dashes,
/// underscores, spaces or none between the words (`medici-vs-strozzi`, `La Strada`, `lastrada`),
/// or the start of exactly one game's name (`medici`).
pub fn find_game(name: &str) -> Result<&'static RegisteredGame, UnknownGame> {
    // Compared without separators or case, so a name is found however it is written.
    let squash = |text: &str| -> String {
        text.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = squash(name);
    let unknown = |ambiguous| UnknownGame {
        name: name.to_owned(),
        ambiguous,
    };
    if wanted.is_empty() {
        return Err(unknown(false));
    }
    if let Some(game) = registry()
        .iter()
        .find(|game| squash(game.game_type.name) == wanted)
    {
        return Ok(game);
    }
    let mut starting = registry()
        .iter()
        .filter(|game| squash(game.game_type.name).starts_with(&wanted));
    match (starting.next(), starting.next()) {
        (Some(game), None) => Ok(game),
        (Some(_), Some(_)) => Err(unknown(true)),
        (None, _) => Err(unknown(false)),
    }
}

/// Declares the hosted games: for each, its case of the generic wire `oneof`s (the Rust variant;
/// the proto field is named [`Engine::NAME`]), its engine and its [`pb::GameKind`], generating its [`HostedGame`] impl, its [`registry`] entry
/// and its arms in [`setup`], [`restore`] and [`rules_version`]. A line may carry attributes
/// (`#[cfg(feature = "…")]`) that apply to everything generated for it.
macro_rules! hosted_games {
    ($($(#[$attr:meta])* $case:ident => $engine:ty, $kind:expr;)+) => {
        $(
            $(#[$attr])*
            impl HostedGame for $engine {
                const KIND: pb::GameKind = $kind;
                // The generic oneofs' cases are named after the game (the registry test checks it).
                const WIRE_CASE: &'static str = <$engine as Engine>::NAME;

                fn wrap_config(config: Self::Config) -> pb::game_config::Game {
                    pb::game_config::Game::$case(config)
                }

                fn config_of(config: &pb::game_config::Game) -> Option<&Self::Config> {
                    #[allow(unreachable_patterns)]
                    match config { pb::game_config::Game::$case(c) => Some(c), _ => None }
                }

                fn action_of(action: &pb::action::Game) -> Option<&Self::Action> {
                    #[allow(unreachable_patterns)]
                    match action { pb::action::Game::$case(a) => Some(a), _ => None }
                }

                fn event_of(event: &pb::event::Game) -> Option<&Self::Event> {
                    #[allow(unreachable_patterns)]
                    match event { pb::event::Game::$case(e) => Some(e), _ => None }
                }

                fn wrap_action(action: Self::Action) -> pb::action::Game {
                    pb::action::Game::$case(action)
                }

                fn wrap_event(event: Self::Event) -> pb::event::Game {
                    pb::event::Game::$case(event)
                }

                fn wrap_view(view: Self::View) -> pb::view::Game {
                    pb::view::Game::$case(view)
                }
            }
        )+

        /// The games this build hosts, in the order of the `hosted_games!` invocation.
        pub fn registry() -> &'static [RegisteredGame] {
            static REGISTRY: &[RegisteredGame] = &[$(
                $(#[$attr])*
                RegisteredGame {
                    game_type: <$engine as Engine>::GAME_TYPE,
                    kind: $kind,
                    rules_version: <$engine as Engine>::RULES_VERSION,
                    earlier_rules_versions: <$engine as Engine>::EARLIER_RULES_VERSIONS,
                    config_case: |players| {
                        <$engine as HostedGame>::wrap_config(<$engine as Engine>::config_for(players))
                    },
                },
            )+];
            REGISTRY
        }

        /// The initial state of the game `config` selects, with randomness from `seed`, under the
        /// rules version `rules_version` (refused unless this build plays it), and its table as
        /// `config.table` says.
        pub fn setup_under(
            config: &pb::GameConfig,
            seed: &Seed,
            rules_version: &str,
        ) -> Result<Box<dyn GameState>, HostError> {
            let table = config.table.as_ref();
            let game = config.game.as_ref().ok_or(HostError::NoGame)?;
            $(
                $(#[$attr])*
                if let Some(c) = <$engine as HostedGame>::config_of(game) {
                    return Ok(Box::new(Hosted::<$engine>::set_up(c, table, seed, rules_version)?));
                }
            )+
            Err(HostError::NotHosted)
        }

        /// A state back from [`GameState::encode`]. A state of an older format is refused
        /// ([`HostError::Restore`]), never decoded as something it is not.
        pub fn restore(kind: pb::GameKind, bytes: &[u8]) -> Result<Box<dyn GameState>, HostError> {
            $(
                $(#[$attr])*
                if kind == $kind {
                    return Ok(Box::new(Hosted::<$engine>::decode(bytes)?));
                }
            )+
            Err(HostError::UnknownKind(kind))
        }

        /// `action` with its amount field set (see [`crate::games::LegalAction::Amount`]); a
        /// table entry, or an action of a game this build does not host, as it is.
        pub fn with_amount(action: &pb::Action, amount: u64) -> pb::Action {
            let Some(game) = action.game.as_ref() else {
                return action.clone();
            };
            $(
                $(#[$attr])*
                if let Some(a) = <$engine as HostedGame>::action_of(game) {
                    return pb::Action {
                        game: Some(<$engine as HostedGame>::wrap_action(
                            <$engine as Engine>::with_amount(a, amount),
                        )),
                    };
                }
            )+
            action.clone()
        }

        /// The kind of game `config` selects, if this build hosts it.
        pub fn kind_of(config: &pb::GameConfig) -> Option<pb::GameKind> {
            let game = config.game.as_ref()?;
            $(
                $(#[$attr])*
                if <$engine as HostedGame>::config_of(game).is_some() {
                    return Some($kind);
                }
            )+
            None
        }
    };
}

/// The initial state of the game `config` selects under its newest rules version (what a new game
/// gets unless told otherwise: see [`setup_under`]).
pub fn setup(config: &pb::GameConfig, seed: &Seed) -> Result<Box<dyn GameState>, HostError> {
    let kind = kind_of(config).ok_or(if config.game.is_none() {
        HostError::NoGame
    } else {
        HostError::NotHosted
    })?;
    let newest = rules_version(kind).ok_or(HostError::UnknownKind(kind))?;
    setup_under(config, seed, newest)
}

/// Checks that this build plays `kind` under `rules_version`: the one check behind setting a game
/// up, loading a stored game and verifying a log (docs/compatibility.md, *Rules versions*).
pub fn check_rules_version(kind: pb::GameKind, rules_version: &str) -> Result<(), HostError> {
    let game = registered(kind).ok_or(HostError::UnknownKind(kind))?;
    if game.plays(rules_version) {
        return Ok(());
    }
    Err(HostError::RulesVersion {
        game: game.game_type.name,
        asked: quoted_version(rules_version),
        played: game.rules_versions().join(", "),
    })
}

/// The rules version new games of `kind` get by default: the newest this build plays.
pub fn rules_version(kind: pb::GameKind) -> Option<&'static str> {
    registered(kind).map(|game| game.rules_version)
}

hosted_games! {
    MediciVsStrozzi => crate::games::medici_vs_strozzi::MediciVsStrozzi, pb::GameKind::MediciVsStrozzi;
    Strozzi => crate::games::strozzi::Strozzi, pb::GameKind::Strozzi;
    Manila => crate::games::manila::Manila, pb::GameKind::Manila;
    LaStrada => crate::games::la_strada::LaStrada, pb::GameKind::LaStrada;
    #[cfg(feature = "nim")] Nim => crate::games::nim::Nim, pb::GameKind::Nim;
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use prost::Message;
    use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};

    use super::*;
    use crate::games::Viewer;

    fn descriptor(name: &str) -> MessageDescriptor {
        DescriptorPool::decode(crate::proto::FILE_DESCRIPTOR_SET)
            .expect("descriptors")
            .get_message_by_name(name)
            .unwrap_or_else(|| panic!("no message {name}"))
    }

    /// True when `message`, encoded, sets the field of `message_name` called `field`.
    fn sets_field(message_name: &str, message: &impl Message, field: &str) -> bool {
        let descriptor = descriptor(message_name);
        let field = descriptor
            .get_field_by_name(field)
            .unwrap_or_else(|| panic!("{message_name} has no field {field}"));
        DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice())
            .expect("decodes")
            .has_field(&field)
    }

    /// Each game's case of the generic `oneof`s is the field named after it, so `WIRE_CASE` (the
    /// first segment of the `amount_field` paths clients follow) and `GameType.name` name the
    /// right field: checked on its config and on an action it plays.
    #[test]
    fn each_game_is_the_oneof_case_named_after_it() {
        for game in registry() {
            let name = game.game_type.name;
            let config = game.config(game.game_type.min_seats);
            assert!(sets_field("tabula.v1.GameConfig", &config, name), "{name}");
            let state = setup(&config, &Seed::from_u64(1)).expect("sets up");
            let action = state.default_action().expect("the game has begun");
            assert!(sets_field("tabula.v1.Action", &action, name), "{name}");
            let view = state.view(Viewer::Spectator);
            assert!(sets_field("tabula.v1.View", &view, name), "{name}");
            assert_eq!(state.kind(), game.kind, "{name}");
        }
    }

    /// The seat counts each engine states are exactly those its setup accepts: every count in the
    /// range sets up a table of that many seats, and the counts just outside do not.
    #[test]
    fn stated_seat_ranges_are_what_setup_accepts() {
        for game in registry() {
            let facts = game.game_type;
            assert!(
                facts.min_seats >= 1 && facts.min_seats <= facts.max_seats,
                "{facts:?}"
            );
            for players in facts.seats() {
                let state = setup(&game.config(players), &Seed::from_u64(u64::from(players)))
                    .unwrap_or_else(|e| panic!("{} for {players}: {e}", facts.name));
                assert_eq!(state.seat_count(), players, "{}", facts.name);
            }
            for players in [facts.min_seats - 1, facts.max_seats + 1] {
                // A game with a fixed count has no `players` to refuse: its table keeps its size.
                if let Ok(state) = setup(&game.config(players), &Seed::from_u64(7)) {
                    assert_ne!(state.seat_count(), players, "{}", facts.name);
                }
            }
        }
    }

    /// A game stated deterministic ignores its seed; one stated seeded does not (two seeds set up
    /// different states).
    #[test]
    fn stated_chance_is_what_setup_does() {
        for game in registry() {
            let config = game.config(game.game_type.min_seats);
            let hashes: HashSet<[u8; 32]> = (0..4)
                .map(|seed| {
                    setup(&config, &Seed::from_u64(seed))
                        .expect("sets up")
                        .state_hash()
                })
                .collect();
            let expected = match game.game_type.chance {
                Chance::Deterministic => 1,
                Chance::Seeded => 4,
            };
            assert_eq!(hashes.len(), expected, "{}", game.game_type.name);
        }
    }

    #[test]
    fn registry_entries_are_distinct_and_agree_with_the_wire() {
        let games = registry();
        assert!(!games.is_empty());
        let names: HashSet<_> = games.iter().map(|game| game.game_type.name).collect();
        let kinds: HashSet<_> = games.iter().map(|game| game.kind).collect();
        assert_eq!(names.len(), games.len());
        assert_eq!(kinds.len(), games.len());
        for game in games {
            assert_ne!(game.kind, pb::GameKind::Unspecified);
            assert_eq!(registered(game.kind).map(|g| g.kind), Some(game.kind));
            assert_eq!(rules_version(game.kind), Some(game.rules_version));
            assert_eq!(
                kind_of(&game.config(game.game_type.min_seats)),
                Some(game.kind)
            );
            let wire = game.to_pb();
            assert_eq!(wire.name, game.game_type.name);
            assert_eq!(wire.game, game.kind as i32);
            assert_eq!(
                (wire.min_seats, wire.max_seats),
                (game.game_type.min_seats, game.game_type.max_seats)
            );
        }
        assert!(registered(pb::GameKind::Unspecified).is_none());
    }

    #[test]
    fn games_are_found_however_their_names_are_written() {
        let name = |text: &str| find_game(text).map(|game| game.game_type.name);
        assert_eq!(name("medici-vs-strozzi").ok(), Some("medici_vs_strozzi"));
        assert_eq!(name("medici_vs_strozzi").ok(), Some("medici_vs_strozzi"));
        assert_eq!(name("medici").ok(), Some("medici_vs_strozzi"));
        assert_eq!(name("Strozzi").ok(), Some("strozzi"));
        assert_eq!(name("la-strada").ok(), Some("la_strada"));
        assert_eq!(name("lastrada").ok(), Some("la_strada"));
        assert_eq!(name("La Strada").ok(), Some("la_strada"));
        assert_eq!(name("manila").ok(), Some("manila"));
        // "m" starts both Medici vs Strozzi and Manila.
        assert!(find_game("m").is_err_and(|error| error.ambiguous));
        let unknown = find_game("chess").expect_err("no chess here");
        assert!(!unknown.ambiguous);
        assert!(
            unknown.to_string().contains("medici-vs-strozzi"),
            "{unknown}"
        );
        assert!(find_game("").is_err());
        assert!(find_game("--").is_err());
    }
}
