//! `ReplayLog`: the spectator's view at a version of a finished game's exported log, for a replay
//! viewer holding a log whose game this server does not store (see [`super::verify::state_at`]).
//! Stateless: nothing is read from or written to the store.

use super::error::{ServiceError, ServiceResult};
use super::verify::{self, ReplayError};
use crate::games::Viewer;
use crate::proto::v1 as pb;

pub(super) fn replay_log(request: pb::ReplayLogRequest) -> ServiceResult<pb::ReplayLogResponse> {
    let log = request
        .log
        .ok_or_else(|| ServiceError::InvalidArgument("ReplayLogRequest.log is required".into()))?;
    let last = log.entries.len() as u64;
    let version = request.version.unwrap_or(last);
    tracing::Span::current().record("version", version);
    let state = verify::state_at(&log, version).map_err(|error| match error {
        // The log is fine but cannot be replayed yet: its game has not ended.
        ReplayError::NoSeed => ServiceError::FailedPrecondition(error.to_string()),
        ReplayError::OutOfRange { .. } | ReplayError::Invalid(_) => {
            ServiceError::InvalidArgument(error.to_string())
        }
        ReplayError::Field(field) => {
            ServiceError::InvalidArgument(format!("ReplayLogRequest.log.{field}"))
        }
    })?;
    Ok(pb::ReplayLogResponse {
        version,
        // A spectator's view, as GetView gives a caller without a token: the log is public once
        // its game has ended, but a past version shows what the table showed then, no more.
        view: Some(state.view(Viewer::Spectator)),
        status: Some(state.status()),
        game: state.kind() as i32,
        players: log.players,
        last_version: last,
    })
}
