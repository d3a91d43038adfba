//! The edge of a replica: tower layers in front of the game service that turn away what the
//! service should never see (requests that are no gRPC call, callers over their limits) and give
//! requests that could not even be decoded the code the README promises.
//!
//! gRPC and gRPC-Web calls are `POST` requests. [`MethodGateLayer`] answers anything else (a CORS
//! preflight `OPTIONS` from an origin `--cors-origin` does not allow, a `GET` from a curious
//! browser) with HTTP 405 before gRPC-Web translation, telemetry or the limits see it: over
//! HTTP/2 such a request would otherwise reach the service as a call without a message, be
//! counted as a failed RPC and answered `INVALID_ARGUMENT`.
//!
//! A call whose request metadata is over [`EdgeLimits::max_header_bytes`] (a 64 KiB bearer
//! token, say) is answered `RESOURCE_EXHAUSTED` naming the limit, before anything else looks at
//! it. The HTTP/2 layer is configured to decode header blocks far larger than that (see
//! [`super::limits::HEADER_BLOCK_HARD_LIMIT`]) precisely so that such a call reaches this check:
//! left to itself, h2 answers an oversized block with a bare HTTP 431 or, past four times its
//! limit, by closing the whole connection — every other call multiplexed on it failing with
//! `UNAVAILABLE`.
//!
//! tonic answers a request body it cannot decode (bad protobuf, a bad frame, a missing or
//! oversized message) with `INTERNAL` or `OUT_OF_RANGE`. Those are the client's mistakes, and
//! alerting reads `INTERNAL` as a server bug, so this layer rewrites them to `INVALID_ARGUMENT`
//! (and an oversized message to `RESOURCE_EXHAUSTED`, as gRPC specifies) with a short message.

use std::collections::hash_map::RandomState;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Method, Request, Response, StatusCode};
use http_body::{Body as HttpBody, Frame, SizeHint};
use tonic::body::Body;
use tonic::transport::server::TcpConnectInfo;
use tonic::{Code, Status};

use crate::service::play::ActMeter;

use super::limits::{
    EdgeLimits, RateLimiter, StreamCap, StreamCounter, StreamPermit, address_key, token_key,
};

/// The gRPC path prefix of the game service.
const SERVICE_PATH: &str = "/tabula.v1.GameService/";
/// `AdminService.WatchEvents`, the other stream a caller can hold open.
const WATCH_EVENTS_PATH: &str = "/tabula.v1.AdminService/WatchEvents";

/// The longest client-derived text a status message repeats (grpc-message is metadata: clients
/// drop headers beyond 8–16 KiB, and would then see a different code).
const MAX_ECHO: usize = 200;

/// The RPCs the edge meters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Metered {
    CreateGame,
    Act,
    Observe,
    /// A `Play` stream: opened as an Observe stream is (its rates, the stream caps); each of its
    /// acts is then metered as an Act ([`crate::service::play::ActMeter`]).
    Play,
}

impl Metered {
    fn from_path(path: &str) -> Option<Metered> {
        // A tenant's event stream is a stream a caller holds open like an Observe: it counts in
        // the same per-connection and per-replica stream limits.
        if path == WATCH_EVENTS_PATH {
            return Some(Metered::Observe);
        }
        match path.strip_prefix(SERVICE_PATH)? {
            "CreateGame" => Some(Metered::CreateGame),
            "Act" => Some(Metered::Act),
            "Observe" => Some(Metered::Observe),
            "Play" => Some(Metered::Play),
            // Several streams on one call: one stream here, each of its subscriptions counted in
            // its tenant's quota, and at most `observe_games::MAX_SUBSCRIPTIONS` of them.
            "ObserveGames" => Some(Metered::Observe),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Metered::CreateGame => "CreateGame",
            Metered::Act => "Act",
            Metered::Observe => "Observe",
            Metered::Play => "Play",
        }
    }
}

/// State shared by every connection of a replica.
struct EdgeState {
    max_header_bytes: usize,
    create_game_per_address: RateLimiter<std::net::IpAddr>,
    act_per_address: RateLimiter<std::net::IpAddr>,
    act_per_token: RateLimiter<u64>,
    observe_per_address: RateLimiter<std::net::IpAddr>,
    observe_per_token: RateLimiter<u64>,
    observe_streams: StreamCounter,
    token_hasher: RandomState,
}

/// The layer: add it to the server in front of the game service.
#[derive(Clone)]
pub struct EdgeLayer {
    state: Arc<EdgeState>,
}

impl EdgeLayer {
    /// The edge layer enforcing `limits`.
    pub fn new(limits: &EdgeLimits) -> Self {
        EdgeLayer {
            state: Arc::new(EdgeState {
                max_header_bytes: limits.max_header_bytes,
                create_game_per_address: RateLimiter::new(limits.create_game_per_address),
                act_per_address: RateLimiter::new(limits.act_per_address),
                act_per_token: RateLimiter::new(limits.act_per_token),
                observe_per_address: RateLimiter::new(limits.observe_per_address),
                observe_per_token: RateLimiter::new(limits.observe_per_token),
                observe_streams: StreamCounter::new(
                    limits.observe_streams_per_connection,
                    limits.observe_streams_per_replica,
                ),
                token_hasher: RandomState::new(),
            }),
        }
    }
}

impl<S> tower_layer::Layer<S> for EdgeLayer {
    type Service = Edge<S>;

    fn layer(&self, inner: S) -> Edge<S> {
        Edge {
            inner,
            state: self.state.clone(),
        }
    }
}

/// The service the [`EdgeLayer`] wraps around the server's routes.
#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    state: Arc<EdgeState>,
}

/// The size of `request`'s metadata as HTTP/2 counts a header list (RFC 9113 §6.5.2: each
/// field's name and value plus 32 bytes, the pseudo-headers included), and its largest field.
fn header_list_size<B>(request: &Request<B>) -> (usize, Option<(&str, usize)>) {
    const FIELD_OVERHEAD: usize = 32;
    let uri = request.uri();
    let pseudo = [
        (":method", request.method().as_str().len()),
        (
            ":path",
            uri.path_and_query().map_or(0, |p| p.as_str().len()),
        ),
        (":scheme", uri.scheme_str().map_or(0, str::len)),
        (
            ":authority",
            uri.authority().map_or(0, |a| a.as_str().len()),
        ),
    ];
    let fields = request
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str(), value.len()));
    let mut total = 0;
    let mut largest: Option<(&str, usize)> = None;
    for (name, value_len) in pseudo.into_iter().chain(fields) {
        let size = name.len() + value_len + FIELD_OVERHEAD;
        total += size;
        if largest.is_none_or(|(_, most)| size > most) {
            largest = Some((name, size));
        }
    }
    (total, largest)
}

impl EdgeState {
    /// Refuses a request whose metadata is over the limit: its own call fails, with a status a
    /// client's developer can act on, while the connection and its other calls carry on. Header
    /// names are the client's too, so the largest one is quoted truncated.
    fn check_headers<B>(&self, request: &Request<B>) -> Result<(), Status> {
        let (total, largest) = header_list_size(request);
        if total <= self.max_header_bytes {
            return Ok(());
        }
        crate::metrics::edge_refusal("header_size");
        let largest = largest
            .map(|(name, size)| format!(" (the largest, {}, is {size} bytes)", truncated(name)))
            .unwrap_or_default();
        Err(Status::resource_exhausted(format!(
            "request metadata too large: {total} bytes, the limit is {} bytes{largest}; send \
             smaller headers (a bearer token of a few hundred bytes at most)",
            self.max_header_bytes
        )))
    }

    /// Admits a request or says which limit refuses it. An admitted Observe holds a stream permit
    /// for as long as its response body lives.
    fn admit<B>(
        &self,
        request: &Request<B>,
        rpc: Option<Metered>,
    ) -> Result<Option<StreamPermit>, Status> {
        self.check_headers(request)?;
        let Some(rpc) = rpc else {
            return Ok(None);
        };
        let (peer, token) = self.caller(request);
        let (per_address, per_token) = match rpc {
            Metered::CreateGame => (&self.create_game_per_address, None),
            Metered::Act => (&self.act_per_address, Some(&self.act_per_token)),
            Metered::Observe | Metered::Play => {
                (&self.observe_per_address, Some(&self.observe_per_token))
            }
        };
        self.check_rates(rpc, per_address, per_token, peer, token)?;
        if !matches!(rpc, Metered::Observe | Metered::Play) {
            return Ok(None);
        }
        self.observe_streams
            .try_open(peer)
            .map(Some)
            .map_err(|cap| match cap {
                StreamCap::Connection(cap) => {
                    crate::metrics::edge_refusal("observe_streams_per_connection");
                    Status::resource_exhausted(format!(
                        "too many Observe streams on this connection (at most {cap}); close one first"
                    ))
                }
                StreamCap::Replica(cap) => {
                    crate::metrics::edge_refusal("observe_streams_per_replica");
                    Status::resource_exhausted(format!(
                        "this replica serves its maximum of {cap} Observe streams; retry later or elsewhere"
                    ))
                }
            })
    }
}

impl EdgeState {
    /// The caller's peer address and the key of its bearer token, as the rates count them.
    fn caller<B>(&self, request: &Request<B>) -> (Option<std::net::SocketAddr>, Option<u64>) {
        let peer = request
            .extensions()
            .get::<TcpConnectInfo>()
            .and_then(TcpConnectInfo::remote_addr);
        let token = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .map(|value| token_key(&self.token_hasher, value.as_bytes()));
        (peer, token)
    }

    /// Takes one of `rpc`'s calls from the caller's rates, or says which refuses it.
    fn check_rates(
        &self,
        rpc: Metered,
        per_address: &RateLimiter<std::net::IpAddr>,
        per_token: Option<&RateLimiter<u64>>,
        peer: Option<std::net::SocketAddr>,
        token: Option<u64>,
    ) -> Result<(), Status> {
        if let Some(peer) = peer
            && !per_address.try_acquire(&address_key(peer.ip()))
        {
            crate::metrics::edge_refusal("rate_per_address");
            return Err(over_rate(rpc, "peer address"));
        }
        if let (Some(limiter), Some(token)) = (per_token, token)
            && !limiter.try_acquire(&token)
        {
            crate::metrics::edge_refusal("rate_per_token");
            return Err(over_rate(rpc, "seat token"));
        }
        Ok(())
    }

    /// What meters a Play stream's acts: the Act rates of the stream's caller, one act at a time.
    fn act_meter<B>(self: &Arc<Self>, request: &Request<B>) -> ActMeter {
        let (peer, token) = self.caller(request);
        let state = self.clone();
        ActMeter(Arc::new(move || {
            state.check_rates(
                Metered::Act,
                &state.act_per_address,
                Some(&state.act_per_token),
                peer,
                token,
            )
        }))
    }
}

fn over_rate(rpc: Metered, per: &str) -> Status {
    Status::resource_exhausted(format!(
        "{} rate limit for this {per} exceeded; slow down and retry",
        rpc.name()
    ))
}

impl<S> tower_service::Service<Request<Body>> for Edge<S>
where
    S: tower_service::Service<Request<Body>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let rpc = Metered::from_path(request.uri().path());
        let permit = match self.state.admit(&request, rpc) {
            Ok(permit) => permit,
            Err(status) => return Box::pin(async move { Ok(status.into_http()) }),
        };
        if rpc == Some(Metered::Play) {
            let meter = self.state.act_meter(&request);
            request.extensions_mut().insert(meter);
        }
        // The clone that was made ready is the one to call (the tower idiom).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let response = inner.call(request).await?;
            let response = correct_decode_status(response);
            Ok(match permit {
                Some(permit) => response.map(|body| Body::new(WithPermit { body, permit })),
                None => response,
            })
        })
    }
}

/// The layer answering every request that is not a `POST` (see the module documentation); add
/// it outside gRPC-Web translation, telemetry and [`EdgeLayer`].
#[derive(Clone, Copy, Debug, Default)]
pub struct MethodGateLayer;

impl<S> tower_layer::Layer<S> for MethodGateLayer {
    type Service = MethodGate<S>;

    fn layer(&self, inner: S) -> MethodGate<S> {
        MethodGate { inner }
    }
}

/// The service the [`MethodGateLayer`] wraps around the server.
#[derive(Clone, Debug)]
pub struct MethodGate<S> {
    inner: S,
}

/// What a request that is not a call is told (a person who opened the address in a browser, say).
const NOT_A_CALL: &str = "this is a gRPC and gRPC-Web endpoint: calls are POST requests\n";

impl<S, ReqBody> tower_service::Service<Request<ReqBody>> for MethodGate<S>
where
    S: tower_service::Service<Request<ReqBody>, Response = Response<Body>>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future =
        futures::future::Either<S::Future, std::future::Ready<Result<Response<Body>, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        if request.method() == Method::POST {
            return futures::future::Either::Left(self.inner.call(request));
        }
        let mut response = Response::new(Body::new(NOT_A_CALL.to_owned()));
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        let headers = response.headers_mut();
        headers.insert(http::header::ALLOW, http::HeaderValue::from_static("POST"));
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        futures::future::Either::Right(std::future::ready(Ok(response)))
    }
}

/// Rewrites tonic's status for a request body it could not decode. Such a status comes before any
/// message, in the response headers (a trailers-only response), so only headers are looked at.
fn correct_decode_status(response: Response<Body>) -> Response<Body> {
    let Some(status) = Status::from_header_map(response.headers()) else {
        return response;
    };
    let Some(corrected) = decode_failure(&status) else {
        return response;
    };
    corrected.into_http()
}

/// The status a request-decoding failure should have, or `None` for any other status. The
/// messages are tonic's own (tonic 0.14, `codec/decode.rs`, `server/grpc.rs` and tonic-prost);
/// the edge tests pin them, so a tonic upgrade that changes them fails loudly.
fn decode_failure(status: &Status) -> Option<Status> {
    let message = status.message();
    let undecodable = [
        "failed to decode Protobuf message",
        "protocol error: received message with",
        "Unexpected EOF decoding stream",
        "Missing request message",
        "Error decompressing",
    ];
    match status.code() {
        Code::Internal if undecodable.iter().any(|known| message.starts_with(known)) => {
            Some(Status::invalid_argument(format!(
                "the request body is not a valid message of this RPC: {}",
                truncated(message)
            )))
        }
        Code::OutOfRange if message.starts_with("Error, decoded message length too large") => Some(
            Status::resource_exhausted(format!("request too large: {}", truncated(message))),
        ),
        _ => None,
    }
}

/// At most [`MAX_ECHO`] bytes of `text`, cut at a character boundary.
fn truncated(text: &str) -> &str {
    if text.len() <= MAX_ECHO {
        return text;
    }
    let mut end = MAX_ECHO;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A response body that holds an Observe stream's permit until the stream ends.
struct WithPermit {
    body: Body,
    #[allow(dead_code)] // held for its Drop
    permit: StreamPermit,
}

impl HttpBody for WithPermit {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tonic_decode_failures_are_rewritten() {
        let decode = Status::internal("failed to decode Protobuf message: invalid wire type");
        assert_eq!(
            decode_failure(&decode).map(|s| s.code()),
            Some(Code::InvalidArgument)
        );
        let large = Status::out_of_range(
            "Error, decoded message length too large: found 5000000 bytes, the limit is: 4194304 bytes",
        );
        assert_eq!(
            decode_failure(&large).map(|s| s.code()),
            Some(Code::ResourceExhausted)
        );
        assert!(decode_failure(&Status::internal("internal error: replay failed")).is_none());
        assert!(decode_failure(&Status::out_of_range("version 9 not reached")).is_none());
        assert!(decode_failure(&Status::invalid_argument("bad")).is_none());
    }

    #[test]
    fn echoes_are_truncated_at_a_character_boundary() {
        let long = "é".repeat(1000);
        let cut = truncated(&long);
        assert!(cut.len() <= MAX_ECHO);
        assert!(long.starts_with(cut));
        assert_eq!(truncated("short"), "short");
    }

    fn limited(max_header_bytes: usize) -> EdgeState {
        let limits = EdgeLimits {
            max_header_bytes,
            ..EdgeLimits::unmetered()
        };
        Arc::into_inner(EdgeLayer::new(&limits).state).expect("the only reference")
    }

    fn with_header(name: &str, value: &str) -> Request<()> {
        Request::builder()
            .method("POST")
            .uri("http://tabula/tabula.v1.GameService/GetView")
            .header(name, value)
            .body(())
            .expect("request")
    }

    #[test]
    fn header_lists_are_measured_as_http2_does() {
        let request = with_header("authorization", &"x".repeat(100));
        let (total, largest) = header_list_size(&request);
        let pseudo = (":method".len() + 4 + 32)
            + (":path".len() + "/tabula.v1.GameService/GetView".len() + 32)
            + (":scheme".len() + 4 + 32)
            + (":authority".len() + "tabula".len() + 32);
        assert_eq!(total, pseudo + "authorization".len() + 100 + 32);
        assert_eq!(
            largest,
            Some(("authorization", "authorization".len() + 132))
        );
    }

    #[test]
    fn oversized_metadata_is_refused_naming_the_limit_and_the_largest_field() {
        let edge = limited(16 * 1024);
        assert!(
            edge.check_headers(&with_header("authorization", &"x".repeat(8 * 1024)))
                .is_ok()
        );
        let refused = edge
            .check_headers(&with_header("authorization", &"x".repeat(64 * 1024)))
            .expect_err("64 KiB");
        assert_eq!(refused.code(), Code::ResourceExhausted);
        let message = refused.message();
        assert!(
            message.contains("the limit is 16384 bytes")
                && message.contains("the largest, authorization, is 65581 bytes"),
            "{message}"
        );
        // A header name is the client's too: quoted truncated.
        let long_name = "n".repeat(20_000);
        let refused = edge
            .check_headers(&with_header(&long_name, "v"))
            .expect_err("a long name");
        assert!(refused.message().len() < 600, "{}", refused.message());
    }

    #[test]
    fn metered_rpcs_are_recognised_by_path() {
        assert_eq!(
            Metered::from_path("/tabula.v1.GameService/Act"),
            Some(Metered::Act)
        );
        assert_eq!(Metered::from_path("/tabula.v1.GameService/GetView"), None);
        assert_eq!(Metered::from_path("/grpc.health.v1.Health/Check"), None);
    }
}
