//! Canonical proto3 JSON for Tabula's messages (exported logs, verification reports), through the
//! descriptor set and `prost-reflect`, so the JSON is exactly what any protobuf library produces.

use prost::Message;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, SerializeOptions};

use crate::proto;

fn pool() -> anyhow::Result<DescriptorPool> {
    Ok(DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET)?)
}

/// `message` (of full name `name`, e.g. `tabula.v1.GameLog`) as canonical JSON.
pub fn to_json<M: Message>(message: &M, name: &str) -> anyhow::Result<String> {
    let descriptor = pool()?
        .get_message_by_name(name)
        .ok_or_else(|| anyhow::anyhow!("unknown message {name}"))?;
    let dynamic = DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice())?;
    let mut serializer = serde_json::Serializer::pretty(Vec::new());
    dynamic.serialize_with_options(&mut serializer, &SerializeOptions::new())?;
    Ok(String::from_utf8(serializer.into_inner())?)
}

/// Parses canonical JSON into `M` (of full name `name`).
pub fn from_json<M: Message + Default>(json: &str, name: &str) -> anyhow::Result<M> {
    let descriptor = pool()?
        .get_message_by_name(name)
        .ok_or_else(|| anyhow::anyhow!("unknown message {name}"))?;
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let dynamic = DynamicMessage::deserialize(descriptor, &mut deserializer)?;
    deserializer.end()?;
    Ok(M::decode(dynamic.encode_to_vec().as_slice())?)
}

/// Field names of exported logs that changed before 1.0.0, when the games' protos got packages of
/// their own (README, *The proto*): (the game's case of the generic `oneof`s, the JSON key of the
/// object holding the field, its old name, its name now). Binary logs never changed (same field
/// numbers); since 1.0.0 JSON names are frozen (`buf breaking`), so nothing is ever added
/// to this list.
const PRE_1_0_NAMES: &[(&str, &str, &str, &str)] = &[
    // Manila `Bid.amount` → `price`.
    ("manila", "bid", "amount", "price"),
    // Manila `PuntMoved.from`/`to` → `from_space`/`to_space` (in `ShipsMoved.moves`).
    ("manila", "moves", "from", "fromSpace"),
    ("manila", "moves", "to", "toSpace"),
    // Medici vs Strozzi `MarkerMoved.from`/`to` → `from_position`/`to_position`.
    ("mediciVsStrozzi", "markers", "from", "fromPosition"),
    ("mediciVsStrozzi", "markers", "to", "toPosition"),
    // Strozzi `MarkerMoved.from`/`to` → `from_space`/`to_space`; `Action.pass` → `pass_card`.
    ("strozzi", "markerMoved", "from", "fromSpace"),
    ("strozzi", "markerMoved", "to", "toSpace"),
    ("strozzi", "strozzi", "pass", "passCard"),
];

/// The cases of the generic `oneof`s that name a game in JSON.
const GAME_CASES: &[&str] = &["mediciVsStrozzi", "strozzi", "manila", "laStrada", "nim"];

/// Parses an exported log (`tabula.v1.GameLog`) in canonical JSON, also as exported before 1.0.0:
/// the few fields renamed then (`PRE_1_0_NAMES`) are read under their old names, so a log
/// exported by any build still imports (docs/compatibility.md).
///
/// Fields this build does not know are skipped, so a log exported by a later release (which may
/// only add fields: docs/compatibility.md) imports as far as this build understands it.
pub fn log_from_json(json: &str) -> anyhow::Result<crate::proto::v1::GameLog> {
    let mut value: serde_json::Value = serde_json::from_str(json)?;
    rename_pre_1_0_fields(&mut value, None, None);
    let descriptor = pool()?
        .get_message_by_name("tabula.v1.GameLog")
        .ok_or_else(|| anyhow::anyhow!("unknown message tabula.v1.GameLog"))?;
    let dynamic = DynamicMessage::deserialize_with_options(
        descriptor,
        value,
        &DeserializeOptions::new().deny_unknown_fields(false),
    )?;
    Ok(crate::proto::v1::GameLog::decode(
        dynamic.encode_to_vec().as_slice(),
    )?)
}

/// Renames, in place, the pre-1.0 fields of `value`, found under the JSON key `key` inside the
/// game case `game`.
fn rename_pre_1_0_fields(value: &mut serde_json::Value, game: Option<&str>, key: Option<&str>) {
    match value {
        serde_json::Value::Array(items) => {
            for item in items {
                rename_pre_1_0_fields(item, game, key);
            }
        }
        serde_json::Value::Object(fields) => {
            if let (Some(game), Some(key)) = (game, key) {
                for (_, _, old, new) in PRE_1_0_NAMES
                    .iter()
                    .filter(|(in_game, in_key, _, _)| *in_game == game && *in_key == key)
                {
                    if !fields.contains_key(*new)
                        && let Some(moved) = fields.remove(*old)
                    {
                        fields.insert((*new).to_owned(), moved);
                    }
                }
            }
            for (name, field) in fields.iter_mut() {
                let game = GAME_CASES
                    .iter()
                    .find(|case| **case == name.as_str())
                    .copied()
                    .or(game);
                rename_pre_1_0_fields(field, game, Some(name.as_str()));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::v1 as pb;

    /// The same log with every renamed field under its pre-1.0 name, as a log exported before
    /// 1.0.0 reads.
    fn as_before_1_0(json: &str) -> String {
        let mut value: serde_json::Value = serde_json::from_str(json).expect("JSON");
        fn back(value: &mut serde_json::Value, game: Option<&str>, key: Option<&str>) {
            match value {
                serde_json::Value::Array(items) => {
                    items.iter_mut().for_each(|item| back(item, game, key));
                }
                serde_json::Value::Object(fields) => {
                    if let (Some(game), Some(key)) = (game, key) {
                        for (_, _, old, new) in PRE_1_0_NAMES
                            .iter()
                            .filter(|(g, k, _, _)| *g == game && *k == key)
                        {
                            if let Some(moved) = fields.remove(*new) {
                                fields.insert((*old).to_owned(), moved);
                            }
                        }
                    }
                    for (name, field) in fields.iter_mut() {
                        let game = GAME_CASES
                            .iter()
                            .find(|case| **case == name.as_str())
                            .copied()
                            .or(game);
                        back(field, game, Some(name.as_str()));
                    }
                }
                _ => {}
            }
        }
        back(&mut value, None, None);
        value.to_string()
    }

    #[test]
    fn logs_exported_before_1_0_import_as_the_same_log() {
        for (name, json) in [
            (
                "manila",
                include_str!("../tests/golden/1.0.0/manila-3p-finished.json"),
            ),
            (
                "medici_vs_strozzi",
                include_str!("../tests/golden/1.0.0/medici_vs_strozzi-2p-finished.json"),
            ),
            (
                "strozzi",
                include_str!("../tests/golden/1.0.0/strozzi-3p-finished.json"),
            ),
        ] {
            let legacy = as_before_1_0(json);
            assert_ne!(legacy, json, "{name}: the log has renamed fields to test");
            assert!(
                from_json::<pb::GameLog>(&legacy, "tabula.v1.GameLog").is_err(),
                "{name}: the plain reader refuses the old names (so this test tests something)"
            );
            let now = from_json::<pb::GameLog>(json, "tabula.v1.GameLog").expect("today's JSON");
            let imported = log_from_json(&legacy).expect("the pre-1.0 JSON imports");
            assert_eq!(imported, now, "{name}");
            assert_eq!(log_from_json(json).expect("today's JSON"), now, "{name}");
            // A later release's log, with a field this build does not know, imports too.
            let mut later: serde_json::Value = serde_json::from_str(json).expect("JSON");
            later["addedInALaterRelease"] = serde_json::json!("x");
            assert_eq!(
                log_from_json(&later.to_string()).expect("a later release's JSON"),
                now,
                "{name}"
            );
        }
    }

    #[test]
    fn every_renamed_field_is_read_under_its_old_name() {
        let action = |json: &str| {
            let mut value: serde_json::Value = serde_json::from_str(json).expect("JSON");
            rename_pre_1_0_fields(&mut value, None, None);
            from_json::<pb::Action>(&value.to_string(), "tabula.v1.Action").expect("an action")
        };
        let bid = action(r#"{"manila":{"bid":{"amount":"7"}}}"#);
        assert_eq!(bid, action(r#"{"manila":{"bid":{"price":"7"}}}"#));
        let pass = action(r#"{"strozzi":{"pass":{}}}"#);
        assert_eq!(pass, action(r#"{"strozzi":{"passCard":{}}}"#));
    }
}
