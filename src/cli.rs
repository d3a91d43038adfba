//! What the command-line client subcommands (`export`, `health`, `load`) share: naming a server
//! the way operators write it, connecting to it, and turning gRPC errors into one readable line.
//! The load generator lives in [`load`].

/// [`say`] with `format!`'s arguments, and `?` on the error: `say!("{x}")`.
macro_rules! say {
    () => { say!("") };
    ($($arg:tt)*) => { crate::cli::say(format_args!($($arg)*))? };
}

/// [`say_part`] with `format!`'s arguments, and `?` on the error.
macro_rules! say_part {
    ($($arg:tt)*) => { crate::cli::say_part(format_args!($($arg)*))? };
}

pub mod load;
pub mod play;
mod text;

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

/// Connects to the server named by `address` (with or without a scheme), giving up after
/// `timeout`. An `https://` server is verified against the PEM certificates in `ca_file`.
pub async fn connect(
    address: &str,
    ca_file: Option<&Path>,
    timeout: Duration,
) -> anyhow::Result<Channel> {
    let uri = crate::address::with_scheme(address);
    let mut endpoint = Endpoint::from_shared(uri.clone())
        .with_context(|| format!("{address:?} is not a server address (e.g. 127.0.0.1:50051)"))?
        .connect_timeout(timeout)
        .timeout(timeout);
    if uri.starts_with("https://") {
        let mut tls = ClientTlsConfig::new();
        if let Some(ca_file) = ca_file {
            let ca =
                std::fs::read(ca_file).with_context(|| format!("reading {}", ca_file.display()))?;
            tls = tls.ca_certificate(Certificate::from_pem(ca));
        }
        endpoint = endpoint
            .tls_config(tls)
            .map_err(|error| anyhow::anyhow!("TLS towards {uri}: {}", error_chain(&error)))?;
    }
    endpoint
        .connect_with_connector(crate::coalesce::Connector::default())
        .await
        .map_err(|error| anyhow::anyhow!("cannot connect to {uri}: {}", error_chain(&error)))
}

/// Writes `text` and a line break to standard output. Unlike `println!`, which panics when the
/// reader has gone (`tabula export … | head`, `tabula play | head`), it returns the error;
/// [`is_closed_pipe`] tells that one apart, and the command ends quietly, as `cat` does.
pub fn say(text: impl std::fmt::Display) -> std::io::Result<()> {
    say_part(format_args!("{text}\n"))
}

/// [`say`] without the line break (a prompt, a board or a report that ends its own lines).
pub fn say_part(text: impl std::fmt::Display) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    write!(out, "{text}")?;
    out.flush()
}

/// Whether `error` is a write to a pipe whose reader has gone.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The canonical name of a gRPC status code, as the gRPC specification spells it.
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A failed call as one line: the code's name and the server's message (or, for a failure below
/// gRPC, what the transport said).
pub fn describe_status(status: &tonic::Status) -> String {
    let mut text = format!("{}: {}", code_name(status.code()), status.message());
    if status.message().is_empty()
        && let Some(source) = std::error::Error::source(status)
    {
        text.push_str(&error_chain(source));
    }
    text
}

/// An error and its sources, joined with ": " (transport errors hide the useful part in sources).
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_reads_as_its_code_name_and_message() {
        let status = tonic::Status::not_found("no game abc");
        assert_eq!(describe_status(&status), "NOT_FOUND: no game abc");
        assert_eq!(code_name(tonic::Code::Unavailable), "UNAVAILABLE");
    }
}
