//! `VerifyLog`: re-execute an exported log (see [`super::verify`]). A log with a field over a
//! limit of the live API is refused (INVALID_ARGUMENT, naming the field and the limit) rather
//! than reported on.

use super::error::{ServiceError, ServiceResult};
use crate::proto::v1 as pb;

pub(super) fn verify_log(request: pb::VerifyLogRequest) -> ServiceResult<pb::VerifyLogResponse> {
    let log = request
        .log
        .ok_or_else(|| ServiceError::InvalidArgument("VerifyLogRequest.log is required".into()))?;
    super::verify::verify_checked(&log)
        .map_err(|error| ServiceError::InvalidArgument(format!("VerifyLogRequest.log.{error}")))
}
