//! CORS for browser pages calling over gRPC-Web, through real HTTP/1.1 and HTTP/2 connections: a
//! preflight from an allowed origin is answered with what gRPC-Web needs, an origin not allowed
//! (or any origin, without `--cors-origin`) gets no CORS header at all, a real gRPC-Web call from
//! an allowed origin carries the headers and exposes the gRPC status to scripts, and a request
//! that is not a call (a preflight the replica does not answer) is neither an RPC in the metrics
//! nor a call the edge's limits count. tests/browser.rs shows the same in a real Chromium.

use crate::common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use prost::Message;
use tabula::proto::v1 as pb;
use tabula::server::ServeOptions;
use tabula::server::cors::CorsOrigin;
use tabula::service::{OperatorOptions, ServiceOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

/// The origin of the page in these tests.
const PAGE: &str = "http://page.example:8080";

/// The request headers Connect-Web and grpc-web send on a call.
const GRPC_WEB_REQUEST_HEADERS: &str =
    "content-type,x-grpc-web,x-user-agent,grpc-timeout,authorization";

/// A replica on a memory store allowing `origins`, stopped when dropped.
struct CorsReplica {
    address: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl CorsReplica {
    async fn start(origins: &[&str]) -> CorsReplica {
        CorsReplica::start_with(origins, test_options()).await
    }

    async fn start_with(origins: &[&str], options: ServiceOptions) -> CorsReplica {
        let cors_origins = origins
            .iter()
            .map(|origin| origin.parse::<CorsOrigin>().expect("an origin"))
            .collect();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let (stop, stopped) = oneshot::channel::<()>();
        let store = Backend::memory().store().await;
        tokio::spawn(tabula::server::serve_with(
            listener,
            store,
            options,
            ServeOptions {
                cors_origins,
                ..ServeOptions::default()
            },
            async {
                let _ = stopped.await;
            },
        ));
        CorsReplica {
            address,
            _stop: stop,
        }
    }
}

/// An HTTP/1.1 response: status code, headers (names in lower case; repeated ones joined with
/// ", ") and the body, de-chunked.
struct Http1Response {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Http1Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// The comma-separated list in header `name`, in lower case.
    fn list(&self, name: &str) -> Vec<String> {
        self.header(name)
            .unwrap_or_default()
            .split(',')
            .map(|item| item.trim().to_ascii_lowercase())
            .filter(|item| !item.is_empty())
            .collect()
    }

    fn cors_headers(&self) -> Vec<&String> {
        self.headers
            .keys()
            .filter(|name| name.starts_with("access-control-"))
            .collect()
    }
}

/// Sends one HTTP/1.1 request (`head` lines without the final blank line) on a connection of its
/// own and reads the whole response, within 10 s.
async fn http1(address: SocketAddr, head: &str, body: &[u8]) -> Http1Response {
    let mut socket = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    let request = format!(
        "{head}\r\nHost: tabula\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.expect("write");
    socket.write_all(body).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut raw))
        .await
        .expect("the replica answers and closes")
        .expect("read");
    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let mut headers: HashMap<String, String> = HashMap::new();
    for line in lines {
        let (name, value) = line.split_once(':').expect("a header line");
        headers
            .entry(name.trim().to_ascii_lowercase())
            .and_modify(|joined| {
                joined.push_str(", ");
                joined.push_str(value.trim());
            })
            .or_insert_with(|| value.trim().to_owned());
    }
    let mut body = raw[split + 4..].to_vec();
    if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        body = dechunk(&body);
    }
    Http1Response {
        status,
        headers,
        body,
    }
}

/// The payload of a chunked HTTP/1.1 body.
fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = chunked
            .windows(2)
            .position(|window| window == b"\r\n")
            .expect("a chunk size line");
        let size_text = String::from_utf8_lossy(&chunked[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .expect("a hexadecimal chunk size");
        if size == 0 {
            return body;
        }
        let start = line_end + 2;
        body.extend_from_slice(&chunked[start..start + size]);
        chunked = &chunked[start + size + 2..];
    }
}

/// A preflight for `rpc` from `origin`, asking for what a gRPC-Web call sends.
async fn preflight(address: SocketAddr, rpc: &str, origin: &str) -> Http1Response {
    let head = format!(
        "OPTIONS /tabula.v1.GameService/{rpc} HTTP/1.1\r\nOrigin: {origin}\r\n\
         Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: {GRPC_WEB_REQUEST_HEADERS}"
    );
    http1(address, &head, &[]).await
}

/// A gRPC-Web call of `rpc` with `message`, from `origin`.
async fn grpc_web_call(
    address: SocketAddr,
    rpc: &str,
    message: &impl Message,
    origin: &str,
) -> Http1Response {
    grpc_web_post(
        address,
        &format!("/tabula.v1.GameService/{rpc}"),
        message,
        origin,
        "",
    )
    .await
}

/// A gRPC-Web call to `path` with `message`, from `origin`, with `extra` header lines (each
/// ending in `\r\n`).
async fn grpc_web_post(
    address: SocketAddr,
    path: &str,
    message: &impl Message,
    origin: &str,
    extra: &str,
) -> Http1Response {
    let payload = message.encode_to_vec();
    let mut body = vec![0];
    body.extend_from_slice(&u32::try_from(payload.len()).expect("small").to_be_bytes());
    body.extend_from_slice(&payload);
    let head = format!(
        "POST {path} HTTP/1.1\r\n{extra}Origin: {origin}\r\n\
         Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\nX-User-Agent: tabula-tests"
    );
    http1(address, &head, &body).await
}

/// The frames of a gRPC-Web response body: (flag, payload) pairs; flag 0x80 marks the trailers.
fn grpc_web_frames(mut body: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while body.len() >= 5 {
        let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        frames.push((body[0], body[5..5 + length].to_vec()));
        body = &body[5 + length..];
    }
    assert!(body.is_empty(), "whole frames only");
    frames
}

fn create_medici() -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        config: Some(medici_config()),
        seed: None,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preflight_from_an_allowed_origin_is_answered() {
    let replica = CorsReplica::start(&["https://other.example", PAGE]).await;
    for rpc in ["CreateGame", "Act", "Observe", "GetView"] {
        let answer = preflight(replica.address, rpc, PAGE).await;
        assert_eq!(answer.status, 200, "{rpc}: {:?}", answer.headers);
        assert_eq!(answer.header("access-control-allow-origin"), Some(PAGE));
        assert!(
            answer
                .list("access-control-allow-methods")
                .contains(&"post".to_owned())
        );
        let allowed = answer.list("access-control-allow-headers");
        for header in GRPC_WEB_REQUEST_HEADERS.split(',') {
            assert!(
                allowed.contains(&header.to_owned()),
                "{header}: {allowed:?}"
            );
        }
        assert!(
            answer
                .header("access-control-max-age")
                .and_then(|age| age.parse::<u64>().ok())
                .is_some_and(|age| age > 0),
            "the answer may be cached: {:?}",
            answer.headers
        );
        assert!(
            answer.list("vary").contains(&"origin".to_owned()),
            "caches keep answers per origin: {:?}",
            answer.headers
        );
        assert_eq!(
            answer.header("access-control-allow-credentials"),
            None,
            "tokens travel in a header, never in cookies"
        );
    }
}

/// The operator's API is reachable from an allowed origin over gRPC-Web like the game service:
/// preflights answered, calls with the operator token served, refusals exposed to the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_api_is_served_over_grpc_web_like_the_game_service() {
    const OPERATOR: &str = "op_cors_0123456789abcdef";
    let options = ServiceOptions {
        operator: Some(OperatorOptions {
            token: OPERATOR.parse().expect("a token"),
            required_for_create: false,
        }),
        ..test_options()
    };
    let replica = CorsReplica::start_with(&[PAGE], options).await;
    let path = "/tabula.v1.AdminService/ListGames";
    let head = format!(
        "OPTIONS {path} HTTP/1.1\r\nOrigin: {PAGE}\r\n\
         Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: {GRPC_WEB_REQUEST_HEADERS}"
    );
    let preflight = http1(replica.address, &head, &[]).await;
    assert_eq!(preflight.status, 200, "{:?}", preflight.headers);
    assert_eq!(preflight.header("access-control-allow-origin"), Some(PAGE));
    assert!(
        preflight
            .list("access-control-allow-headers")
            .contains(&"authorization".to_owned())
    );

    let created = grpc_web_call(replica.address, "CreateGame", &create_medici(), PAGE).await;
    let game = pb::CreateGameResponse::decode(grpc_web_frames(&created.body)[0].1.as_slice())
        .expect("a game");
    let request = pb::ListGamesRequest::default();
    let authorization = format!("Authorization: Bearer {OPERATOR}\r\n");
    let listed = grpc_web_post(replica.address, path, &request, PAGE, &authorization).await;
    assert_eq!(listed.status, 200);
    assert_eq!(listed.header("access-control-allow-origin"), Some(PAGE));
    let frames = grpc_web_frames(&listed.body);
    let (flag, message) = frames.first().expect("a message frame");
    assert_eq!(*flag, 0);
    let page = pb::ListGamesResponse::decode(message.as_slice()).expect("a ListGamesResponse");
    assert_eq!(page.games.len(), 1);
    assert_eq!(page.games[0].game_id, game.game_id);

    let refused = grpc_web_post(replica.address, path, &request, PAGE, "").await;
    assert_eq!(refused.header("grpc-status"), Some("16"), "UNAUTHENTICATED");
    assert_eq!(refused.header("access-control-allow-origin"), Some(PAGE));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_not_allowed_gets_no_cors_headers() {
    let allowing = CorsReplica::start(&[PAGE]).await;
    let without_cors = CorsReplica::start(&[]).await;
    for (replica, origin) in [
        (&allowing, "http://evil.example"),
        // The same host on another port or scheme is another origin.
        (&allowing, "http://page.example:8081"),
        (&allowing, "https://page.example:8080"),
        (&without_cors, PAGE),
    ] {
        let answer = preflight(replica.address, "Act", origin).await;
        assert_eq!(answer.cors_headers(), Vec::<&String>::new(), "{origin}");
        assert_eq!(
            answer.status, 405,
            "a preflight the replica does not answer is no call: {origin}"
        );
        assert_eq!(answer.header("grpc-status"), None, "{origin}");
        assert_eq!(answer.header("allow"), Some("POST"));

        // A call itself (which a browser would not send after that preflight) is served, without
        // CORS headers, so the browser would not hand the answer to the page.
        let call = grpc_web_call(replica.address, "CreateGame", &create_medici(), origin).await;
        assert_eq!(call.status, 200);
        assert_eq!(call.cors_headers(), Vec::<&String>::new(), "{origin}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_calls_from_an_allowed_origin_carry_the_cors_headers() {
    let replica = CorsReplica::start(&[PAGE]).await;
    let exposed_to_scripts = [
        "grpc-status",
        "grpc-message",
        "grpc-status-details-bin",
        "tabula-current-version",
    ];

    let created = grpc_web_call(replica.address, "CreateGame", &create_medici(), PAGE).await;
    assert_eq!(created.status, 200);
    assert_eq!(created.header("access-control-allow-origin"), Some(PAGE));
    let exposed = created.list("access-control-expose-headers");
    for header in exposed_to_scripts {
        assert!(
            exposed.contains(&header.to_owned()),
            "{header}: {exposed:?}"
        );
    }
    let frames = grpc_web_frames(&created.body);
    let (flag, message) = frames.first().expect("a message frame");
    assert_eq!(*flag, 0);
    let game = pb::CreateGameResponse::decode(message.as_slice()).expect("a CreateGameResponse");
    assert_eq!(game.seats.len(), 2, "Medici vs Strozzi has two seats");
    let (flag, trailers) = frames.last().expect("a trailers frame");
    assert_eq!(*flag, 0x80);
    assert!(
        String::from_utf8_lossy(trailers).contains("grpc-status:0"),
        "{}",
        String::from_utf8_lossy(trailers)
    );

    // A failure before any message comes in the headers (trailers-only): exposed too.
    let missing = pb::GetViewRequest {
        narrate: false,
        game_id: "no-such-game".into(),
        version: None,
        min_version: None,
        omit_view: false,
    };
    let failed = grpc_web_call(replica.address, "GetView", &missing, PAGE).await;
    assert_eq!(failed.header("access-control-allow-origin"), Some(PAGE));
    assert_eq!(failed.header("grpc-status"), Some("5"), "NOT_FOUND");
    assert!(
        failed
            .list("access-control-expose-headers")
            .contains(&"grpc-message".to_owned())
    );

    // `*` (development) allows any origin.
    let anyone = CorsReplica::start(&["*"]).await;
    let answer = preflight(anyone.address, "CreateGame", "http://localhost:5173").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
    let call = grpc_web_call(anyone.address, "CreateGame", &create_medici(), "null").await;
    assert_eq!(call.status, 200);
    assert_eq!(call.header("access-control-allow-origin"), Some("*"));
}

/// `tabula serve` killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

/// An `OPTIONS` request over HTTP/2 (as a browser sends a preflight to a TLS replica), answered
/// with its HTTP status and whether it carried a gRPC status.
async fn options_over_http2(channel: &tonic::transport::Channel, rpc: &str) -> (u16, bool) {
    use tower_service::Service;
    let mut channel = channel.clone();
    let request = http::Request::builder()
        .method("OPTIONS")
        .uri(format!("http://tabula/tabula.v1.GameService/{rpc}"))
        .header("origin", "http://evil.example")
        .header("access-control-request-method", "POST")
        .body(tonic::body::Body::empty())
        .expect("request");
    std::future::poll_fn(|cx| channel.poll_ready(cx))
        .await
        .expect("channel ready");
    let response = channel.call(request).await.expect("an HTTP response");
    (
        response.status().as_u16(),
        response.headers().contains_key("grpc-status"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_that_are_not_calls_are_neither_metered_nor_counted_as_rpcs() {
    let port = free_port();
    let metrics_port = free_port();
    let metrics_address = format!("127.0.0.1:{metrics_port}");
    // One CreateGame per address, and no refill to speak of: a request counted against it would
    // leave no room for the real call below.
    let _replica = Served(
        Command::new(env!("CARGO_BIN_EXE_tabula"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--cors-origin", PAGE, "--metrics-listen", &metrics_address])
            .args(["--create-game-rate", "0.001:1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tabula serve"),
    );
    let url = format!("http://127.0.0.1:{port}");
    let mut channel = None;
    for _ in 0..250 {
        if let Ok(connected) = tonic::transport::Endpoint::from_shared(url.clone())
            .expect("url")
            .connect()
            .await
        {
            channel = Some(connected);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let channel = channel.expect("tabula serve accepts connections");
    let address: SocketAddr = format!("127.0.0.1:{port}").parse().expect("address");

    for _ in 0..3 {
        assert_eq!(
            options_over_http2(&channel, "CreateGame").await,
            (405, false),
            "an OPTIONS over HTTP/2 is no call: no gRPC status, no INVALID_ARGUMENT"
        );
        let refused = preflight(address, "CreateGame", "http://evil.example").await;
        assert_eq!(refused.status, 405);
        let answered = preflight(address, "CreateGame", PAGE).await;
        assert_eq!(answered.status, 200);
        let get = http1(
            address,
            "GET /tabula.v1.GameService/CreateGame HTTP/1.1",
            &[],
        )
        .await;
        assert_eq!(get.status, 405);
    }
    let calls = "rpc_server_call_duration_seconds_count";
    let before = scrape_metrics(metrics_port);
    assert!(
        !before.lines().any(|line| line.starts_with(calls)),
        "no RPC recorded: {before}"
    );

    let mut client = Client::new(channel);
    client
        .create_game(create_medici())
        .await
        .expect("the CreateGame rate limit is untouched by requests that are not calls");
    let after = scrape_metrics(metrics_port);
    let create_ok = ["rpc_method=\"CreateGame\"", "rpc_grpc_status_code=\"0\""];
    assert_eq!(metric_sample(&after, calls, &create_ok), 1.0, "{after}");
    assert!(
        !after
            .lines()
            .any(|line| line.starts_with(calls) && !line.contains("rpc_method=\"CreateGame\"")),
        "only the one call: {after}"
    );
}
