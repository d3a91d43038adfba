//! `WatchEvents` (operator API): a tenant's notifications as one resumable stream, for a backend
//! that holds one connection instead of receiving webhooks. The notification workers append every
//! notification of the tenant's games to its event stream in the store (`webhook_delivery.rs`);
//! this follows that stream from the cursor the caller sends, polling it while it has nothing new.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tonic::Status;

use super::error::{ServiceError, ServiceResult};
use super::tabula::Tabula;
use super::tenants::Caller;
use crate::proto::v1 as pb;
use crate::store::StoreError;

/// Events read from the store at once.
const BATCH: usize = 100;
/// How often an idle stream looks for new events.
const POLL: Duration = Duration::from_millis(200);
/// Messages buffered for a slow reader before the stream waits for it.
const BUFFER: usize = 64;
/// The longest cursor accepted (store cursors are far shorter).
const MAX_CURSOR_LEN: usize = 64;

pub(super) async fn watch_events(
    tabula: Arc<Tabula>,
    caller: &Caller,
    request: pb::WatchEventsRequest,
) -> ServiceResult<mpsc::Receiver<Result<pb::WatchEventsResponse, Status>>> {
    let tenant = caller.managed_tenant(&request.tenant_id)?;
    let bad_cursor = || {
        ServiceError::InvalidArgument(
            "after is not a cursor of this tenant's event stream: send back a cursor \
             WatchEvents gave, or none"
                .into(),
        )
    };
    let mut after = (!request.after.is_empty()).then_some(request.after);
    if after
        .as_ref()
        .is_some_and(|cursor| cursor.len() > MAX_CURSOR_LEN)
    {
        return Err(bad_cursor());
    }
    // Checked before the stream starts, so a bad cursor is this call's error.
    let first = match tabula
        .events
        .events_after(&tenant, after.as_deref(), BATCH)
        .await
    {
        Ok(events) => events,
        Err(StoreError::Corrupt(_)) => return Err(bad_cursor()),
        Err(error) => return Err(error.into()),
    };
    let slot = match tabula.tenants.limits(&tenant).observe_streams {
        Some(limit) => Some(tabula.quotas.admit_stream(&tenant, limit).await?),
        None => None,
    };
    let (sender, receiver) = mpsc::channel(BUFFER);
    tokio::spawn(async move {
        let _slot = slot;
        let mut batch = first;
        loop {
            for event in batch {
                after = Some(event.cursor.clone());
                let message = pb::WatchEventsResponse {
                    cursor: event.cursor,
                    event_json: event.body,
                };
                if sender.send(Ok(message)).await.is_err() {
                    return;
                }
            }
            tokio::select! {
                () = sender.closed() => return,
                () = tokio::time::sleep(POLL) => {}
            }
            batch = match tabula
                .events
                .events_after(&tenant, after.as_deref(), BATCH)
                .await
            {
                Ok(events) => events,
                Err(error) => {
                    let _ = sender.send(Err(ServiceError::from(error).into())).await;
                    return;
                }
            };
        }
    });
    Ok(receiver)
}
