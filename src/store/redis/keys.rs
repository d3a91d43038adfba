//! Every Redis key and channel Tabula writes or reads, and the hash-tag rule behind each, in one
//! place (ARCHITECTURE.md, *Keys*, is the table of them).
//!
//! - A game's own keys carry its id as the hash tag, `tabula:{<id>}:…`, so they share one Redis
//!   Cluster slot and every script on them is atomic on one node.
//! - The indexes that span games (the game index, retention's, the deadline index, the pending bot
//!   turns) cannot live in one game's slot, and one global key would put all of them on a single
//!   Cluster node. Each is cut into [`SHARDS`] shards with hash tags of their own
//!   (`{games-<n>}`, `{deadlines-<n>}`, `{bots-<n>}`), which a Cluster spreads over its nodes like
//!   any slot; a game's shard is [`shard_of`] its id, the same in every index.

use crate::proto::v1::GameKind;

/// The number of shards of every cross-game index. Fixed for good: a game's shard is derived
/// from its id, so changing it would strand every indexed game in a shard nobody reads.
pub const SHARDS: u32 = 16;

/// The key that records the layout of every key below ([`KNOWN_LAYOUTS`]): a replica checks it
/// when it connects (docs/compatibility.md). A plain key, outside every index's hash tag.
pub const LAYOUT: &str = "tabula:layout";

/// Layout 1: the names below, the forms of the index members, and appends that record every
/// request id in the game's request-id index and the meta's `active_ms`: what 1.0.0 reads and
/// writes. A change is a new version, read beside the old one for a release first.
pub const LAYOUT_COMPATIBLE: u32 = 1;

/// Layout 2 (since 1.1.0): layout 1, except that appends no longer write what the log answers
/// by itself. A request id proposed at a version its sender named is not indexed (the entry right
/// after that version tells a retry apart), and `active_ms` is not written (the last entry's `at`
/// is the last activity). 1.0.0 needs both, and will not serve on this layout (it waits for a store it knows); so a store moves
/// to it only when no replica of 1.0.0 uses it: a new store at once, an existing one when the
/// operator runs `tabula upgrade-store` after every replica runs 1.1.0 or later
/// (docs/compatibility.md, *Upgrading*).
pub const LAYOUT_LEAN: u32 = 2;

/// The layouts this build reads and writes.
pub const KNOWN_LAYOUTS: [u32; 2] = [LAYOUT_COMPATIBLE, LAYOUT_LEAN];

/// The layout a store that has none yet is marked with by this build.
pub const NEW_STORE_LAYOUT: u32 = LAYOUT_LEAN;

/// The format of one game's keys (meta, log entries, request ids) this build writes, recorded in
/// the meta's `format` field; a meta without the field is format 1, the form before 1.0.0.
pub const GAME_FORMAT: u32 = 1;

/// The shard a game's index entries live in: FNV-1a of its id (stable across builds and
/// platforms, unlike the standard library's hasher).
pub fn shard_of(game_id: &str) -> u32 {
    let hash = game_id.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    hash % SHARDS
}

/// One of a game's own keys: `meta` (hash), `log` (stream), `req` (hash of request ids), `snap`
/// (hash: the newest snapshot).
pub fn game(game_id: &str, suffix: &str) -> String {
    format!("tabula:{{{game_id}}}:{suffix}")
}

/// The channel a game's appends are announced on: it carries the game's hash tag, so on a
/// Cluster it lives in the game's slot, with the game's keys.
pub fn appended_channel(game_id: &str) -> String {
    format!("tabula:{{{game_id}}}:appended")
}

/// The game an announcement channel is of ([`appended_channel`] read back).
pub fn game_of_channel(channel: &[u8]) -> Option<String> {
    let channel = std::str::from_utf8(channel).ok()?;
    let game_id = channel
        .strip_prefix("tabula:{")?
        .strip_suffix("}:appended")?;
    Some(game_id.to_owned())
}

/// The sorted set of game-index shard `shard` holding the games of `kind` that are running or
/// finished, scored by creation time.
pub fn index_set(shard: u32, kind: GameKind, finished: bool) -> String {
    let progress = if finished { "finished" } else { "running" };
    format!("tabula:{{games-{shard}}}:{}:{progress}", kind as i32)
}

/// The sorted set of `tenant`'s own game index holding its games of `kind` that are running or
/// finished, scored by creation time: the shards' sets cut by tenant, so that a tenant's listing
/// reads its own games only. One hash tag per tenant (tenant ids are `a-z0-9-_`, so they never
/// hold a brace); see `index.rs`.
pub fn tenant_index_set(tenant: &str, kind: GameKind, finished: bool) -> String {
    let progress = if finished { "finished" } else { "running" };
    format!("tabula:{{tgames-{tenant}}}:{}:{progress}", kind as i32)
}

/// A key in `tenant`'s index slot that is never written: the listing script reads a hash of
/// finishing intents first, and a tenant's index keeps none (the shards' hold them all).
pub fn tenant_no_intents(tenant: &str) -> String {
    format!("tabula:{{tgames-{tenant}}}:no-intents")
}

/// Set once every tenant's game is in its tenant's index ([`tenant_index_set`]): on a new store
/// when the first replica connects, on an older one by `tabula upgrade-store`, which fills the
/// index from the shards first. Until then a tenant's listing reads the shards and keeps its own.
pub const TENANT_INDEX_COMPLETE: &str = "tabula:tenant-index";

/// The hash of game-index shard `shard` holding finishing intents.
pub fn finishing_intents(shard: u32) -> String {
    format!("tabula:{{games-{shard}}}:finishing")
}

/// The sorted set of game-index shard `shard` holding its finished games scored by when they
/// finished (ms since the Unix epoch): retention's index of games due to leave the store.
pub fn retire_set(shard: u32) -> String {
    format!("tabula:{{games-{shard}}}:retire")
}

/// The sorted set of deadline shard `shard`: clocked games scored by their deadline.
pub fn deadlines_due(shard: u32) -> String {
    format!("tabula:{{deadlines-{shard}}}:due")
}

/// The hash of deadline shard `shard`: the log version each indexed deadline was computed at.
pub fn deadline_versions(shard: u32) -> String {
    format!("tabula:{{deadlines-{shard}}}:versions")
}

/// The sorted set of bot-turn shard `shard`: pending bot turns, `<version>:<id>`, scored by when
/// any replica may claim them.
pub fn pending_bot_turns(shard: u32) -> String {
    format!("tabula:{{bots-{shard}}}:pending")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash tag (the part between the first `{` and the next `}`), as Redis Cluster reads it.
    fn hash_tag(key: &str) -> &str {
        let open = key.find('{').expect("a hash tag");
        let close = key[open..].find('}').expect("a closed hash tag") + open;
        &key[open + 1..close]
    }

    #[test]
    fn a_games_keys_and_channel_share_its_slot() {
        for key in [
            game("abc", "meta"),
            game("abc", "log"),
            appended_channel("abc"),
        ] {
            assert_eq!(hash_tag(&key), "abc", "{key}");
        }
        assert_eq!(
            game_of_channel(appended_channel("abc").as_bytes()).as_deref(),
            Some("abc")
        );
        assert_eq!(game_of_channel(b"tabula:{abc}:log"), None);
    }

    #[test]
    fn index_keys_are_tagged_by_their_shard() {
        let shard = shard_of("abc");
        assert!(shard < SHARDS);
        assert_eq!(
            hash_tag(&index_set(shard, GameKind::Manila, true)),
            format!("games-{shard}")
        );
        assert_eq!(
            hash_tag(&finishing_intents(shard)),
            format!("games-{shard}")
        );
        assert_eq!(hash_tag(&retire_set(shard)), format!("games-{shard}"));
        assert_eq!(
            hash_tag(&deadlines_due(shard)),
            format!("deadlines-{shard}")
        );
        assert_eq!(
            hash_tag(&deadline_versions(shard)),
            format!("deadlines-{shard}")
        );
        assert_eq!(hash_tag(&pending_bot_turns(shard)), format!("bots-{shard}"));
    }

    #[test]
    fn a_tenants_index_keys_share_its_slot() {
        for kind in [GameKind::Manila, GameKind::LaStrada] {
            for finished in [false, true] {
                assert_eq!(
                    hash_tag(&tenant_index_set("acme-1", kind, finished)),
                    "tgames-acme-1"
                );
            }
        }
        assert_eq!(hash_tag(&tenant_no_intents("acme-1")), "tgames-acme-1");
        assert_eq!(
            tenant_index_set("acme", GameKind::Manila, true),
            "tabula:{tgames-acme}:3:finished"
        );
    }

    #[test]
    fn the_shard_function_is_fixed() {
        // FNV-1a of "abc" is 0x1a47e90b: a change here strands every indexed game.
        assert_eq!(shard_of("abc"), 0x1a47_e90b % SHARDS);
    }
}
