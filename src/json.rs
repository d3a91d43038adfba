//! Canonical proto3 JSON for Tabula's messages (exported logs, verification reports), through the
//! descriptor set and `prost-reflect`, so the JSON is exactly what any protobuf library produces.

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};

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
