//! The gRPC services `tabula.v1.GameService` and, for the operator, `tabula.v1.AdminService`.
//! Nothing here knows a game's rules. The files, by role:
//!
//! - **The settings** of every part (`options.rs`) and the lag policy Act and the sweeper share
//!   (`lag.rs`): plain data at the bottom, which the core and the workers both read.
//! - **The shared core**: [`Tabula`] and the checks every entry point shares (`tabula.rs`); the
//!   [`GameCache`], the handlers' only way to the game logs (`cache.rs`); the one commit path of
//!   every entry and the effects after it (`commit.rs`); the server's own entries, timeouts,
//!   aborts and hand-overs (`table_entry.rs`); what a viewer may receive (`disclosure.rs`); seat
//!   tokens (`auth.rs`), player metadata (`players.rs`) and errors (`error.rs`).
//! - **The RPCs**, one file each, after mini-redis's one file per command: each authenticates the
//!   caller, gets the game from the cache and answers with what the caller may see (`act.rs`,
//!   `create_game.rs`, `observe.rs`, `play.rs`, `get_view.rs`, `export_log.rs`, `verify_log.rs`,
//!   `replay_log.rs`; the operator's `list_games.rs`, `count_games.rs`, `end_game.rs`, `hand_seat_to_bot.rs`).
//! - **The gRPC adapters** (`grpc.rs`): spans, outcomes and status codes around the handlers;
//!   the operator's gate (`operator.rs`).
//! - **The background workers** behind one handle (`workers.rs`): the bot workers (`bots.rs`),
//!   the turn-clock sweeper (`sweeper.rs`) and retention (`retention.rs`). They build on the
//!   core; the core reaches the bot workers only as the `EntryObserver`s
//!   they register.
//!
//! Handlers and workers import the core from `tabula.rs`, never from here: this file only
//! declares the modules and what the crate exports.

mod act;
mod auth;
mod bots;
mod cache;
mod commit;
mod commitment;
mod count_games;
mod create_game;
mod creation;
mod delay;
mod disclosure;
mod end_game;
mod entries_told;
pub(crate) mod error;
mod export_log;
mod export_log_unredacted;
mod fill_open_seats;
mod game_log;
mod get_signing_keys;
mod get_view;
mod grpc;
mod hand_seat_to_bot;
mod join_game;
pub mod lag;
mod list_games;
mod list_turns;
mod listing;
mod narration;
mod new_game;
mod observe;
mod observe_games;
mod observer;
pub mod operator;
mod options;
pub mod play;
pub(crate) mod players;
pub mod provenance;
pub mod quotas;
mod rematch;
mod replay_log;
pub mod retention;
mod seating;
mod stop;
pub mod sweeper;
mod table_entry;
mod tabula;
mod tenant_admin;
pub mod tenants;
pub mod verify;
mod verify_log;
mod watch_events;
mod webhook_admin;
mod webhook_delivery;
mod webhook_forgetting;
mod webhooks;
pub mod workers;

pub use cache::{Game, GameCache};
pub use commit::BOT_REQUEST_PREFIX;
pub use error::{ServiceError, ServiceResult};
pub use grpc::{AdminServiceImpl, GameServiceImpl};
pub use operator::{AdminGate, OperatorOptions, OperatorToken};
pub use options::{BotOptions, RetentionOptions, ServiceOptions, SweeperOptions, WebhookOptions};
pub use sweeper::{SweepReport, sweep_once};
pub use table_entry::TableEntryResult;
pub use tabula::{MAX_GAME_ID_LEN, MAX_REQUEST_ID_LEN, Tabula};
