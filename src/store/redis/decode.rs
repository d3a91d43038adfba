//! Decoding Redis replies into the store's types: a reply that does not have the expected shape is
//! a corrupt store ([`crate::store::StoreError`]), never a panic.

use redis::Value;

use super::corrupt;
use crate::games::Seed;
use crate::store::{GameMeta, LogEntry, PlayerMeta, Snapshot, StoreError, StoreResult};

pub(super) fn as_bytes(value: Value) -> StoreResult<Vec<u8>> {
    match value {
        Value::BulkString(bytes) => Ok(bytes),
        Value::SimpleString(s) => Ok(s.into_bytes()),
        Value::Int(n) => Ok(n.to_string().into_bytes()),
        other => Err(corrupt(format!("expected a string, got {other:?}"))),
    }
}

pub(super) fn as_string(value: Value) -> StoreResult<String> {
    String::from_utf8(as_bytes(value)?).map_err(|_| corrupt("invalid UTF-8"))
}

pub(super) fn as_u64(value: Value) -> StoreResult<u64> {
    match value {
        Value::Int(n) => u64::try_from(n).map_err(|_| corrupt("negative number")),
        other => as_string(other)?
            .parse()
            .map_err(|_| corrupt("not a number")),
    }
}

/// A flat field/value array (HGETALL, stream entry fields) as pairs.
pub(super) fn field_map(value: Value) -> StoreResult<Vec<(String, Vec<u8>)>> {
    let items = match value {
        Value::Array(items) => items,
        Value::Map(pairs) => pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        Value::Nil => Vec::new(),
        other => return Err(corrupt(format!("expected fields, got {other:?}"))),
    };
    let mut pairs = Vec::with_capacity(items.len() / 2);
    let mut items = items.into_iter();
    while let (Some(name), Some(value)) = (items.next(), items.next()) {
        pairs.push((as_string(name)?, as_bytes(value)?));
    }
    Ok(pairs)
}

pub(super) fn field<'a>(fields: &'a [(String, Vec<u8>)], name: &str) -> StoreResult<&'a [u8]> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
        .ok_or_else(|| corrupt(format!("missing field {name}")))
}

pub(super) fn field_number<T: std::str::FromStr>(
    fields: &[(String, Vec<u8>)],
    name: &str,
) -> StoreResult<T> {
    std::str::from_utf8(field(fields, name)?)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| corrupt(format!("field {name} is not a number")))
}

pub(super) fn parse_meta(game_id: &str, fields: &[(String, Vec<u8>)]) -> StoreResult<GameMeta> {
    let seed: [u8; 32] = field(fields, "seed")?
        .try_into()
        .map_err(|_| corrupt("seed length"))?;
    let token_hashes = field(fields, "tokens")?
        .chunks(32)
        .map(|chunk| chunk.try_into().map_err(|_| corrupt("token hash length")))
        .collect::<StoreResult<Vec<[u8; 32]>>>()?;
    // A meta without `format` is format 1 (written before 1.0.0); a later one is refused rather
    // than misread (docs/compatibility.md).
    if let Some((_, format)) = fields.iter().find(|(name, _)| name == "format") {
        let format = String::from_utf8_lossy(format);
        if format != super::keys::GAME_FORMAT.to_string() {
            return Err(StoreError::NewerFormat(format!(
                "game {game_id} is stored in format {}, which this build (Tabula {}) does not \
                 know: a newer release wrote it; serve it from a replica of that release",
                format.chars().take(16).collect::<String>(),
                crate::RELEASE
            )));
        }
    }
    Ok(GameMeta {
        game_id: game_id.to_owned(),
        kind: {
            let number: i32 = field_number(fields, "kind")?;
            crate::proto::v1::GameKind::try_from(number)
                .map_err(|_| corrupt(format!("game {game_id} has unknown kind {number}")))?
        },
        config: field(fields, "config")?.to_vec(),
        rules_version: String::from_utf8_lossy(field(fields, "rules_version")?).into_owned(),
        seed: Seed(seed),
        token_hashes,
        created_at_ms: field_number(fields, "created_at_ms")?,
        players: match fields.iter().find(|(name, _)| name == "players") {
            // Games created before player metadata existed, or without any, have no field.
            None => Vec::new(),
            Some((_, encoded)) => postcard::from_bytes::<Vec<PlayerMeta>>(encoded)
                .map_err(|e| corrupt(format!("game {game_id}: players do not decode: {e}")))?,
        },
        // Games created before 1.0.0 have no field.
        created_by: fields
            .iter()
            .find(|(name, _)| name == "created_by")
            .map(|(_, release)| String::from_utf8_lossy(release).into_owned())
            .unwrap_or_default(),
        // Games created anonymously, with the operator token or before 1.1.0 have no field.
        tenant: fields
            .iter()
            .find(|(name, _)| name == "tenant")
            .map(|(_, tenant)| String::from_utf8_lossy(tenant).into_owned()),
        // Games without webhooks of their own, and games created before 1.1.0, have no field.
        webhooks: fields
            .iter()
            .find(|(name, _)| name == "webhooks")
            .map(|(_, webhooks)| webhooks.clone())
            .unwrap_or_default(),
        // Games without open seats, and games created before 1.1.0, have no field.
        seating: fields
            .iter()
            .find(|(name, _)| name == "seating")
            .map(|(_, seating)| seating.clone())
            .unwrap_or_default(),
        // Games created before 1.1.0 have no field.
        signed_commitment: fields
            .iter()
            .find(|(name, _)| name == "commitment")
            .map(|(_, signed)| signed.clone())
            .unwrap_or_default(),
        // Games created without a request id, and games created before 1.1.0, have no field.
        creation: fields
            .iter()
            .find(|(name, _)| name == "creation")
            .map(|(_, creation)| creation.clone())
            .unwrap_or_default(),
    })
}

pub(super) fn parse_snapshot(fields: &[(String, Vec<u8>)]) -> StoreResult<Option<Snapshot>> {
    if fields.is_empty() {
        return Ok(None);
    }
    let version = field_number(fields, "version")?;
    // The head of this very version only: 1.0.0 replaces a snapshot and leaves `head` as it was.
    let head = fields
        .iter()
        .find(|(name, _)| name == "head")
        .and_then(|(_, tagged)| {
            let (tag, head) = tagged.split_at_checked(8)?;
            let tag: [u8; 8] = tag.try_into().ok()?;
            (u64::from_be_bytes(tag) == version).then_some(())?;
            head.try_into().ok()
        });
    Ok(Some(Snapshot {
        version,
        head,
        rules_version: String::from_utf8_lossy(field(fields, "rules_version")?).into_owned(),
        state: field(fields, "state")?.to_vec(),
    }))
}

/// XRANGE's reply: `[[id, [field, value, ...]], ...]`.
pub(super) fn parse_entries(value: Value) -> StoreResult<Vec<LogEntry>> {
    let items = match value {
        Value::Array(items) => items,
        Value::Nil => return Ok(Vec::new()),
        other => return Err(corrupt(format!("expected stream entries, got {other:?}"))),
    };
    items.into_iter().map(parse_entry).collect()
}

pub(super) fn parse_entry(value: Value) -> StoreResult<LogEntry> {
    let Value::Array(parts) = value else {
        return Err(corrupt("stream entry is not an array"));
    };
    let [id, fields]: [Value; 2] = parts
        .try_into()
        .map_err(|_| corrupt("stream entry shape"))?;
    let id = as_string(id)?;
    let version = id
        .split_once('-')
        .and_then(|(ms, _)| ms.parse().ok())
        .ok_or_else(|| corrupt(format!("stream id {id}")))?;
    let fields = field_map(fields)?;
    Ok(LogEntry {
        version,
        seat: field_number(&fields, "seat")?,
        action: field(&fields, "action")?.to_vec(),
        request_id: String::from_utf8_lossy(field(&fields, "req")?).into_owned(),
        // Entries logged before turn clocks have no time.
        server_time_ms: match fields.iter().find(|(name, _)| name == "at") {
            Some(_) => field_number(&fields, "at")?,
            None => 0,
        },
    })
}
