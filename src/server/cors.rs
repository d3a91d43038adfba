//! Cross-origin access for browser pages (CORS), so that a web client served from its own origin
//! can call a replica over gRPC-Web.
//!
//! A browser sends a gRPC-Web call (`content-type: application/grpc-web+proto`, `x-grpc-web`, an
//! `authorization` header) only after a preflight `OPTIONS` request has shown that the server
//! accepts the page's origin, that method and those headers; and it lets the page read the status
//! (`grpc-status`, `grpc-message`, …) only when the response exposes them. The operator lists the
//! origins with `--cors-origin` ([`CorsOrigin`]); with none, a replica sends no CORS headers at
//! all, as a plain gRPC server.
//!
//! The CORS mechanics (preflight answers, `Vary`, header lists) are tower-http's
//! [`tower_http::cors`]; this module decides which requests get them: only those whose `Origin` is
//! allowed. A request from any other origin passes through untouched, so it carries no CORS header
//! at all (a browser then blocks it), and its preflight `OPTIONS` meets
//! [`super::edge::MethodGateLayer`] like any request that is not a gRPC call.

use std::str::FromStr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::Either;
use http::header::{self, HeaderName, HeaderValue};
use http::{Method, Request, Response};

/// The request headers a gRPC-Web client sends, which a preflight must allow: the protocol's own
/// (`content-type`, `x-grpc-web`, `x-user-agent`, `grpc-timeout`), the seat token
/// (`authorization`) and the W3C trace context the replica continues (`traceparent`,
/// `tracestate`; see [`crate::telemetry::TraceContextLayer`]).
const ALLOWED_REQUEST_HEADERS: [&str; 7] = [
    "content-type",
    "x-grpc-web",
    "x-user-agent",
    "grpc-timeout",
    "authorization",
    "traceparent",
    "tracestate",
];

/// The response headers a page's script may read: a call's status, and the version an `ABORTED`
/// answer reports (see [`crate::service::ServiceError::VersionConflict`]). A gRPC-Web response carries
/// them in its headers when the call fails before any message (a trailers-only response).
pub const EXPOSED_RESPONSE_HEADERS: [&str; 4] = [
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "tabula-current-version",
];

/// How long a browser may reuse a preflight answer before asking again (Chromium caps it at two
/// hours; an hour keeps a narrowed `--cors-origin` list effective soon enough).
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(3600);

/// One origin allowed to call a replica from a browser: a `--cors-origin` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorsOrigin {
    /// `*`: any origin (for development: any page on the web can then call the replica, though
    /// only with the seat tokens it holds).
    Any,
    /// Exactly this origin, `scheme://host[:port]`, as browsers send it in `Origin` (lower case,
    /// no path).
    Exact(HeaderValue),
}

/// A `--cors-origin` value that names no origin.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CorsOriginError {
    /// Not of the form `scheme://host[:port]` (or `*`).
    #[error(
        "{0:?} is not an origin: write scheme://host[:port] with no path and no trailing slash \
         (e.g. https://play.example.com or http://localhost:5173), or * for any origin"
    )]
    NotAnOrigin(String),
}

impl FromStr for CorsOrigin {
    type Err = CorsOriginError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text == "*" {
            return Ok(CorsOrigin::Any);
        }
        let not_an_origin = || CorsOriginError::NotAnOrigin(text.to_owned());
        let (scheme, authority) = text.split_once("://").ok_or_else(not_an_origin)?;
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        // An origin has no path, query, fragment or user info: a browser never sends one, so a
        // configured value with any of them (a trailing slash, typically) would never match.
        let authority_ok = !authority.is_empty()
            && authority
                .chars()
                .all(|c| c.is_ascii_graphic() && !matches!(c, '/' | '?' | '#' | '@' | ','));
        if !scheme_ok || !authority_ok {
            return Err(not_an_origin());
        }
        // Scheme and host are case-insensitive, and browsers serialize them in lower case.
        HeaderValue::from_str(&text.to_ascii_lowercase())
            .map(CorsOrigin::Exact)
            .map_err(|_| not_an_origin())
    }
}

impl std::fmt::Display for CorsOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CorsOrigin::Any => f.write_str("*"),
            CorsOrigin::Exact(origin) => f.write_str(origin.to_str().unwrap_or("?")),
        }
    }
}

/// Which origins get CORS headers.
#[derive(Debug)]
struct AllowedOrigins {
    any: bool,
    exact: Vec<HeaderValue>,
}

impl AllowedOrigins {
    fn allows(&self, origin: Option<&HeaderValue>) -> bool {
        match origin {
            Some(origin) => self.any || self.exact.contains(origin),
            None => false,
        }
    }
}

/// The layer: outermost on the server, so that a preflight is answered before gRPC-Web
/// translation, telemetry or the edge's limits see it (a preflight is no RPC).
#[derive(Clone, Debug)]
pub struct CorsLayer {
    /// `None` when no origin is allowed: every request passes through untouched.
    allowed: Option<Arc<AllowedOrigins>>,
    /// Shared, not copied: the server clones its service stack for every request, and
    /// tower-http's policy holds several lists; only a request from an allowed origin needs it.
    policy: Arc<tower_http::cors::CorsLayer>,
}

impl CorsLayer {
    /// CORS for `origins`; with none, the layer changes nothing.
    pub fn new(origins: &[CorsOrigin]) -> Self {
        let any = origins.contains(&CorsOrigin::Any);
        let exact = origins
            .iter()
            .filter_map(|origin| match origin {
                CorsOrigin::Exact(origin) => Some(origin.clone()),
                CorsOrigin::Any => None,
            })
            .collect();
        let allow_origin = if any {
            tower_http::cors::AllowOrigin::any()
        } else {
            // Only allowed origins reach the policy (see `Cors::call`), so echoing the request's
            // origin answers exactly those.
            tower_http::cors::AllowOrigin::mirror_request()
        };
        let policy = tower_http::cors::CorsLayer::new()
            .allow_origin(allow_origin)
            .allow_methods([Method::POST])
            .allow_headers(ALLOWED_REQUEST_HEADERS.map(HeaderName::from_static))
            .expose_headers(EXPOSED_RESPONSE_HEADERS.map(HeaderName::from_static))
            .max_age(PREFLIGHT_MAX_AGE);
        CorsLayer {
            allowed: (!origins.is_empty()).then(|| Arc::new(AllowedOrigins { any, exact })),
            policy: Arc::new(policy),
        }
    }
}

impl<S> tower_layer::Layer<S> for CorsLayer {
    type Service = Cors<S>;

    fn layer(&self, inner: S) -> Cors<S> {
        Cors {
            allowed: self.allowed.clone(),
            policy: self.policy.clone(),
            inner,
        }
    }
}

/// The service the [`CorsLayer`] wraps around the server.
#[derive(Clone, Debug)]
pub struct Cors<S> {
    allowed: Option<Arc<AllowedOrigins>>,
    policy: Arc<tower_http::cors::CorsLayer>,
    inner: S,
}

impl<S, ReqBody, ResBody> tower_service::Service<Request<ReqBody>> for Cors<S>
where
    S: tower_service::Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    ResBody: Default,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = Either<tower_http::cors::ResponseFuture<S::Future>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Readies the inner service, whichever way the next request goes.
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let allowed = self
            .allowed
            .as_ref()
            .is_some_and(|allowed| allowed.allows(request.headers().get(header::ORIGIN)));
        if allowed {
            // tower-http's CORS around the inner service that was readied (a fresh clone
            // stays behind for the next request); its readiness is the inner service's.
            let fresh = self.inner.clone();
            let ready = std::mem::replace(&mut self.inner, fresh);
            let mut cors = tower_layer::Layer::layer(&*self.policy, ready);
            Either::Left(cors.call(request))
        } else {
            Either::Right(self.inner.call(request))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(origin: &str) -> CorsOrigin {
        CorsOrigin::Exact(HeaderValue::from_str(origin).expect("header value"))
    }

    #[test]
    fn origins_parse_as_browsers_send_them() {
        assert_eq!("*".parse(), Ok(CorsOrigin::Any));
        assert_eq!(
            "https://play.example.com".parse(),
            Ok(exact("https://play.example.com"))
        );
        assert_eq!(
            " HTTP://LocalHost:5173 ".parse(),
            Ok(exact("http://localhost:5173"))
        );
        assert_eq!("http://[::1]:8080".parse(), Ok(exact("http://[::1]:8080")));
        for wrong in [
            "https://play.example.com/",
            "https://play.example.com/app",
            "play.example.com",
            "https://",
            "https://user@play.example.com",
            "https://a.example,https://b.example",
            "://play.example.com",
            "1http://play.example.com",
            "",
        ] {
            assert!(
                matches!(
                    wrong.parse::<CorsOrigin>(),
                    Err(CorsOriginError::NotAnOrigin(_))
                ),
                "{wrong:?} is refused"
            );
        }
    }

    #[test]
    fn only_listed_origins_are_allowed() {
        let allowed = AllowedOrigins {
            any: false,
            exact: vec![HeaderValue::from_static("https://play.example.com")],
        };
        let origin = |text| HeaderValue::from_static(text);
        assert!(allowed.allows(Some(&origin("https://play.example.com"))));
        assert!(!allowed.allows(Some(&origin("https://evil.example.com"))));
        assert!(!allowed.allows(Some(&origin("http://play.example.com"))));
        assert!(
            !allowed.allows(None),
            "no Origin: not a browser's CORS request"
        );
        let any = AllowedOrigins {
            any: true,
            exact: Vec::new(),
        };
        assert!(any.allows(Some(&origin("null"))));
        assert!(!any.allows(None));
    }
}
