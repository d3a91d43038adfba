//! `ObserveGames`: several Observe streams on one call, each message tagged with its
//! subscription. A browser holds at most six HTTP/1.1 connections to a server, and each Observe
//! holds one for as long as it runs, so a page per seat hung at the seventh (issue #31); a page,
//! or one worker for all of a browser's pages, follows every game it shows on one connection.
//!
//! Each subscription is exactly an Observe call ([`observe::observe`]) with its own credentials:
//! the same checks, redaction, delay and tenant quota. One that fails, or whose game ends, ends
//! alone (`ended`, with its `error`); the call ends when every one has.

use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use tonic::metadata::{MetadataMap, MetadataValue};
use tracing::Instrument;

use super::error::{ServiceError, ServiceResult};
use super::observe;
use super::tabula::Tabula;
use crate::proto::v1 as pb;

/// Subscriptions one call may hold: each holds what an Observe holds.
pub const MAX_SUBSCRIPTIONS: usize = 16;

/// The longest credential a subscription may carry (seat tokens and tenant keys are far shorter).
const MAX_TOKEN_LEN: usize = 256;

/// Messages buffered for the call before its subscriptions wait for the client.
const STREAM_BUFFER: usize = 32;

type Sender = mpsc::Sender<Result<pb::ObserveGamesResponse, Status>>;

/// One subscription's messages tagged with its index, then `(index, None)` when it ends.
type Tagged =
    futures::stream::BoxStream<'static, (u32, Option<Result<pb::ObserveResponse, Status>>)>;

pub(super) async fn observe_games(
    tabula: Arc<Tabula>,
    metadata: &MetadataMap,
    request: pb::ObserveGamesRequest,
) -> ServiceResult<mpsc::Receiver<Result<pb::ObserveGamesResponse, Status>>> {
    let count = request.subscriptions.len();
    if count == 0 || count > MAX_SUBSCRIPTIONS {
        return Err(ServiceError::InvalidArgument(format!(
            "ObserveGamesRequest.subscriptions: {count} given; follow 1 to {MAX_SUBSCRIPTIONS} \
             streams per call (open another call for more)"
        )));
    }
    // Every credential is checked for form before any stream opens: a malformed request opens
    // nothing.
    let mut credentials = Vec::with_capacity(count);
    for (index, subscription) in request.subscriptions.iter().enumerate() {
        credentials.push(credentials_of(metadata, &subscription.token, index)?);
    }
    let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
    let mut streams = Vec::with_capacity(count);
    for ((index, subscription), metadata) in request
        .subscriptions
        .into_iter()
        .enumerate()
        .zip(credentials)
    {
        let index = index as u32;
        let observe_request = subscription.observe.unwrap_or_default();
        match observe::observe(tabula.clone(), &metadata, observe_request).await {
            Ok(updates) => streams.push(
                ReceiverStream::new(updates)
                    .map(move |update| (index, Some(update)))
                    // Its end, told as a message of its own.
                    .chain(futures::stream::once(async move { (index, None) }))
                    .boxed(),
            ),
            // This one fails alone, as its Observe call would have.
            Err(error) => {
                let status = Status::from(error);
                let _ = sender.try_send(Ok(ended(index, Some(&status))));
            }
        }
    }
    tokio::spawn(forward(streams, sender).instrument(tracing::Span::current()));
    Ok(receiver)
}

/// Sends every subscription's messages as they come, until all have ended or the client left.
async fn forward(streams: Vec<Tagged>, sender: Sender) {
    let mut merged = futures::stream::select_all(streams);
    loop {
        let next = tokio::select! {
            next = merged.next() => next,
            // The client left: dropping the streams ends every subscription's follower.
            () = sender.closed() => return,
        };
        let message = match next {
            None => return,
            Some((index, Some(Ok(update)))) => pb::ObserveGamesResponse {
                subscription: index,
                update: Some(update),
                ended: false,
                error: None,
            },
            Some((index, Some(Err(status)))) => ended(index, Some(&status)),
            Some((index, None)) => ended(index, None),
        };
        if sender.send(Ok(message)).await.is_err() {
            return;
        }
    }
}

/// The message that says subscription `index` ended, with what ended it.
fn ended(index: u32, status: Option<&Status>) -> pb::ObserveGamesResponse {
    pb::ObserveGamesResponse {
        subscription: index,
        update: None,
        ended: true,
        error: status.map(|status| pb::SubscriptionError {
            code: status.code() as i32,
            message: status.message().to_owned(),
        }),
    }
}

/// The call's metadata with subscription `index`'s credential as its `authorization` (its own
/// when it carries none).
fn credentials_of(metadata: &MetadataMap, token: &str, index: usize) -> ServiceResult<MetadataMap> {
    let mut metadata = metadata.clone();
    if token.is_empty() {
        return Ok(metadata);
    }
    let refuse = |why: &str| {
        ServiceError::InvalidArgument(format!(
            "ObserveGamesRequest.subscriptions[{index}].token {why}"
        ))
    };
    if token.len() > MAX_TOKEN_LEN {
        return Err(refuse(&format!("is longer than {MAX_TOKEN_LEN} bytes")));
    }
    let value = MetadataValue::try_from(format!("Bearer {token}"))
        .map_err(|_| refuse("is not printable ASCII"))?;
    metadata.insert("authorization", value);
    Ok(metadata)
}
