//! `VerifyLog`: re-execute an exported log (see [`super::verify`]) and check its signatures and
//! hash chain against this deployment's published keys (see [`super::provenance`]). A log with a
//! field over a limit of the live API is refused (INVALID_ARGUMENT, naming the field and the
//! limit) rather than reported on.

use super::error::{ServiceError, ServiceResult};
use super::verify::Unverifiable;
use crate::proto::v1 as pb;
use crate::signing::PublicKey;

pub(super) fn verify_log(
    request: pb::VerifyLogRequest,
    keys: &[PublicKey],
) -> ServiceResult<pb::VerifyLogResponse> {
    let log = request
        .log
        .ok_or_else(|| ServiceError::InvalidArgument("VerifyLogRequest.log is required".into()))?;
    let report = super::verify::verify_checked(&log).map_err(|error| match error {
        Unverifiable::Field(field) => {
            ServiceError::InvalidArgument(format!("VerifyLogRequest.log.{field}"))
        }
        // Not a verdict: a server that plays the log's rules version can give one.
        Unverifiable::RulesVersion(why) => ServiceError::FailedPrecondition(why),
    })?;
    Ok(super::verify::with_provenance(report, &log, keys))
}
