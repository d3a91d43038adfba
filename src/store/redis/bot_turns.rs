//! The bot turns a replica has promised to play, on Redis: the crash-safe fallback of the bot
//! workers (`crate::service` `bots.rs`).
//!
//! A turn cannot live in its game's slot and still be found by a replica that does not know the
//! game, so, as the game index does, the pending turns are cut into [`SHARDS`] fixed shards with
//! hash tags of their own, `tabula:{bots-<n>}:pending` (a game's shard is its index shard,
//! `fnv1a(id) mod SHARDS`): a sorted set of `<version>:<game id>` scored by the time (ms since the
//! Unix epoch) after which any replica may play the turn. A sweep claims the due members of each
//! shard with one script per shard (the claim pushes their time forward, so replicas sweeping at
//! once rarely both think; if they do, the conditional append keeps one move).

use redis::Script;

use super::keys::{SHARDS, pending_bot_turns, shard_of};
use super::{HealingConnection, corrupt, unavailable};
use crate::store::{BotTurn, StoreResult};

/// Returns the members due at `ARGV[1]` (at most `ARGV[3]`) and moves their time to `ARGV[2]`.
pub(super) const CLAIM_SCRIPT: &str = r"
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member)
end
return due
";

fn member(turn: &BotTurn) -> String {
    format!("{}:{}", turn.version, turn.game_id)
}

fn parse_member(member: &str) -> StoreResult<BotTurn> {
    let (version, game_id) = member
        .split_once(':')
        .ok_or_else(|| corrupt(format!("pending bot turn {member:?} is not <version>:<id>")))?;
    let version = version
        .parse()
        .map_err(|_| corrupt(format!("pending bot turn {member:?}: bad version")))?;
    Ok(BotTurn {
        game_id: game_id.to_owned(),
        version,
    })
}

/// The pending bot turns (see the module docs).
pub(super) struct BotTurns {
    claim: Script,
}

impl BotTurns {
    pub(super) fn new() -> Self {
        BotTurns {
            claim: Script::new(CLAIM_SCRIPT),
        }
    }

    pub(super) async fn mark(
        &self,
        connection: &HealingConnection,
        turn: &BotTurn,
        due_ms: u64,
    ) -> StoreResult<()> {
        let _: i64 = redis::cmd("ZADD")
            .arg(pending_bot_turns(shard_of(&turn.game_id)))
            .arg(due_ms)
            .arg(member(turn))
            .query_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    pub(super) async fn clear(
        &self,
        connection: &HealingConnection,
        turn: &BotTurn,
    ) -> StoreResult<()> {
        let _: i64 = redis::cmd("ZREM")
            .arg(pending_bot_turns(shard_of(&turn.game_id)))
            .arg(member(turn))
            .query_async(&mut connection.clone())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    pub(super) async fn claim_due(
        &self,
        connection: &HealingConnection,
        now_ms: u64,
        claim_until_ms: u64,
        limit: usize,
    ) -> StoreResult<Vec<BotTurn>> {
        // One shard after another, each asked for what the limit leaves: a turn claimed here is
        // one this replica will play (a claimed turn dropped for the limit would wait out a whole
        // grace for nothing). Sixteen small scripts a second per replica.
        let mut turns = Vec::new();
        for shard in 0..SHARDS {
            let remaining = limit.saturating_sub(turns.len());
            if remaining == 0 {
                break;
            }
            let members: Vec<String> = self
                .claim
                .key(pending_bot_turns(shard))
                .arg(now_ms)
                .arg(claim_until_ms)
                .arg(remaining)
                .invoke_async(&mut connection.clone())
                .await
                .map_err(unavailable)?;
            for member in members {
                turns.push(parse_member(&member)?);
            }
        }
        Ok(turns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_round_trip() {
        let turn = BotTurn {
            game_id: "0123abc".into(),
            version: 42,
        };
        assert_eq!(parse_member(&member(&turn)).expect("parses"), turn);
        assert!(parse_member("nonsense").is_err());
    }
}
