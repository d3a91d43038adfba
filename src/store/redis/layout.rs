//! The store's layout (`tabula:layout`, docs/compatibility.md) and the commands it sends: what a
//! replica checks when it connects, follows while it runs and moves to with `tabula
//! upgrade-store`; and which commands its scripts call and which it sends itself, for the load
//! generator's Redis cost per Act.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use redis::Script;

use super::healing::HealingConnection;
pub use super::scripts::APPEND_CALLS_EACH_TIME;
use super::scripts::{
    CREATE_SCRIPT, IDLE_SCRIPT, LOAD_SCRIPT, READ_WHOLE_SCRIPT, REMOVE_FINISHED_SCRIPT,
    SNAPSHOT_SCRIPT, append_lean_script, append_script,
};
use super::{
    RedisOptions, RedisStore, bot_turns, deadlines, index, keys, tenants, unavailable, webhooks,
};
use crate::store::{StoreError, StoreResult};

/// The commands Tabula's scripts call (`redis.call` and `redis.pcall`), by upper-case name: Redis
/// counts them in `INFO commandstats` both on their own and inside the script's time, and the
/// load generator's Redis cost per Act counts each only once (`tabula load --probe-redis`).
pub fn commands_in_scripts() -> std::collections::BTreeSet<String> {
    let sources = [
        append_script(false),
        append_script(true),
        append_lean_script(false),
        append_lean_script(true),
        LOAD_SCRIPT.to_owned(),
        CREATE_SCRIPT.to_owned(),
        READ_WHOLE_SCRIPT.to_owned(),
        REMOVE_FINISHED_SCRIPT.to_owned(),
        IDLE_SCRIPT.to_owned(),
        SNAPSHOT_SCRIPT.to_owned(),
        index::LIST_SCRIPT.to_owned(),
        index::SUMMARY_SCRIPT.to_owned(),
        index::PLACE_SCRIPT.to_owned(),
        index::FORGET_SCRIPT.to_owned(),
        index::UNLIST_SCRIPT.to_owned(),
        index::DROP_INTENT_SCRIPT.to_owned(),
        index::TENANT_PLACE_SCRIPT.to_owned(),
        deadlines::SET_SCRIPT.to_owned(),
        deadlines::LOWER_SCRIPT.to_owned(),
        bot_turns::CLAIM_SCRIPT.to_owned(),
        tenants::PUT_SCRIPT.to_owned(),
        tenants::READ_SCRIPT.to_owned(),
        tenants::TAKE_SCRIPT.to_owned(),
        tenants::JOIN_SCRIPT.to_owned(),
        tenants::JOIN_LEASED_SCRIPT.to_owned(),
        webhooks::MARK_SCRIPT.to_owned(),
        webhooks::CLAIM_SCRIPT.to_owned(),
        webhooks::CLAIM_ONE_SCRIPT.to_owned(),
        webhooks::SETTLE_SCRIPT.to_owned(),
        webhooks::ADVANCE_SCRIPT.to_owned(),
        webhooks::PUT_DEAD_SCRIPT.to_owned(),
        webhooks::SET_WAITING_SCRIPT.to_owned(),
        webhooks::WAITING_SCRIPT.to_owned(),
        webhooks::APPEND_EVENT_SCRIPT.to_owned(),
    ];
    let mut commands = std::collections::BTreeSet::new();
    for source in &sources {
        for call in ["redis.call('", "redis.pcall('"] {
            for (at, _) in source.match_indices(call) {
                let name = &source[at + call.len()..];
                if let Some(end) = name.find('\'') {
                    commands.insert(name[..end].to_ascii_uppercase());
                }
            }
        }
    }
    commands
}

/// The commands the Redis store sends outside scripts (`redis::cmd("…")` in its sources, read at
/// build time), by upper-case name: with [`commands_in_scripts`], what tells a script's nested
/// calls from the replica's own in `INFO commandstats`.
pub fn commands_sent_directly() -> std::collections::BTreeSet<String> {
    let sources = [
        include_str!("../redis.rs"),
        include_str!("announcements.rs"),
        include_str!("bot_turns.rs"),
        include_str!("deadlines.rs"),
        include_str!("healing.rs"),
        include_str!("index.rs"),
        include_str!("index/query.rs"),
        include_str!("index/tenant.rs"),
        include_str!("layout.rs"),
        include_str!("log.rs"),
        include_str!("tenants.rs"),
        include_str!("webhooks.rs"),
    ];
    let mut commands = std::collections::BTreeSet::new();
    let call = "cmd(\"";
    for source in sources {
        for (at, _) in source.match_indices(call) {
            let name = &source[at + call.len()..];
            if let Some(end) = name.find('"')
                && name[..end].chars().all(|c| c.is_ascii_alphabetic())
                && end > 0
            {
                commands.insert(name[..end].to_ascii_uppercase());
            }
        }
    }
    commands
}

/// Checks the store's key layout ([`keys::LAYOUT`]): a store that has none yet is marked with
/// [`keys::NEW_STORE_LAYOUT`], and one marked with a layout this build does not know is refused
/// before the replica serves anything. Returns the store's layout.
pub(super) async fn check_layout(connection: &HealingConnection) -> StoreResult<u32> {
    let mut connection = connection.clone();
    let existing: Option<String> = redis::cmd("GET")
        .arg(keys::LAYOUT)
        .query_async(&mut connection)
        .await
        .map_err(unavailable)?;
    if existing.is_none() {
        // A store no replica has marked yet holds no tenant's game: only replicas that mark it
        // know tenants, and this build lists every tenant game in its tenant's index from its
        // creation. Marked before the layout, so that a replica dying in between leaves a store
        // the next one takes for new again.
        let _: () = redis::cmd("SET")
            .arg(keys::TENANT_INDEX_COMPLETE)
            .arg(1)
            .query_async(&mut connection)
            .await
            .map_err(unavailable)?;
    }
    let (_, marked): ((), Option<String>) = redis::pipe()
        .cmd("SET")
        .arg(keys::LAYOUT)
        .arg(keys::NEW_STORE_LAYOUT)
        .arg("NX")
        .ignore()
        .cmd("GET")
        .arg(keys::LAYOUT)
        .query_async(&mut connection)
        .await
        .map(|marked: (Option<String>,)| ((), marked.0))
        .map_err(unavailable)?;
    known_layout(marked.as_deref())
}

/// The layout a `tabula:layout` value names, if this build knows it.
fn known_layout(marked: Option<&str>) -> StoreResult<u32> {
    marked
        .and_then(|text| text.parse::<u32>().ok())
        .filter(|layout| keys::KNOWN_LAYOUTS.contains(layout))
        .ok_or_else(|| {
            StoreError::NewerFormat(format!(
                "this Redis holds Tabula's keys in layout {} ({}), which this build (Tabula {}) \
                 does not know: a newer release wrote it; run that release \
                 (docs/compatibility.md)",
                // Bounded: a layout is a short number; anything else is shown cut.
                marked.map_or_else(
                    || "(none)".to_owned(),
                    |text| text.chars().take(16).collect()
                ),
                keys::LAYOUT,
                crate::RELEASE
            ))
        })
}

/// How often a replica reads the store's layout again, so that all of them write layout 2
/// within this long of `tabula upgrade-store` (until then they write layout 1, which layout 2
/// reads).
pub const LAYOUT_REFRESH: Duration = Duration::from_secs(5);

/// Whether the store says every tenant's game is in its tenant's own index
/// ([`keys::TENANT_INDEX_COMPLETE`]).
pub(super) async fn tenant_index_complete(connection: &HealingConnection) -> StoreResult<bool> {
    let marked: Option<String> = redis::cmd("GET")
        .arg(keys::TENANT_INDEX_COMPLETE)
        .query_async(&mut connection.clone())
        .await
        .map_err(unavailable)?;
    Ok(marked.is_some())
}

/// Reads the store's layout every [`LAYOUT_REFRESH`] into `layout`, and whether its tenant index
/// is complete into `tenant_index`, until the store is dropped.
pub(super) fn follow_layout(
    connection: HealingConnection,
    layout: &Arc<AtomicU32>,
    tenant_index: &Arc<AtomicBool>,
) {
    let layout = Arc::downgrade(layout);
    let tenant_index = Arc::downgrade(tenant_index);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(LAYOUT_REFRESH).await;
            let (Some(layout), Some(tenant_index)) = (layout.upgrade(), tenant_index.upgrade())
            else {
                return;
            };
            // Once complete, always complete: only `upgrade-store` and new stores mark it.
            if !tenant_index.load(Ordering::Relaxed)
                && let Ok(true) = self::tenant_index_complete(&connection).await
            {
                tenant_index.store(true, Ordering::Relaxed);
                tracing::info!("every tenant's game is in its tenant's index");
            }
            let mut connection = connection.clone();
            let marked: redis::RedisResult<Option<String>> = redis::cmd("GET")
                .arg(keys::LAYOUT)
                .query_async(&mut connection)
                .await;
            // An unreadable or unknown value keeps the layout in use: an outage is reported by
            // the commands that need the store, and an unknown layout by the next start.
            if let Ok(Ok(now)) = marked.map(|marked| known_layout(marked.as_deref())) {
                let before = layout.swap(now, Ordering::Relaxed);
                if before != now {
                    tracing::info!(from = before, to = now, "the store's layout changed");
                }
            }
        }
    });
}

/// What `tabula upgrade-store` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upgrade {
    /// The store's layout before.
    pub layout_before: u32,
    /// And after.
    pub layout_after: u32,
    /// How many index entries it put in tenants' own indexes (0 when they were complete).
    pub tenant_entries_filled: u64,
}

/// Upgrades a store once every replica runs this release or later (`tabula upgrade-store`):
/// fills the tenants' own game indexes from the shards if the store does not say they are
/// complete, then marks them complete ([`keys::TENANT_INDEX_COMPLETE`]); and moves the store to
/// layout 2 ([`keys::LAYOUT_LEAN`]). A store already in layout 2 keeps it, and one in a layout
/// this build does not know is refused. Running it again does nothing more.
pub async fn upgrade_store(options: &RedisOptions) -> StoreResult<Upgrade> {
    let store = RedisStore::connect(options).await?;
    let mut tenant_entries_filled = 0;
    if !tenant_index_complete(&store.connection).await? {
        tenant_entries_filled = store.index.fill_tenant_index(&store.connection).await?;
        let _: () = redis::cmd("SET")
            .arg(keys::TENANT_INDEX_COMPLETE)
            .arg(1)
            .query_async(&mut store.connection.clone())
            .await
            .map_err(unavailable)?;
    }
    let (layout_before, layout_after) = upgrade_layout(&store).await?;
    Ok(Upgrade {
        layout_before,
        layout_after,
        tenant_entries_filled,
    })
}

/// Moves `store` to layout 2 ([`keys::LAYOUT_LEAN`]); returns the layout before and after.
async fn upgrade_layout(store: &RedisStore) -> StoreResult<(u32, u32)> {
    let before = store.layout.load(Ordering::Relaxed);
    if before != keys::LAYOUT_LEAN {
        let mut connection = store.connection.clone();
        // Only from layout 1: a newer layout written meanwhile is not overwritten.
        let script = Script::new(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) end \
             return redis.call('GET', KEYS[1])",
        );
        let now: Option<String> = script
            .key(keys::LAYOUT)
            .arg(keys::LAYOUT_COMPATIBLE)
            .arg(keys::LAYOUT_LEAN)
            .invoke_async(&mut connection)
            .await
            .map_err(unavailable)?;
        return Ok((before, known_layout(now.as_deref())?));
    }
    Ok((before, before))
}
