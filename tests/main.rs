//! Tabula's integration tests, as one test binary: each file beside this one is a module (a
//! topic), all of them sharing `common` (real Redis servers and clusters, replicas serving real gRPC
//! on loopback, clients). One binary links the library and the shared helpers once instead of once
//! per topic. Run one topic with `cargo test --test integration <topic>::`.

#[macro_use]
mod common;

mod admin;
mod archive_s3;
mod bot_seats;
mod browser;
mod cli;
mod clocks;
mod cluster;
mod cors;
mod creation;
mod durability;
mod edge;
mod examples;
mod faults;
mod fuzz_actions;
mod games;
mod generic_client;
mod golden;
mod hidden_information;
mod load;
mod narration;
#[cfg(feature = "nim")]
mod nim;
mod observers;
mod ops;
mod play;
mod play_streams;
mod replay_log;
mod retention;
mod rolling_upgrade;
mod service;
mod signing;
mod store_contract;
mod table_entries;
mod tables;
mod tenants;
mod web;
mod webhooks;
