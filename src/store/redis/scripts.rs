//! The Lua scripts every multi-step operation runs with EVALSHA, so that each is one round trip
//! and atomic on the game's slot (see the store's module docs for the key layout).

/// Appends one entry atomically and announces it on the game's channel.
///
/// KEYS: meta, log, req, channel. ARGV:
/// 1. the expected version (the log's length);
/// 2. seat, 3. action, 4. request id, 5. server time (`at`): the entry's fields;
/// 6. the announcement: the entry as it will be at version expected + 1,
///    `<version>:<seat>:<server time>:<request id length>:<request id><action>` (the replica
///    builds it, so the script concatenates nothing; Lua strings are binary-safe), so a subscriber
///    needs no read to pass it on;
/// 7. the head of the game's hash chain after the entry, stored with it as `h` (since 1.1.0;
///    '' or absent: a game without a chain);
/// 8. the request key to check before appending, `<seat>:<request id>` ('' or absent: none);
/// 9. the request key to record in the request-id index ('' or absent: none), and 10. the seconds
///    the index lives after its last write (see [`crate::store::DEFAULT_REQUEST_ID_TTL`]);
/// 11. the time the game finished, if this entry ends it ('' or absent: it does not);
/// 12. the time now (ms), recorded as the meta's `active_ms` ('' or absent: not recorded).
///
/// Trailing arguments may be left out: an Act in layout 2 (`keys::LAYOUT_LEAN`) that does not end
/// the game sends seven (six in a game without a chain), and the script then makes three calls
/// (XLEN, XADD, PUBLISH); such an Act sent with `expected_version` above 0 goes through
/// [`APPEND_LEAN_TEMPLATE`] instead. Each call and argument costs Redis CPU (`tabula load
/// --probe-redis` prints the cost per Act), so the script does only what correctness needs:
/// - the version is checked with `XLEN`, not left to `XADD`'s refusal of an id at or below the
///   stream's last one: that refusal catches a log that grew past `expected`, but not one that is
///   shorter (Redis restarted from an AOF written every second, or a promoted replica lacking the
///   last writes, while a replica's cache is still ahead), where a bare `XADD` would leave a gap;
/// - the game's existence is checked only when the log is empty (a game that left the store has
///   no log either; a non-empty log answers it);
/// - a request id is checked in the index only when the sender named no version
///   (`RetryScope::AnyVersion`): a retry of one that did conflicts, and the replica recognises it
///   in the entries the conflict returns;
/// - layout 1 (`keys::LAYOUT_COMPATIBLE`, while 1.0.0 replicas may share the store) also records
///   every request id and `active_ms`, which 1.0.0 reads; layout 2 records neither (a request id
///   proposed at a version is found after that version; the last activity is the last entry's
///   `at`).
///
/// Reply: the new version (an integer); or `{'appended', version, kind, created_at_ms, tenant}`
/// (the tenant nil for a game without one) for an
/// entry that ends the game, which also sets the meta's `finished_at_ms` in the same script (so
/// the meta says a game has finished exactly when its log does) and returns what moving it in the
/// game index needs (`index.rs`); or `{'duplicate', version}`, `{'conflict', current, entries
/// after the expected version}`, `{'missing'}`.
///
/// The script is a template: [`append_script`] fills in the publish command, `SPUBLISH` on a
/// Redis Cluster (a sharded message stays on the shard that owns the game's slot, where the
/// channel's subscribers are connected, instead of being broadcast over the cluster bus to every
/// node) and `PUBLISH` on a single node (which every Redis version has).
const APPEND_TEMPLATE: &str = r#"
local check = ARGV[8] or ''
if check ~= '' then
  local prior = redis.call('HGET', KEYS[3], check)
  if prior then return {'duplicate', tonumber(prior)} end
end
local expected = tonumber(ARGV[1])
local current = redis.call('XLEN', KEYS[2])
if current == 0 and redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
if current ~= expected then
  local missing = {}
  if current > expected then
    missing = redis.call('XRANGE', KEYS[2], (expected + 1) .. '-0', '+')
  end
  return {'conflict', current, missing}
end
local version = current + 1
local head = ARGV[7] or ''
if head ~= '' then
  redis.call('XADD', KEYS[2], version .. '-0', 'seat', ARGV[2], 'action', ARGV[3], 'req', ARGV[4], 'at', ARGV[5], 'h', head)
else
  redis.call('XADD', KEYS[2], version .. '-0', 'seat', ARGV[2], 'action', ARGV[3], 'req', ARGV[4], 'at', ARGV[5])
end
local record = ARGV[9] or ''
if record ~= '' then
  redis.call('HSET', KEYS[3], record, version)
  redis.call('EXPIRE', KEYS[3], ARGV[10])
end
local active = ARGV[12] or ''
if active ~= '' then redis.call('HSET', KEYS[1], 'active_ms', active) end
redis.call('{publish}', KEYS[4], ARGV[6])
local finished = ARGV[11] or ''
if finished ~= '' then
  redis.call('HSET', KEYS[1], 'finished_at_ms', finished)
  local game = redis.call('HMGET', KEYS[1], 'kind', 'created_at_ms', 'tenant')
  return {'appended', version, game[1], game[2], game[3]}
end
return version
"#;

/// The append of an ordinary move: [`APPEND_TEMPLATE`]'s work in its most common case, with
/// only what that case needs (each key, argument and number the script converts costs Redis CPU
/// on every Act; `tabula load --probe-redis` prints it). The replica sends it for an Act in layout
/// 2 (`keys::LAYOUT_LEAN`) at an expected version above 0, with the request id proposed at that
/// version (`RetryScope::AtVersion`), that does not end the game: nothing to check or record in
/// the request-id index and nothing to write in the meta, so the meta and the index are not
/// keys. Everything else goes through [`APPEND_TEMPLATE`].
///
/// KEYS: log, channel. ARGV: 1. the expected version; 2. seat, 3. action, 4. request id, 5.
/// server time: the entry's fields; 6. the announcement (as in [`APPEND_TEMPLATE`]); 7. the new
/// entry's id, `<expected + 1>-0` (built by the replica: Lua would format the number through
/// `sprintf`, which costs more than the append's other steps); 8. the chain's head ('' or absent:
/// a game without a chain).
///
/// Reply: the new version (an integer); `{'conflict', current, entries after the expected
/// version}`; or `{'empty'}` for an empty log, which at an expected version above 0 is a game
/// that left the store or a log that lost its writes: the replica then asks [`APPEND_TEMPLATE`],
/// which reads the meta to tell them apart. The same entry as [`APPEND_TEMPLATE`] writes, in the
/// same format, so replicas of either script share a store.
const APPEND_LEAN_TEMPLATE: &str = r#"
local current = redis.call('XLEN', KEYS[1])
if current ~= tonumber(ARGV[1]) then
  if current == 0 then return {'empty'} end
  local missing = {}
  if current > tonumber(ARGV[1]) then
    missing = redis.call('XRANGE', KEYS[1], (tonumber(ARGV[1]) + 1) .. '-0', '+')
  end
  return {'conflict', current, missing}
end
local head = ARGV[8] or ''
if head ~= '' then
  redis.call('XADD', KEYS[1], ARGV[7], 'seat', ARGV[2], 'action', ARGV[3], 'req', ARGV[4], 'at', ARGV[5], 'h', head)
else
  redis.call('XADD', KEYS[1], ARGV[7], 'seat', ARGV[2], 'action', ARGV[3], 'req', ARGV[4], 'at', ARGV[5])
end
redis.call('{publish}', KEYS[2], ARGV[6])
return current + 1
"#;

/// Meta, the snapshot (if made with the game's rules version) and the log after it.
/// KEYS: meta, log, snap.
pub(super) const LOAD_SCRIPT: &str = r#"
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
local rules = redis.call('HGET', KEYS[1], 'rules_version')
local snap = redis.call('HGETALL', KEYS[3])
local fields = {}
for i = 1, #snap, 2 do fields[snap[i]] = snap[i + 1] end
local after = 0
local usable = {}
if fields['rules_version'] == rules and fields['version'] then
  after = tonumber(fields['version'])
  usable = snap
end
return {meta, usable, redis.call('XRANGE', KEYS[2], (after + 1) .. '-0', '+')}
"#;

/// Creates the meta hash unless it exists. KEYS: meta. ARGV: field, value, ...
pub(super) const CREATE_SCRIPT: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"#;

/// The commands, besides `XADD`, that both append scripts (`APPEND_TEMPLATE`,
/// `APPEND_LEAN_TEMPLATE`) call before every append they make (one each, unconditionally):
/// with an `XADD` count, how many of their calls ran inside the append scripts, for the load
/// generator's Redis cost per Act (`tabula load --probe-redis`).
pub const APPEND_CALLS_EACH_TIME: [&str; 1] = ["XLEN"];

/// The placeholder of [`APPEND_TEMPLATE`] for the publish command.
const PUBLISH_PLACEHOLDER: &str = "{publish}";

/// The append script for a Redis Cluster (`cluster`) or a single node: [`APPEND_TEMPLATE`] with
/// its one publish command filled in.
pub fn append_script(cluster: bool) -> String {
    APPEND_TEMPLATE.replace(PUBLISH_PLACEHOLDER, publish_command(cluster))
}

/// The lean append script ([`APPEND_LEAN_TEMPLATE`]) for a Redis Cluster (`cluster`) or a single
/// node, its publish command filled in as in [`append_script`].
pub fn append_lean_script(cluster: bool) -> String {
    APPEND_LEAN_TEMPLATE.replace(PUBLISH_PLACEHOLDER, publish_command(cluster))
}

/// `SPUBLISH` on a Redis Cluster, `PUBLISH` on a single node (see [`APPEND_TEMPLATE`]).
fn publish_command(cluster: bool) -> &'static str {
    if cluster { "SPUBLISH" } else { "PUBLISH" }
}

/// Everything the archive keeps about a game. KEYS: meta, log. Nil for an unknown game.
pub(super) const READ_WHOLE_SCRIPT: &str = r#"
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
return {meta, redis.call('XRANGE', KEYS[2], '-', '+')}
"#;

/// Deletes a finished game's keys (retention, after it was archived). KEYS: meta, log, req, snap,
/// hooks (its webhook delivery cursors).
/// Returns `{1, tenant}` if deleted (the tenant whose index lists it, '' for none), 0 if the game
/// has not finished (left alone), -1 if it is gone already.
pub(super) const REMOVE_FINISHED_SCRIPT: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'finished_at_ms') == 0 then return 0 end
local tenant = redis.call('HGET', KEYS[1], 'tenant') or ''
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
return {1, tenant}
"#;

/// Whether a running game is idle. KEYS: meta, log. Returns nil for an unknown game, else
/// `{last activity ms, finished (0/1), log length}`. The last activity is the latest of the last
/// entry's server time (`at`: layout 2 records nothing else), the meta's `active_ms` (written by
/// appends in layout 1, and by 1.0.0) and the creation time.
pub(super) const IDLE_SCRIPT: &str = r#"
local meta = redis.call('HMGET', KEYS[1], 'active_ms', 'created_at_ms', 'finished_at_ms')
if not meta[2] then return false end
local finished = 0
if meta[3] then finished = 1 end
local last = tonumber(meta[1] or meta[2])
local tail = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if tail[1] then
  local fields = tail[1][2]
  for i = 1, #fields - 1, 2 do
    if fields[i] == 'at' then
      local at = tonumber(fields[i + 1])
      if at and at > last then last = at end
    end
  end
end
return {last, finished, redis.call('XLEN', KEYS[2])}
"#;

/// Replaces the snapshot unless the stored one is as new. KEYS: snap. ARGV: version, rules, state,
/// and the chain's head (`<version, 8 bytes big-endian><32 bytes>`, '' for none): tagged with its
/// version because 1.0.0 replaces a snapshot without touching `head`, and a head is used only
/// with the snapshot of its own version.
pub(super) const SNAPSHOT_SCRIPT: &str = r#"
local current = redis.call('HGET', KEYS[1], 'version')
if current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'rules_version', ARGV[2], 'state', ARGV[3], 'head', ARGV[4] or '')
return 1
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every publishing call in a script, by command name.
    fn publishes(script: &str) -> Vec<&str> {
        script
            .match_indices("redis.call('")
            .map(|(at, call)| {
                let name = &script[at + call.len()..];
                &name[..name.find('\'').expect("a quoted command")]
            })
            .filter(|name| name.ends_with("PUBLISH"))
            .collect()
    }

    #[test]
    fn each_append_variant_publishes_exactly_once_with_its_command() {
        for (template, script) in [
            (APPEND_TEMPLATE, append_script as fn(bool) -> String),
            (APPEND_LEAN_TEMPLATE, append_lean_script),
        ] {
            assert_eq!(template.matches(PUBLISH_PLACEHOLDER).count(), 1);
            assert_eq!(publishes(&script(false)), ["PUBLISH"]);
            assert_eq!(publishes(&script(true)), ["SPUBLISH"]);
            for cluster in [false, true] {
                assert!(!script(cluster).contains(PUBLISH_PLACEHOLDER));
            }
        }
    }

    #[test]
    fn the_commands_said_to_precede_every_append_do() {
        for template in [APPEND_TEMPLATE, APPEND_LEAN_TEMPLATE] {
            let first_append = template
                .find("redis.call('XADD'")
                .expect("the script appends");
            for name in APPEND_CALLS_EACH_TIME {
                // Unconditional: on a line of its own at the script's top level, not in an `if`.
                let call = format!("redis.call('{name}'");
                let at = template
                    .lines()
                    .scan(0, |offset, line| {
                        let start = *offset;
                        *offset += line.len() + 1;
                        Some((start, line))
                    })
                    .find(|(_, line)| !line.starts_with(' ') && line.contains(&call))
                    .map(|(start, _)| start)
                    .unwrap_or_else(|| panic!("{name} is not called at the top level"));
                assert!(at < first_append, "{name} comes after the XADD");
                assert_eq!(template.matches(&call).count(), 1, "{name} once");
            }
        }
    }

    #[test]
    fn both_append_scripts_write_the_same_entry() {
        // Replicas of either script share a store (and a replica sends both): the entry's
        // fields, in order, are the same.
        let fields = |script: &str| -> Vec<Vec<String>> {
            script
                .lines()
                .filter(|line| line.contains("redis.call('XADD'"))
                .map(|line| {
                    line.split(", ")
                        .skip(3)
                        .step_by(2)
                        .map(|field| field.trim_matches('\'').to_owned())
                        .collect()
                })
                .collect()
        };
        let full = fields(APPEND_TEMPLATE);
        assert_eq!(full.len(), 2, "with and without a chain");
        assert_eq!(fields(APPEND_LEAN_TEMPLATE), full);
        assert_eq!(full[0], ["seat", "action", "req", "at", "h"]);
    }
}
