//! The service's errors and the gRPC status each maps to: the code tells a client what to do,
//! the message tells its developer why.

use tonic::{Code, Status};

use crate::games::ActionError;
use crate::hosting::HostError;
use crate::store::StoreError;

/// Why an RPC failed. Each case maps to one gRPC code ([`ServiceError::code`]); its message is for
/// the client's developer and never carries more than `MAX_ECHO` bytes of a value the client sent.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No game has this id (`NOT_FOUND`).
    #[error("game {} not found", quote(.0))]
    NotFound(String),
    /// The request is malformed (`INVALID_ARGUMENT`).
    #[error("{0}")]
    InvalidArgument(String),
    /// A version the game has not reached (`OUT_OF_RANGE`).
    #[error("{0}")]
    OutOfRange(String),
    /// The engine refused the action: malformed (`INVALID_ARGUMENT`) or against the rules
    /// (`FAILED_PRECONDITION`).
    #[error(transparent)]
    Action(#[from] ActionError),
    /// `expected_version` is not the game's version (`ABORTED`, with `tabula-current-version`).
    #[error(
        "version conflict: the action was sent for version {expected} but the game is at version {current}; \
         fetch the current view and decide again"
    )]
    VersionConflict {
        /// The version the client sent.
        expected: u64,
        /// The game's version.
        current: u64,
    },
    /// Other replicas kept winning the append race (`ABORTED`; retrying is safe).
    #[error("too much contention on this game; retry the action")]
    Contention,
    /// No or malformed credentials (`UNAUTHENTICATED`).
    #[error("{0}")]
    Unauthenticated(String),
    /// Credentials that grant no seat here, or a forbidden option (`PERMISSION_DENIED`).
    #[error("{0}")]
    PermissionDenied(String),
    /// The game cannot be served as asked, e.g. it was created under other rules
    /// (`FAILED_PRECONDITION`).
    #[error("{0}")]
    FailedPrecondition(String),
    /// The store failed (`UNAVAILABLE`, `ALREADY_EXISTS` or `DATA_LOSS`).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// This replica is running as much of this kind of work as it takes at once
    /// (`RESOURCE_EXHAUSTED`; retrying later, or on another replica, is safe).
    #[error("{0}")]
    Busy(String),
    /// Something other than a game does not exist, e.g. a tenant (`NOT_FOUND`).
    #[error("{0}")]
    Missing(String),
    /// What the call would create exists already, e.g. a tenant id (`ALREADY_EXISTS`).
    #[error("{0}")]
    Taken(String),
    /// A limit of the deployment or of a tenant is reached (`RESOURCE_EXHAUSTED`).
    #[error("{0}")]
    Exhausted(String),
    /// A tenant's quota is used up (`RESOURCE_EXHAUSTED`, with `tabula-quota` and, when waiting
    /// helps, `tabula-retry-after-ms`; see `quotas.rs`).
    #[error("{message}")]
    QuotaExceeded {
        /// The quota's name, as `TenantLimits` names it.
        quota: &'static str,
        /// For the client's developer: the quota, its limit and what to do.
        message: String,
        /// After how long a retry can succeed; `None` when only finishing games helps.
        retry_after_ms: Option<u64>,
    },
    /// A bug or corrupt data on our side (`INTERNAL`).
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<crate::archive::ArchiveError> for ServiceError {
    fn from(error: crate::archive::ArchiveError) -> Self {
        use crate::archive::ArchiveError;
        match error {
            // The archive is part of the store for a game that left Redis: the same codes. The
            // cause names the operator's archive (its URL, a file path): it goes to the log, and
            // the caller learns only that a retry may help.
            ArchiveError::Unavailable(cause) => {
                tracing::warn!(%cause, "the archive did not answer");
                ServiceError::Store(StoreError::Unavailable(
                    "the archive of finished games did not answer; retry later".into(),
                ))
            }
            ArchiveError::Corrupt { .. } => {
                ServiceError::Store(StoreError::Corrupt(error.to_string()))
            }
            // As a stored game of a later format: a replica of the later release serves it.
            ArchiveError::NewerFormat { .. } => {
                ServiceError::Store(StoreError::NewerFormat(error.to_string()))
            }
            ArchiveError::BadUrl(_) => ServiceError::Internal(error.to_string()),
        }
    }
}

impl From<HostError> for ServiceError {
    fn from(error: HostError) -> Self {
        match error {
            HostError::NoGame | HostError::Config(_) | HostError::NotHosted => {
                ServiceError::InvalidArgument(error.to_string())
            }
            // A stored game of a rules version this build does not play: a replica of a release
            // that plays it can serve the game (docs/compatibility.md).
            HostError::RulesVersion { .. } => ServiceError::FailedPrecondition(error.to_string()),
            HostError::UnknownKind(_) | HostError::Restore { .. } => {
                ServiceError::Internal(error.to_string())
            }
        }
    }
}

impl ServiceError {
    /// The gRPC code: what the client should do about it.
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
            ServiceError::Store(StoreError::NewerFormat(_)) => Code::FailedPrecondition,
            ServiceError::Busy(_)
            | ServiceError::Exhausted(_)
            | ServiceError::QuotaExceeded { .. } => Code::ResourceExhausted,
            ServiceError::Missing(_) => Code::NotFound,
            ServiceError::Taken(_) => Code::AlreadyExists,
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
            Code::ResourceExhausted => "resource_exhausted",
            _ => "error",
        }
    }
}

/// The most of one client-supplied value that an error message or a log line repeats.
pub const MAX_ECHO: usize = 64;
/// The longest status message the service sends: gRPC clients drop trailers over their metadata
/// limit (8–16 KiB by default) and would see RESOURCE_EXHAUSTED instead of the real error.
pub const MAX_STATUS_MESSAGE: usize = 1024;

/// At most the first [`MAX_ECHO`] bytes of `value`, cut on a character boundary.
pub fn bounded(value: &str) -> &str {
    truncate(value, MAX_ECHO)
}

/// `value` quoted for an error message: cut to [`MAX_ECHO`] bytes, with its full length noted when
/// it was cut, so a client's input is never echoed unbounded.
pub fn quote(value: &str) -> String {
    let shown = bounded(value);
    if shown.len() == value.len() {
        format!("{value:?}")
    } else {
        format!("{shown:?}… ({} bytes)", value.len())
    }
}

fn truncate(value: &str, max: usize) -> &str {
    if value.len() <= max {
        return value;
    }
    let mut end = max;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    &value[..end]
}

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Self {
        let message = error.to_string();
        let message = match truncate(&message, MAX_STATUS_MESSAGE) {
            cut if cut.len() < message.len() => format!("{cut}…"),
            _ => message,
        };
        let mut status = Status::new(error.code(), message);
        if let ServiceError::VersionConflict { current, .. } = &error
            && let Ok(value) = current.to_string().parse()
        {
            // Machine-readable too, so a client can resync without parsing the message.
            status
                .metadata_mut()
                .insert("tabula-current-version", value);
        }
        if let ServiceError::QuotaExceeded {
            quota,
            retry_after_ms,
            ..
        } = &error
        {
            let metadata = status.metadata_mut();
            if let Ok(value) = quota.parse() {
                metadata.insert("tabula-quota", value);
            }
            if let Some(value) = retry_after_ms.and_then(|ms| ms.to_string().parse().ok()) {
                metadata.insert("tabula-retry-after-ms", value);
            }
        }
        status
    }
}

/// The result of a service operation.
pub type ServiceResult<T> = Result<T, ServiceError>;
