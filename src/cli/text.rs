//! Compact text for the terminal client (`tabula play`): any game's view and actions printed
//! from their descriptors, so every game has a readable board without a renderer of its own.
//!
//! A view prints one top-level field a line (`name: value`), a repeated message field one element
//! a line; values nest inline as `{field: value, …}` and `[…]`; an unset message or `oneof` case
//! is left out (a 0 is shown: it is news), and an
//! enum value is its name without the enum's prefix, in lower case (`WARE_NUTMEG` → `nutmeg`).

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, FieldDescriptor, Kind, ReflectMessage, Value};

use crate::proto::{self, v1 as pb};

fn decode(message: &impl Message, name: &str) -> Option<DynamicMessage> {
    let pool = DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET).ok()?;
    let descriptor = pool.get_message_by_name(name)?;
    DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice()).ok()
}

/// The single set field of a wrapper such as `tabula.v1.View` (a `oneof` over the games).
fn unwrap_case(message: &DynamicMessage) -> Option<DynamicMessage> {
    message.fields().find_map(|(_, value)| match value {
        Value::Message(inner) => Some(inner.clone()),
        _ => None,
    })
}

/// The board: the game's view, one field a line.
pub fn board(view: &pb::View) -> String {
    let Some(game_view) = decode(view, "tabula.v1.View").and_then(|view| unwrap_case(&view)) else {
        return String::new();
    };
    let mut text = String::new();
    for (field, value) in shown_fields(&game_view) {
        let value = value.as_ref();
        match value {
            Value::List(items) if items.iter().any(|item| matches!(item, Value::Message(_))) => {
                text.push_str(&format!("{}:\n", field.name()));
                for (index, item) in items.iter().enumerate() {
                    text.push_str(&format!(
                        "  [{index}] {}\n",
                        value_text(item, &field.kind())
                    ));
                }
            }
            _ => text.push_str(&format!(
                "{}: {}\n",
                field.name(),
                value_text(value, &field.kind())
            )),
        }
    }
    text
}

/// An action on one line: `case {fields}`, e.g. `bid {amount: 3}` (an empty message: its name).
pub fn action(action: &pb::Action) -> String {
    let Some(game_action) = decode(action, "tabula.v1.Action").and_then(|a| unwrap_case(&a)) else {
        return "?".into();
    };
    let parts: Vec<String> = game_action
        .fields()
        .map(|(field, value)| match value {
            Value::Message(inner) if inner.fields().next().is_none() => field.name().to_owned(),
            Value::Message(inner) => format!("{} {}", field.name(), message_text(inner)),
            other => format!("{}: {}", field.name(), value_text(other, &field.kind())),
        })
        .collect();
    if parts.is_empty() {
        game_action.descriptor().name().to_owned()
    } else {
        parts.join(" ")
    }
}

/// The fields of `message` a reader needs: every field, a 0 or an empty list included (a count of
/// 0 is news, not nothing), except a message or a `oneof` case that is not set.
fn shown_fields(message: &DynamicMessage) -> Vec<(FieldDescriptor, std::borrow::Cow<'_, Value>)> {
    message
        .descriptor()
        .fields()
        .filter(|field| {
            let optional = field.containing_oneof().is_some()
                || (matches!(field.kind(), Kind::Message(_))
                    && !field.is_list()
                    && !field.is_map());
            !optional || message.has_field(field)
        })
        .map(|field| {
            let value = message.get_field(&field);
            (field, value)
        })
        .collect()
}

fn message_text(message: &DynamicMessage) -> String {
    let fields: Vec<String> = shown_fields(message)
        .into_iter()
        .map(|(field, value)| format!("{}: {}", field.name(), value_text(&value, &field.kind())))
        .collect();
    format!("{{{}}}", fields.join(", "))
}

fn value_text(value: &Value, kind: &Kind) -> String {
    match value {
        Value::Message(message) => message_text(message),
        Value::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|item| value_text(item, kind))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::EnumNumber(number) => match kind {
            Kind::Enum(descriptor) => descriptor
                .get_value(*number)
                .map(|value| enum_word(value.name(), descriptor.name()))
                .unwrap_or_else(|| number.to_string()),
            _ => number.to_string(),
        },
        Value::String(text) => format!("{text:?}"),
        Value::Bytes(bytes) => format!("<{} bytes>", bytes.len()),
        Value::Bool(flag) => flag.to_string(),
        Value::I32(n) => n.to_string(),
        Value::I64(n) => n.to_string(),
        Value::U32(n) => n.to_string(),
        Value::U64(n) => n.to_string(),
        Value::F32(n) => n.to_string(),
        Value::F64(n) => n.to_string(),
        Value::Map(map) => format!("{{{} entries}}", map.len()),
    }
}

/// An enum value's name without its enum's prefix, in lower case: `WARE_NUTMEG` of `Ware` →
/// `nutmeg`.
pub fn enum_word(value: &str, enum_name: &str) -> String {
    let mut prefix = String::new();
    for (index, c) in enum_name.chars().enumerate() {
        if c.is_uppercase() && index > 0 {
            prefix.push('_');
        }
        prefix.push(c.to_ascii_uppercase());
    }
    prefix.push('_');
    value
        .strip_prefix(&prefix)
        .unwrap_or(value)
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_words_lose_their_prefix() {
        assert_eq!(enum_word("WARE_NUTMEG", "Ware"), "nutmeg");
        assert_eq!(enum_word("GAME_ENDING_RULES", "GameEnding"), "rules");
        assert_eq!(enum_word("OTHER", "Ware"), "other");
    }

    #[test]
    fn every_game_has_a_board_and_readable_actions() {
        use crate::games::{Seed, Viewer};
        for game in crate::hosting::registry() {
            let config = game.config(game.game_type.min_seats);
            let state = crate::hosting::setup(&config, &Seed::from_u64(1)).expect("setup");
            let board = board(&state.view(Viewer::Spectator));
            // Every field of the view is printed: one line at least, however small the game.
            assert!(!board.trim().is_empty(), "{board}");
            let seat = state.status().to_act.expect("someone acts");
            for legal in state.legal_actions(Viewer::Seat(seat)) {
                let text = action(legal.action.as_ref().expect("action"));
                assert!(!text.is_empty() && text != "?", "{legal:?}");
            }
        }
    }
}
