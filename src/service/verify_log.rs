//! `VerifyLog`: re-execute an exported log (see [`crate::verify`]).

use super::{ServiceError, ServiceResult};
use crate::proto::v1 as pb;

pub(super) fn verify_log(request: pb::VerifyLogRequest) -> ServiceResult<pb::VerifyLogResponse> {
    let log = request
        .log
        .ok_or_else(|| ServiceError::InvalidArgument("VerifyLogRequest.log is required".into()))?;
    Ok(crate::verify::verify(&log))
}
