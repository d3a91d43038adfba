//! Tabula: a stateless gRPC game-engine service for turn-based board games.
//!
//! Data flows one way: the RPC layer ([`service`]) authenticates and decodes requests, asks the
//! [`store`] for a game's log, rebuilds the state with the game's [`games`] engine, validates the
//! move and appends it. Engines are pure; the store knows nothing about rules.

#![warn(missing_docs)]

/// This build's release: its semantic version (`tabula --version`; see CHANGELOG.md and
/// docs/compatibility.md), recorded in every game it creates.
pub const RELEASE: &str = env!("CARGO_PKG_VERSION");

pub mod address;
pub mod app;
pub mod archive;
pub mod bots;
pub mod chain;
pub mod cli;
pub mod coalesce;
pub mod config;
pub mod durations;
pub mod games;
pub mod hosting;
pub mod json;
pub mod metrics;
pub mod narration;
pub mod outage;
pub mod proto;
pub mod server;
pub mod service;
pub mod shutdown;
pub mod signing;
pub mod store;
pub mod telemetry;
