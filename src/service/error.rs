//! The service's errors and the gRPC status each maps to: the code tells a client what to do,
//! the message tells its developer why.

use tonic::{Code, Status};

use crate::games::ActionError;
use crate::hosting::HostError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("game {0:?} not found")]
    NotFound(String),
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    OutOfRange(String),
    #[error(transparent)]
    Action(#[from] ActionError),
    #[error(
        "version conflict: the action was sent for version {expected} but the game is at version {current}; \
         fetch the current view and decide again"
    )]
    VersionConflict { expected: u64, current: u64 },
    #[error("too much contention on this game; retry the action")]
    Contention,
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    PermissionDenied(String),
    #[error("{0}")]
    FailedPrecondition(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<HostError> for ServiceError {
    fn from(error: HostError) -> Self {
        match error {
            HostError::NoGame | HostError::Config(_) => {
                ServiceError::InvalidArgument(error.to_string())
            }
            HostError::UnknownKind(_) | HostError::Restore { .. } => {
                ServiceError::Internal(error.to_string())
            }
        }
    }
}

impl ServiceError {
    pub fn code(&self) -> Code {
        match self {
            ServiceError::NotFound(_) => Code::NotFound,
            ServiceError::InvalidArgument(_) => Code::InvalidArgument,
            ServiceError::OutOfRange(_) => Code::OutOfRange,
            ServiceError::Action(ActionError::Malformed(_)) => Code::InvalidArgument,
            ServiceError::Action(_) => Code::FailedPrecondition,
            ServiceError::VersionConflict { .. } | ServiceError::Contention => Code::Aborted,
            ServiceError::Unauthenticated(_) => Code::Unauthenticated,
            ServiceError::PermissionDenied(_) => Code::PermissionDenied,
            ServiceError::FailedPrecondition(_) => Code::FailedPrecondition,
            ServiceError::Store(StoreError::Unavailable(_)) => Code::Unavailable,
            ServiceError::Store(StoreError::AlreadyExists(_)) => Code::AlreadyExists,
            ServiceError::Store(StoreError::Corrupt(_)) => Code::DataLoss,
            ServiceError::Internal(_) => Code::Internal,
        }
    }

    /// A short label for traces and metrics.
    pub fn outcome(&self) -> &'static str {
        match self.code() {
            Code::NotFound => "not_found",
            Code::InvalidArgument => "invalid_argument",
            Code::FailedPrecondition => "failed_precondition",
            Code::Aborted => "aborted",
            Code::Unauthenticated => "unauthenticated",
            Code::PermissionDenied => "permission_denied",
            Code::Unavailable => "unavailable",
            _ => "error",
        }
    }
}

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Self {
        let mut status = Status::new(error.code(), error.to_string());
        if let ServiceError::VersionConflict { current, .. } = &error
            && let Ok(value) = current.to_string().parse()
        {
            // Machine-readable too, so a client can resync without parsing the message.
            status
                .metadata_mut()
                .insert("tabula-current-version", value);
        }
        status
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;
