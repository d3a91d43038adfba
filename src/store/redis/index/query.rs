//! The game index's queries in the listing script's terms, and its replies read back: which
//! sets a filter reads, the score range and cursor of a page, and the shapes the scripts answer.

use redis::Value;

use super::Found;
use crate::proto::v1::GameKind;
use crate::store::redis::{as_string, corrupt, field_map, parse_meta};
use crate::store::{GameFilter, IndexPosition, ListOrder, ListQuery, ListedGame, StoreResult};

/// A score bound as ZRANGEBYSCORE takes it.
pub(super) fn bound(value: Option<u64>, exclusive: bool, infinity: &str) -> String {
    match value {
        None => infinity.to_owned(),
        Some(value) if exclusive => format!("({value}"),
        Some(value) => value.to_string(),
    }
}

/// The sorted sets (kind, finished) a filter reads.
pub(super) fn sets_of(filter: &GameFilter) -> Vec<(GameKind, bool)> {
    let progress: &[bool] = match filter.finished {
        None => &[false, true],
        Some(false) => &[false],
        Some(true) => &[true],
    };
    let kinds: Vec<GameKind> = match filter.kind {
        Some(kind) => vec![kind],
        None => super::every_kind().collect(),
    };
    kinds
        .into_iter()
        .flat_map(|kind| progress.iter().map(move |&finished| (kind, finished)))
        .collect()
}

/// The listing script's order argument.
pub(super) fn order_of(query: &ListQuery) -> &'static str {
    match query.order {
        ListOrder::OldestFirst => "asc",
        ListOrder::NewestFirst => "desc",
    }
}

/// The listing script's cursor arguments: its score and id (both empty without a cursor).
pub(super) fn cursor_of(query: &ListQuery) -> (String, &str) {
    match &query.after {
        Some(after) => (after.created_at_ms.to_string(), after.game_id.as_str()),
        None => (String::new(), ""),
    }
}

/// The lowest and highest score a page reads, as ZRANGEBYSCORE takes them: the filter's time
/// range narrowed by the cursor (whose own score is included: the script skips up to its id).
pub(super) fn score_bounds(query: &ListQuery) -> (String, String) {
    let filter = &query.filter;
    let mut low = filter.created_from_ms;
    let mut high = filter.created_until_ms;
    let mut high_exclusive = true;
    if let Some(after) = &query.after {
        let cursor = after.created_at_ms;
        match query.order {
            ListOrder::OldestFirst => low = Some(low.map_or(cursor, |low| low.max(cursor))),
            ListOrder::NewestFirst => {
                if high.is_none_or(|high| cursor < high) {
                    high = Some(cursor);
                    high_exclusive = false;
                }
            }
        }
    }
    (
        bound(low, false, "-inf"),
        bound(high, high_exclusive, "+inf"),
    )
}

/// A score as Redis writes it (integral here: milliseconds).
pub(super) fn parse_score(text: &str) -> StoreResult<u64> {
    text.parse::<u64>()
        .ok()
        .or_else(|| {
            text.parse::<f64>()
                .ok()
                .filter(|score| *score >= 0.0)
                .map(|score| score as u64)
        })
        .ok_or_else(|| corrupt(format!("index score {text:?} is not a time")))
}

/// A shard's finishing intents: (game id, intent).
pub(super) type Intents = Vec<(String, String)>;

/// A shard's answer: its finishing intents and its entries.
pub(super) fn parse_shard_page(
    reply: Value,
    sets: &[(GameKind, bool)],
) -> StoreResult<(Intents, Vec<Found>)> {
    let Value::Array(parts) = reply else {
        return Err(corrupt(format!("unexpected index reply {reply:?}")));
    };
    let [intents, entries]: [Value; 2] =
        parts.try_into().map_err(|_| corrupt("index reply shape"))?;
    let intents = field_map(intents)?
        .into_iter()
        .map(|(game_id, intent)| (game_id, String::from_utf8_lossy(&intent).into_owned()))
        .collect();
    let Value::Array(flat) = entries else {
        return Err(corrupt("index entries are not an array"));
    };
    let mut found = Vec::with_capacity(flat.len() / 3);
    let mut items = flat.into_iter();
    while let (Some(id), Some(score), Some(set)) = (items.next(), items.next(), items.next()) {
        let set = match set {
            Value::Int(n) => usize::try_from(n).ok(),
            other => as_string(other)?.parse().ok(),
        }
        .and_then(|n: usize| n.checked_sub(1))
        .and_then(|n| sets.get(n))
        .ok_or_else(|| corrupt("index entry names no set"))?;
        found.push(Found {
            position: IndexPosition {
                created_at_ms: parse_score(&as_string(score)?)?,
                game_id: as_string(id)?,
            },
            kind: set.0,
            finished: set.1,
        });
    }
    Ok((intents, found))
}

/// A listed game from [`SUMMARY_SCRIPT`](super::SUMMARY_SCRIPT)'s reply; `None` when the game does
/// not exist.
pub(super) fn parse_summary(game_id: &str, reply: Value) -> StoreResult<Option<ListedGame>> {
    let parts = match reply {
        Value::Nil => return Ok(None),
        Value::Array(parts) => parts,
        other => return Err(corrupt(format!("unexpected summary reply {other:?}"))),
    };
    let [meta, version]: [Value; 2] = parts
        .try_into()
        .map_err(|_| corrupt("summary reply shape"))?;
    let fields = field_map(meta)?;
    let finished_at_ms = fields
        .iter()
        .find(|(name, _)| name == "finished_at_ms")
        .and_then(|(_, value)| std::str::from_utf8(value).ok()?.parse().ok());
    let version = match version {
        Value::Int(n) => u64::try_from(n).map_err(|_| corrupt("negative log length"))?,
        other => return Err(corrupt(format!("unexpected log length {other:?}"))),
    };
    Ok(Some(ListedGame {
        meta: parse_meta(game_id, &fields)?,
        version,
        finished_at_ms,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::redis::keys::{SHARDS, finishing_intents, index_set, shard_of};

    #[test]
    fn shards_are_stable_and_spread() {
        // Fixed values: a game's shard must never change between builds.
        assert_eq!(shard_of(""), 0x811c_9dc5 % SHARDS);
        assert_eq!(shard_of("a"), 0xe40c_292c % SHARDS);
        let mut seen = std::collections::HashSet::new();
        for n in 0..1000u32 {
            seen.insert(shard_of(&format!("{n:032x}")));
        }
        assert_eq!(seen.len(), SHARDS as usize, "every shard gets games");
    }

    #[test]
    fn index_keys_carry_their_shard_tag() {
        assert_eq!(
            index_set(3, GameKind::Manila, true),
            "tabula:{games-3}:3:finished"
        );
        assert_eq!(
            index_set(15, GameKind::MediciVsStrozzi, false),
            "tabula:{games-15}:1:running"
        );
        assert_eq!(finishing_intents(0), "tabula:{games-0}:finishing");
    }

    #[test]
    fn the_cursor_narrows_the_score_range() {
        let query = |order, after: Option<u64>| ListQuery {
            filter: GameFilter {
                created_from_ms: Some(100),
                created_until_ms: Some(200),
                ..GameFilter::default()
            },
            order,
            after: after.map(|created_at_ms| IndexPosition {
                created_at_ms,
                game_id: "g".into(),
            }),
            limit: 10,
        };
        assert_eq!(
            score_bounds(&query(ListOrder::OldestFirst, None)),
            ("100".into(), "(200".into())
        );
        assert_eq!(
            score_bounds(&query(ListOrder::OldestFirst, Some(150))),
            ("150".into(), "(200".into())
        );
        assert_eq!(
            score_bounds(&query(ListOrder::NewestFirst, Some(150))),
            ("100".into(), "150".into())
        );
        let open = ListQuery {
            filter: GameFilter::default(),
            ..query(ListOrder::NewestFirst, None)
        };
        assert_eq!(score_bounds(&open), ("-inf".into(), "+inf".into()));
    }

    #[test]
    fn filters_read_only_their_sets() {
        assert_eq!(
            sets_of(&GameFilter::default()).len(),
            super::super::every_kind().count() * 2
        );
        let finished_manila = GameFilter {
            kind: Some(GameKind::Manila),
            finished: Some(true),
            ..GameFilter::default()
        };
        assert_eq!(sets_of(&finished_manila), vec![(GameKind::Manila, true)]);
    }
}
