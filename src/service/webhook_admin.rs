//! A tenant's webhooks and dead letters (`AdminService.AddWebhook`, `ListWebhooks`,
//! `RemoveWebhook`, `ListDeadLetters`, `RedeliverDeadLetters`): the operator for any tenant, a
//! tenant's key for its own (another tenant's id answers as a missing tenant). What a webhook is
//! told and how it is signed: `webhooks.rs`; delivery: `webhook_delivery.rs`.

use std::collections::HashSet;

use super::error::{ServiceError, ServiceResult};
use super::tabula::Tabula;
use super::tenants::Caller;
use super::webhooks::{DeadRecord, GameWebhooks, WebhookRecord, new_webhook};
use crate::proto::v1 as pb;

/// The most dead letters one call lists, and redelivers.
const MAX_LISTED: usize = 1000;
const MAX_REDELIVERED: usize = 100;

pub(super) async fn add_webhook(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::AddWebhookRequest,
) -> ServiceResult<pb::AddWebhookResponse> {
    let tenant = caller.managed_tenant(&request.tenant_id)?;
    let webhook = new_webhook(&tabula.webhook_sender, "", request.url, &request.kinds)?;
    let secret = webhook.secret.clone();
    let described = webhook.to_pb();
    tabula.tenants.add_webhook(&tenant, webhook).await?;
    Ok(pb::AddWebhookResponse {
        webhook: Some(described),
        secret,
    })
}

pub(super) async fn list_webhooks(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::ListWebhooksRequest,
) -> ServiceResult<pb::ListWebhooksResponse> {
    let tenant = caller.managed_tenant(&request.tenant_id)?;
    let record = tabula
        .tenants
        .list()
        .await?
        .into_iter()
        .find(|record| record.id == tenant)
        .ok_or_else(|| ServiceError::Missing(format!("tenant {tenant} does not exist")))?;
    Ok(pb::ListWebhooksResponse {
        webhooks: record.webhooks.iter().map(WebhookRecord::to_pb).collect(),
    })
}

pub(super) async fn remove_webhook(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::RemoveWebhookRequest,
) -> ServiceResult<pb::RemoveWebhookResponse> {
    let tenant = caller.managed_tenant(&request.tenant_id)?;
    tabula
        .tenants
        .remove_webhook(&tenant, &request.webhook_id)
        .await?;
    Ok(pb::RemoveWebhookResponse {})
}

pub(super) async fn list_dead_letters(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::ListDeadLettersRequest,
) -> ServiceResult<pb::ListDeadLettersResponse> {
    let tenant = caller.managed_tenant(&request.tenant_id)?;
    let limit = match request.page_size {
        0 => MAX_LISTED,
        size => (size as usize).min(MAX_LISTED),
    };
    let letters = tabula.outbox.dead_letters(&tenant, limit).await?;
    Ok(pb::ListDeadLettersResponse {
        dead_letters: letters
            .iter()
            .filter_map(|letter| {
                let record: DeadRecord = serde_json::from_slice(&letter.record).ok()?;
                Some(pb::DeadLetter {
                    dead_letter_id: letter.id.clone(),
                    webhook_id: record.webhook_id,
                    event_id: record.event_id,
                    dead_time: Some(super::listing::timestamp(letter.dead_at_ms)),
                    attempts: record.attempts,
                    last_error: record.last_error,
                    body: record.body,
                })
            })
            .collect(),
    })
}

pub(super) async fn redeliver_dead_letters(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::RedeliverDeadLettersRequest,
) -> ServiceResult<pb::RedeliverDeadLettersResponse> {
    let tenant = caller.managed_tenant(&request.tenant_id)?;
    if request.dead_letter_ids.len() > MAX_REDELIVERED {
        return Err(ServiceError::InvalidArgument(format!(
            "{} dead letters named; at most {MAX_REDELIVERED} per call",
            request.dead_letter_ids.len()
        )));
    }
    let wanted: HashSet<&str> = request.dead_letter_ids.iter().map(String::as_str).collect();
    let letters = tabula.outbox.dead_letters(&tenant, usize::MAX).await?;
    let hooks = tabula.tenants.webhooks(&tenant);
    let mut response = pb::RedeliverDeadLettersResponse::default();
    let mut found = HashSet::new();
    for letter in letters
        .iter()
        .filter(|letter| wanted.contains(letter.id.as_str()))
    {
        found.insert(letter.id.as_str());
        let failed = |error: String| pb::DeadLetterFailure {
            dead_letter_id: letter.id.clone(),
            error,
        };
        let Ok(record) = serde_json::from_slice::<DeadRecord>(&letter.record) else {
            response
                .failed
                .push(failed("the dead letter does not decode".into()));
            continue;
        };
        // A tenant's webhook, or one of the game's own (the event id starts with the game's).
        let game_hooks = match hooks.iter().any(|hook| hook.id == record.webhook_id) {
            true => Vec::new(),
            false => game_webhooks(tabula, &tenant, &record.event_id).await,
        };
        let Some(hook) = hooks
            .iter()
            .chain(&game_hooks)
            .find(|hook| hook.id == record.webhook_id)
        else {
            response
                .failed
                .push(failed(format!("webhook {} was removed", record.webhook_id)));
            continue;
        };
        match tabula
            .webhook_sender
            .post(hook, &record.event_id, &record.body)
            .await
        {
            Ok(()) => {
                tabula
                    .outbox
                    .remove_dead_letter(&tenant, &letter.id)
                    .await?;
                response.delivered.push(letter.id.clone());
            }
            Err(error) => response.failed.push(failed(error)),
        }
    }
    for id in &request.dead_letter_ids {
        if !found.contains(id.as_str()) {
            response.failed.push(pb::DeadLetterFailure {
                dead_letter_id: super::error::bounded(id).to_owned(),
                error: "no such dead letter".into(),
            });
        }
    }
    Ok(response)
}

/// The own webhooks of the game event `event_id` (`<game id>:<version>:<kind>`) is of, if the
/// game is still there and `tenant`'s.
async fn game_webhooks(tabula: &Tabula, tenant: &str, event_id: &str) -> Vec<WebhookRecord> {
    let Some((game_id, _)) = event_id.split_once(':') else {
        return Vec::new();
    };
    match tabula.cache.current(game_id).await {
        Ok(game) if game.meta.tenant.as_deref() == Some(tenant) => GameWebhooks::decode(&game.meta),
        _ => Vec::new(),
    }
}
