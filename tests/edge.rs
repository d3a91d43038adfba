//! The edge of a replica through real connections: undecodable request bodies get
//! INVALID_ARGUMENT on every RPC (gRPC over HTTP/2 and gRPC-Web over HTTP/1.1), and every limit an
//! operator sets is answered with RESOURCE_EXHAUSTED.

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use http_body_util::BodyExt;
use tabula::proto::v1 as pb;
use tabula::server::limits::{EdgeLimits, Rate};
use tabula::service::ServiceOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tonic::transport::Channel;
use tonic::{Code, Status};

const RPCS: [&str; 7] = [
    "CreateGame",
    "Act",
    "Observe",
    "GetView",
    "ExportLog",
    "VerifyLog",
    "ReplayLog",
];

/// A replica on a memory store with the given limits, stopped when dropped.
struct LimitedReplica {
    address: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl LimitedReplica {
    async fn start(limits: EdgeLimits) -> LimitedReplica {
        let store = Backend::memory().store().await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            tabula::server::serve_with_limits(
                listener,
                store,
                ServiceOptions {
                    allow_client_seed: true,
                    ..ServiceOptions::default()
                },
                &limits,
                async {
                    let _ = stopped.await;
                },
            )
            .await
        });
        LimitedReplica {
            address,
            _stop: stop,
        }
    }

    /// A client on a connection of its own.
    async fn client(&self) -> Client {
        Client::new(self.channel().await)
    }

    async fn channel(&self) -> Channel {
        let url = format!("http://{}", self.address);
        for _ in 0..100 {
            if let Ok(channel) = Channel::from_shared(url.clone())
                .expect("url")
                .connect()
                .await
            {
                return channel;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("replica at {url} did not accept connections");
    }
}

/// One gRPC length-prefixed frame: compression flag, 4-byte big-endian length, payload.
fn frame(flag: u8, declared_len: u32, payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![flag];
    bytes.extend_from_slice(&declared_len.to_be_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// Bodies no RPC can decode, each with what is wrong with it.
fn malformed_bodies() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        // Field 1 as a length-delimited string claiming 100 bytes that are not there.
        ("truncated protobuf", frame(0, 2, &[0x0a, 100])),
        // Wire type 7 does not exist.
        ("invalid wire type", frame(0, 1, &[0x0f])),
        // Field 1 as invalid UTF-8 in a string field.
        ("invalid UTF-8", frame(0, 3, &[0x0a, 1, 0xff])),
        ("unknown compression flag", frame(7, 1, &[0x08])),
        ("compressed without an encoding", frame(1, 1, &[0x08])),
        ("frame shorter than declared", frame(0, 50, &[0x08, 0x01])),
        ("no message at all", Vec::new()),
    ]
}

/// Sends `body` as the request body of `rpc` over an HTTP/2 connection and returns the status.
async fn raw_grpc_call(channel: &Channel, rpc: &str, body: Vec<u8>) -> Status {
    use tower_service::Service;
    let mut channel = channel.clone();
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("http://tabula/tabula.v1.GameService/{rpc}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(tonic::body::Body::new(http_body_util::Full::new(
            bytes::Bytes::from(body),
        )))
        .expect("request");
    std::future::poll_fn(|cx| channel.poll_ready(cx))
        .await
        .expect("channel ready");
    let response = channel.call(request).await.expect("an HTTP response");
    if let Some(status) = Status::from_header_map(response.headers()) {
        return status;
    }
    let collected = response.into_body().collect().await.expect("body");
    let trailers = collected.trailers().cloned().expect("trailers");
    Status::from_header_map(&trailers).expect("a grpc-status trailer")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_requests_are_invalid_argument_on_every_rpc() {
    let replica = LimitedReplica::start(EdgeLimits::default()).await;
    let channel = replica.channel().await;
    for rpc in RPCS {
        for (what, body) in malformed_bodies() {
            if (rpc == "VerifyLog" || rpc == "ReplayLog") && what == "invalid UTF-8" {
                continue; // their requests' field 1 is a message, not a string
            }
            let status = raw_grpc_call(&channel, rpc, body).await;
            assert_eq!(
                status.code(),
                Code::InvalidArgument,
                "{rpc} with {what}: {status:?}"
            );
            assert!(status.message().len() <= 300, "short message: {status:?}");
        }
    }
    // The connection is still good for well-formed calls.
    let mut client = Client::new(channel);
    create(&mut client, medici_config(), 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_grpc_web_requests_are_invalid_argument() {
    let replica = LimitedReplica::start(EdgeLimits::default()).await;
    let _ = replica.channel().await; // wait until it accepts connections
    for rpc in RPCS {
        let body = frame(0, 1, &[0x0f]);
        let mut socket = tokio::net::TcpStream::connect(replica.address)
            .await
            .expect("connect");
        let head = format!(
            "POST /tabula.v1.GameService/{rpc} HTTP/1.1\r\nHost: tabula\r\n\
             Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes()).await.expect("write");
        socket.write_all(&body).await.expect("write");
        let mut response = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut response))
            .await
            .expect("the replica answers and closes")
            .expect("read");
        let text = String::from_utf8_lossy(&response).to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 200"), "{rpc}: {text}");
        assert!(
            text.contains("grpc-status: 3") || text.contains("grpc-status:3"),
            "{rpc}: INVALID_ARGUMENT over gRPC-Web: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_requests_are_resource_exhausted() {
    let limits = EdgeLimits {
        max_request_bytes: 4096,
        ..EdgeLimits::unmetered()
    };
    let replica = LimitedReplica::start(limits).await;
    let mut client = replica.client().await;
    let huge = pb::VerifyLogRequest {
        log: Some(pb::GameLog {
            game_id: "x".repeat(10_000),
            ..Default::default()
        }),
    };
    let refused = client.verify_log(huge).await.expect_err("over the limit");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().len() <= 300);
    // ReplayLog also carries a whole log: the same limit.
    let huge = pb::ReplayLogRequest {
        log: Some(pb::GameLog {
            game_id: "x".repeat(10_000),
            ..Default::default()
        }),
        version: None,
    };
    let refused = client.replay_log(huge).await.expect_err("over the limit");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    // A frame that only declares a huge length is refused before anything is buffered.
    let status = raw_grpc_call(&replica.channel().await, "Act", frame(0, 1 << 30, &[0])).await;
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    // Within the limit, the same RPC works.
    let small = pb::VerifyLogRequest {
        log: Some(pb::GameLog::default()),
    };
    client.verify_log(small).await.expect("a small request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_game_is_rate_limited_per_address() {
    let limits = EdgeLimits {
        create_game_per_address: Rate::new(0.5, 3),
        ..EdgeLimits::unmetered()
    };
    let replica = LimitedReplica::start(limits).await;
    let mut client = replica.client().await;
    for seed in 0..3 {
        create(&mut client, medici_config(), seed).await;
    }
    let request = pb::CreateGameRequest {
        config: Some(medici_config()),
        seed: None,
        ..Default::default()
    };
    let refused = client
        .create_game(request.clone())
        .await
        .expect_err("over the rate");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().contains("CreateGame"), "{refused:?}");
    // Another connection from the same address shares the budget.
    let mut other = replica.client().await;
    let refused = other.create_game(request).await.expect_err("same address");
    assert_eq!(refused.code(), Code::ResourceExhausted);
    // Other RPCs are not metered by it.
    let other_rpc = client
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: "no-such-game".into(),
            version: None,
            min_version: None,
            omit_view: false,
        })
        .await
        .expect_err("unknown game");
    assert_eq!(other_rpc.code(), Code::NotFound, "{other_rpc:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn act_is_rate_limited_per_token() {
    let limits = EdgeLimits {
        act_per_token: Rate::new(0.1, 2),
        ..EdgeLimits::unmetered()
    };
    let replica = LimitedReplica::start(limits).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 3).await;
    let act = |seat: u32| {
        authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: None,
                expected_version: None,
                request_id: String::new(),
                omit_view: false,
            },
            &token(&game, seat),
        )
    };
    // The service refuses these (no action) but each is an Act the token spent.
    for _ in 0..2 {
        let status = client.act(act(0)).await.expect_err("no action");
        assert_ne!(status.code(), Code::ResourceExhausted, "{status:?}");
    }
    let refused = client.act(act(0)).await.expect_err("over the rate");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().contains("seat token"), "{refused:?}");
    // The other seat's token has its own budget.
    let status = client.act(act(1)).await.expect_err("no action");
    assert_ne!(status.code(), Code::ResourceExhausted, "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acts_on_a_play_stream_are_rate_limited_per_token_as_acts() {
    let limits = EdgeLimits {
        act_per_token: Rate::new(0.1, 2),
        ..EdgeLimits::unmetered()
    };
    let replica = LimitedReplica::start(limits).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 5).await;
    let (requests, outgoing) = tokio::sync::mpsc::channel(4);
    let send = |kind| pb::PlayRequest { kind: Some(kind) };
    requests
        .send(send(pb::play_request::Kind::Start(pb::PlayStart {
            game_id: game.game_id.clone(),
            omit_view: true,
            narrate: false,
        })))
        .await
        .expect("queued");
    let mut responses = client
        .play(authorized(
            tokio_stream::wrappers::ReceiverStream::new(outgoing),
            &token(&game, 0),
        ))
        .await
        .expect("Play opens")
        .into_inner();
    let mut next = async || {
        let message = tokio::time::timeout(Duration::from_secs(10), responses.message())
            .await
            .expect("in time")
            .expect("the stream goes on")
            .expect("a message");
        message.kind.expect("a kind")
    };
    assert!(matches!(next().await, pb::play_response::Kind::Turn(_)));
    let act = || {
        send(pb::play_request::Kind::Act(pb::ActRequest {
            game_id: String::new(),
            action: None,
            expected_version: None,
            request_id: String::new(),
            narrate: false,
            omit_view: true,
        }))
    };
    let mut codes = Vec::new();
    for _ in 0..3 {
        requests.send(act()).await.expect("sent");
        match next().await {
            pb::play_response::Kind::Refused(refusal) => {
                codes.push((refusal.code, refusal.message))
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    // The first two are the service's (no action), each an Act the token spent; the third is
    // over the token's Act rate, and the stream goes on.
    assert_eq!(codes[0].0, Code::InvalidArgument as u32, "{codes:?}");
    assert_eq!(codes[1].0, Code::InvalidArgument as u32, "{codes:?}");
    assert_eq!(codes[2].0, Code::ResourceExhausted as u32, "{codes:?}");
    assert!(codes[2].1.contains("seat token"), "{codes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_is_rate_limited_per_address() {
    let limits = EdgeLimits {
        observe_per_address: Rate::new(0.1, 2),
        ..EdgeLimits::unmetered()
    };
    let replica = LimitedReplica::start(limits).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 4).await;
    let observe = || pb::ObserveRequest {
        narrate: false,
        game_id: game.game_id.clone(),
        from_version: None,
    };
    let _first = client.observe(observe()).await.expect("first");
    let _second = client.observe(observe()).await.expect("second");
    let refused = client.observe(observe()).await.expect_err("over the rate");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_streams_are_capped_per_connection_and_per_replica() {
    let limits = EdgeLimits {
        observe_streams_per_connection: 2,
        observe_streams_per_replica: 3,
        ..EdgeLimits::unmetered()
    };
    let replica = LimitedReplica::start(limits).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 5).await;
    let observe = || pb::ObserveRequest {
        narrate: false,
        game_id: game.game_id.clone(),
        from_version: None,
    };
    let mut first = client.observe(observe()).await.expect("first").into_inner();
    first.next().await.expect("a message").expect("ok");
    let _second = client.observe(observe()).await.expect("second");
    let refused = client.observe(observe()).await.expect_err("per connection");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().contains("connection"), "{refused:?}");

    let mut other = replica.client().await;
    let _third = other.observe(observe()).await.expect("another connection");
    let refused = other.observe(observe()).await.expect_err("per replica");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().contains("replica"), "{refused:?}");

    // Closing a stream frees its place (the server sees the reset shortly after).
    drop(first);
    let mut reopened = false;
    for _ in 0..100 {
        if client.observe(observe()).await.is_ok() {
            reopened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(reopened, "a closed stream's place is given back");
}

/// Issue #24 (2): a call with a 64 KiB bearer token fails on its own, with RESOURCE_EXHAUSTED
/// naming the limit (and is counted), while the other calls on the same channel — one HTTP/2
/// connection — carry on: an Observe stream open across the refusal keeps delivering, and calls
/// sent alongside and right after succeed. (The server used to close the whole connection:
/// every call on it failed with UNAVAILABLE "Stream removed".) An 8 KiB token, within the
/// limit, still reaches the service and gets PERMISSION_DENIED. Through the real binary, so the
/// server's own HTTP/2 settings are the ones tested, and its metrics endpoint shows the count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_header_fails_its_own_call_not_the_connection() {
    let metrics_port = free_port();
    let metrics_address = format!("127.0.0.1:{metrics_port}");
    let replica = common::servers::TabulaServe::start(&[
        "--allow-client-seed",
        "--metrics-listen",
        &metrics_address,
    ]);
    // One channel: every clone of this client multiplexes its calls on the same connection.
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 24).await;
    let mut stream = observe(&mut client.clone(), &game.game_id, Some(0)).await;
    let first = stream.next().await.expect("a message").expect("the start");
    assert_eq!(first.version, 0);

    let get_view = |token: &str| {
        authorized(
            pb::GetViewRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            },
            token,
        )
    };
    let mut sender = client.clone();
    let (oversized, healthy) =
        tokio::join!(sender.get_view(get_view(&"x".repeat(64 * 1024))), async {
            // Healthy calls in flight on the same connection while the oversized one is refused.
            let mut answered = 0;
            for _ in 0..20 {
                let view = client.clone().get_view(get_view(&token(&game, 0))).await;
                view.expect("a healthy call on the same channel");
                answered += 1;
            }
            answered
        });
    assert_eq!(healthy, 20);
    let refused = oversized.expect_err("a 64 KiB authorization header is refused");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    let message = refused.message();
    assert!(
        message.starts_with("request metadata too large")
            && message.contains("the limit is 16384 bytes")
            && message.contains("authorization"),
        "{message}"
    );

    // Within the limit the call reaches the service, which does not know the token.
    let unknown = client
        .clone()
        .get_view(get_view(&"x".repeat(8 * 1024)))
        .await
        .expect_err("an unknown token");
    assert_eq!(unknown.code(), Code::PermissionDenied, "{unknown:?}");

    // Right after: a move on the same channel, and the stream opened before delivers it.
    let view = client
        .get_view(get_view(&token(&game, 0)))
        .await
        .expect("GetView after the refusal")
        .into_inner();
    let seat = view
        .status
        .as_ref()
        .and_then(|s| s.to_act)
        .expect("a seat to act");
    let mine = client
        .get_view(get_view(&token(&game, seat)))
        .await
        .expect("the seat's view")
        .into_inner();
    let mut rng = tabula::games::common::GameRng::from_seed(&tabula::games::Seed::from_u64(24));
    client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(choose(&mine.legal_actions, &mut rng)),
                expected_version: Some(0),
                request_id: "after-the-refusal".into(),
                omit_view: false,
            },
            &token(&game, seat),
        ))
        .await
        .expect("Act on the same channel");
    let next = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the stream delivers within 10 s")
        .expect("the stream is still open")
        .expect("not an error: the connection was never closed");
    assert_eq!(next.version, 1);

    let scraped = scrape_metrics(metrics_port);
    assert_eq!(
        metric_sample(
            &scraped,
            "tabula_edge_refusals_total",
            &["limit=\"header_size\""]
        ),
        1.0,
        "the refusal is counted"
    );
}
