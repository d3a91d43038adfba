//! Operating the `tabula` binary: starting before its Redis, TLS towards clients and towards
//! Redis (`rediss://` verified against a private CA), health names for liveness and readiness,
//! the Prometheus metrics endpoint.
//! Certificates are made by the test with `openssl`; Redis is a real `redis-server` of the test's
//! own (Debian's is built with TLS).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::free_port;
use common::servers::{
    Killed, TABULA, TabulaServe, health, redis_server_on, send_signal, wait_serving,
};

/// Waits until `log` contains `needle` (within `within`); the log's text.
fn wait_log(log: &Path, needle: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains(needle) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_replica_started_before_its_redis_waits_for_it_and_hides_the_password() {
    let dir = tempfile::tempdir().expect("dir");
    let redis_port = free_port();
    let log = dir.path().join("tabula.log");
    let url = format!("redis://:s3cret-pw@127.0.0.1:{redis_port}/");
    let mut replica = TabulaServe::logged(&["--redis-url", &url], &log);

    let text = wait_log(&log, "store not reachable", Duration::from_secs(10));
    assert!(text.contains("store not reachable"), "{text}");
    assert!(
        text.contains(&format!("redis://:***@127.0.0.1:{redis_port}/")),
        "{text}"
    );
    assert!(
        !text.contains("s3cret-pw"),
        "the password is not logged: {text}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        replica.process.is_running(),
        "the replica waits instead of exiting: {text}"
    );

    let _redis = redis_server_on(redis_port, &["--requirepass", "s3cret-pw"], dir.path());
    let server = replica.address();
    let ready = wait_serving(&server, &[], Duration::from_secs(20));
    assert!(ready.status.success(), "{ready:?}");
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.contains("store reachable"), "{text}");
    assert!(!text.contains("s3cret-pw"), "{text}");
}

#[test]
fn liveness_stays_serving_while_readiness_follows_the_store() {
    let dir = tempfile::tempdir().expect("dir");
    let redis_port = free_port();
    let mut redis = redis_server_on(redis_port, &[], dir.path());
    let log = dir.path().join("tabula.log");
    let url = format!("redis://127.0.0.1:{redis_port}/");
    let replica = TabulaServe::logged(&["--redis-url", &url], &log);
    let server = replica.address();
    let ready = wait_serving(&server, &[], Duration::from_secs(20));
    assert!(ready.status.success(), "{ready:?}");

    redis.kill();
    // Readiness (both names) goes NOT_SERVING within the health interval; liveness does not.
    let deadline = Instant::now() + Duration::from_secs(15);
    let not_ready = loop {
        let output = health(&server, &[]);
        if !output.status.success() || Instant::now() > deadline {
            break output;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(
        String::from_utf8_lossy(&not_ready.stdout).trim(),
        "NOT_SERVING"
    );
    let game_service = health(&server, &["--service", "tabula.v1.GameService"]);
    assert_eq!(
        String::from_utf8_lossy(&game_service.stdout).trim(),
        "NOT_SERVING"
    );
    let live = health(&server, &["--service", "tabula.v1.Liveness"]);
    assert!(live.status.success(), "{live:?}");
    assert_eq!(String::from_utf8_lossy(&live.stdout).trim(), "SERVING");

    // Redis comes back on the same port: readiness follows, with a log line saying so.
    let _redis = redis_server_on(redis_port, &[], dir.path());
    let ready = wait_serving(&server, &[], Duration::from_secs(20));
    assert!(ready.status.success(), "{ready:?}");
    let text = wait_log(&log, "store reachable again", Duration::from_secs(5));
    assert!(text.contains("store reachable again"), "{text}");
}

/// A private CA and a certificate it signed for `localhost` / 127.0.0.1.
struct Certificates {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl on PATH");
    assert!(output.status.success(), "openssl {args:?}: {output:?}");
}

fn make_certificates(dir: &Path) -> Certificates {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    openssl(
        dir,
        &[
            &["req", "-x509"],
            &ec[..],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-subj",
                "/CN=test-ca",
                "-days",
                "1",
            ],
        ]
        .concat(),
    );
    openssl(
        dir,
        &[
            &["req"],
            &ec[..],
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .expect("ext file");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "1",
            "-extfile",
            "server.ext",
        ],
    );
    Certificates {
        ca: dir.join("ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
    }
}

#[test]
fn tls_towards_clients_and_a_rediss_store_verified_against_a_private_ca() {
    let dir = tempfile::tempdir().expect("dir");
    let certs = make_certificates(dir.path());
    let (ca, cert, key) = (
        certs.ca.to_str().expect("utf-8 path"),
        certs.cert.to_str().expect("utf-8 path"),
        certs.key.to_str().expect("utf-8 path"),
    );
    let redis_port = free_port();
    let _redis = redis_server_on(
        0,
        &[
            "--tls-port",
            &redis_port.to_string(),
            "--tls-cert-file",
            cert,
            "--tls-key-file",
            key,
            "--tls-ca-cert-file",
            ca,
            "--tls-auth-clients",
            "no",
        ],
        dir.path(),
    );
    let rediss = format!("rediss://localhost:{redis_port}/");

    // Verified against the private CA: the replica serves, over TLS itself.
    let log = dir.path().join("tls.log");
    let replica = TabulaServe::logged(
        &[
            "--redis-url",
            &rediss,
            "--redis-ca",
            ca,
            "--tls-cert",
            cert,
            "--tls-key",
            key,
        ],
        &log,
    );
    let server = format!("https://localhost:{}", replica.port);
    let ready = wait_serving(&server, &["--ca-cert", ca], Duration::from_secs(20));
    assert!(
        ready.status.success(),
        "{ready:?}\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    // A client that does not trust the CA is refused.
    let untrusted = health(&server, &[]);
    assert!(!untrusted.status.success(), "{untrusted:?}");
    // Plaintext to a TLS port fails too.
    let plaintext = health(&replica.address(), &[]);
    assert!(!plaintext.status.success(), "{plaintext:?}");

    // Without the CA the Redis certificate does not verify: the replica keeps waiting and says why.
    let unverified_log = dir.path().join("unverified.log");
    let mut unverified = TabulaServe::logged(&["--redis-url", &rediss], &unverified_log);
    let text = wait_log(
        &unverified_log,
        "store not reachable",
        Duration::from_secs(10),
    );
    assert!(text.contains("store not reachable"), "{text}");
    assert!(
        text.to_lowercase().contains("certificate"),
        "the log names the certificate problem: {text}"
    );
    assert!(unverified.process.is_running());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_endpoint_counts_calls_store_round_trips_caches_streams_and_games() {
    use common::*;
    use tabula::games::Seed;
    use tabula::games::common::GameRng;
    use tabula::proto::v1 as pb;

    let dir = tempfile::tempdir().expect("dir");
    let redis = RedisServer::start();
    let metrics_port = free_port();
    let metrics_address = format!("127.0.0.1:{metrics_port}");
    let replica = TabulaServe::logged(
        &[
            "--redis-url",
            &redis.url(),
            "--allow-client-seed",
            "--metrics-listen",
            &metrics_address,
        ],
        &dir.path().join("tabula.log"),
    );
    let mut client = replica.client().await;
    let before = scrape_metrics(metrics_port);
    let act_ok = [
        "rpc_method=\"Act\"",
        "rpc_grpc_status_code=\"0\"",
        "rpc_service=\"tabula.v1.GameService\"",
        "rpc_system=\"grpc\"",
    ];
    let calls = "rpc_server_call_duration_seconds_count";
    assert_eq!(metric_sample(&before, calls, &act_ok), 0.0);

    let game = create(&mut client, medici_config(), 41).await;
    let mut observer = client.clone();
    let mut stream = observe(&mut observer, &game.game_id, None).await;
    futures::StreamExt::next(&mut stream)
        .await
        .expect("first message")
        .expect("ok");
    let streaming = scrape_metrics(metrics_port);
    assert_eq!(
        metric_sample(&streaming, "tabula_observe_streams", &[]),
        1.0
    );

    let mut rng = GameRng::from_seed(&Seed::from_u64(41));
    let final_version = play_random(&mut [client.clone()], &game, &mut rng, 5_000).await;
    let missing = client
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: "no-such-game".into(),
            version: None,
            min_version: None,
            omit_view: false,
        })
        .await
        .expect_err("unknown game");
    assert_eq!(missing.code(), tonic::Code::NotFound);
    // The stream ends by itself after the final state.
    while futures::StreamExt::next(&mut stream).await.is_some() {}

    let after = scrape_metrics(metrics_port);
    assert_eq!(
        metric_sample(&after, calls, &act_ok),
        final_version as f64,
        "{after}"
    );
    assert_eq!(
        metric_sample(
            &after,
            calls,
            &["rpc_method=\"GetView\"", "rpc_grpc_status_code=\"5\""]
        ),
        1.0
    );
    assert!(after.contains("rpc_server_call_duration_seconds_bucket{"));
    assert_eq!(
        metric_sample(&after, "tabula_observe_streams", &[]),
        0.0,
        "{after}"
    );
    let appends = metric_sample(
        &after,
        "tabula_store_operation_duration_seconds_count",
        &["operation=\"append\"", "store=\"redis\""],
    );
    assert_eq!(appends, final_version as f64);
    let medici = ["game=\"medici_vs_strozzi\""];
    assert_eq!(
        metric_sample(&after, "tabula_games_created_total", &medici),
        1.0
    );
    assert_eq!(
        metric_sample(&after, "tabula_games_finished_total", &medici),
        1.0
    );
    assert!(
        metric_sample(&after, "tabula_cache_hits_total", &[]) > 0.0,
        "{after}"
    );
    assert!(
        metric_sample(&after, "tabula_cache_misses_total", &[]) > 0.0,
        "{after}"
    );
    drop(redis);
}

/// What an OTLP receiver started by a test has been sent.
#[derive(Clone, Default)]
struct Received {
    spans: std::sync::Arc<std::sync::Mutex<Vec<opentelemetry_proto::tonic::trace::v1::Span>>>,
    metric_names: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

#[tonic::async_trait]
impl opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::TraceService
    for Received
{
    async fn export(
        &self,
        request: tonic::Request<
            opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest,
        >,
    ) -> Result<
        tonic::Response<
            opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse,
        >,
        tonic::Status,
    > {
        let spans = request
            .into_inner()
            .resource_spans
            .into_iter()
            .flat_map(|resource| resource.scope_spans)
            .flat_map(|scope| scope.spans);
        self.spans.lock().expect("lock").extend(spans);
        Ok(tonic::Response::new(Default::default()))
    }
}

#[tonic::async_trait]
impl opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::MetricsService
    for Received
{
    async fn export(
        &self,
        request: tonic::Request<
            opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest,
        >,
    ) -> Result<
        tonic::Response<
            opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceResponse,
        >,
        tonic::Status,
    > {
        let names = request
            .into_inner()
            .resource_metrics
            .into_iter()
            .flat_map(|resource| resource.scope_metrics)
            .flat_map(|scope| scope.metrics)
            .map(|metric| metric.name);
        self.metric_names.lock().expect("lock").extend(names);
        Ok(tonic::Response::new(Default::default()))
    }
}

fn string_attribute(
    span: &opentelemetry_proto::tonic::trace::v1::Span,
    key: &str,
) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
        .map(|value| match value {
            Value::StringValue(text) => text.clone(),
            Value::IntValue(number) => number.to_string(),
            other => format!("{other:?}"),
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_spans_continue_the_callers_trace_and_are_flushed_on_sigterm() {
    use common::*;
    use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::MetricsServiceServer;
    use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::TraceServiceServer;
    use opentelemetry_proto::tonic::trace::v1::{span::SpanKind, status::StatusCode};
    use tabula::proto::v1 as pb;

    let received = Received::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let collector = listener.local_addr().expect("address");
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(received.clone()))
            .add_service(MetricsServiceServer::new(received.clone()))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );

    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("tabula.log");
    // The endpoint without a scheme: plaintext, as collectors in a cluster are.
    let mut replica = TabulaServe::logged(
        &[
            "--otlp-endpoint",
            &collector.to_string(),
            "--log-format",
            "json",
        ],
        &log,
    );
    let mut client = replica.client().await;

    let trace_id = "0af7651916cd43dd8448eb211c80319c";
    let parent_id = "b7ad6b7169203331";
    let mut request = tonic::Request::new(pb::GetViewRequest {
        narrate: false,
        game_id: "no-such-game".into(),
        version: None,
        min_version: None,
        omit_view: false,
    });
    request.metadata_mut().insert(
        "traceparent",
        format!("00-{trace_id}-{parent_id}-01")
            .parse()
            .expect("ascii"),
    );
    let refused = client.get_view(request).await.expect_err("unknown game");
    assert_eq!(refused.code(), tonic::Code::NotFound);
    let created = client
        .create_game(pb::CreateGameRequest {
            config: Some(medici_config()),
            seed: None,
            ..Default::default()
        })
        .await
        .expect("CreateGame");
    assert!(!created.into_inner().game_id.is_empty());

    // SIGTERM: the batch exporters flush what they hold before the process exits.
    replica.process.signal("-TERM");
    let status = replica.process.exit_within(Duration::from_secs(15)).await;
    assert!(status.success(), "{status}");

    let spans = received.spans.lock().expect("lock").clone();
    let get_view = spans
        .iter()
        .find(|span| span.name == "tabula.v1.GameService/GetView")
        .unwrap_or_else(|| {
            panic!(
                "a GetView span among {:?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        });
    assert_eq!(
        hex::encode(&get_view.trace_id),
        trace_id,
        "the caller's trace"
    );
    assert_eq!(
        hex::encode(&get_view.parent_span_id),
        parent_id,
        "the caller's span"
    );
    assert_eq!(get_view.kind, SpanKind::Server as i32);
    assert_eq!(
        string_attribute(get_view, "rpc.system").as_deref(),
        Some("grpc")
    );
    assert_eq!(
        string_attribute(get_view, "rpc.service").as_deref(),
        Some("tabula.v1.GameService")
    );
    assert_eq!(
        string_attribute(get_view, "rpc.method").as_deref(),
        Some("GetView")
    );
    assert_eq!(
        string_attribute(get_view, "rpc.grpc.status_code").as_deref(),
        Some("5")
    );
    let status = get_view.status.as_ref().expect("a span status");
    assert_eq!(status.code, StatusCode::Error as i32);

    let create = spans
        .iter()
        .find(|span| span.name == "tabula.v1.GameService/CreateGame")
        .expect("a CreateGame span");
    assert_ne!(
        hex::encode(&create.trace_id),
        trace_id,
        "no traceparent: a trace of its own"
    );
    assert!(create.parent_span_id.is_empty());
    assert_eq!(
        string_attribute(create, "rpc.grpc.status_code").as_deref(),
        Some("0")
    );
    assert_ne!(
        create.status.as_ref().map(|status| status.code),
        Some(StatusCode::Error as i32)
    );

    let metric_names = received.metric_names.lock().expect("lock").clone();
    assert!(
        metric_names
            .iter()
            .any(|name| name == "rpc.server.call.duration"),
        "metrics flushed on shutdown: {metric_names:?}"
    );

    // The access log: one JSON line per RPC, with the code and the trace it belongs to.
    let text = std::fs::read_to_string(&log).expect("log");
    let access = text
        .lines()
        .find(|line| line.contains("\"tabula::access\"") && line.contains("\"GetView\""))
        .unwrap_or_else(|| panic!("an access-log line for GetView in {text}"));
    let access: serde_json::Value = serde_json::from_str(access).expect("a JSON log line");
    assert_eq!(access["code"], 5, "{access}");
    assert_eq!(access["game_id"], "no-such-game", "{access}");
    assert_eq!(access["trace_id"], trace_id, "{access}");
    assert_eq!(
        access["span_id"],
        hex::encode(&get_view.span_id),
        "{access}"
    );
    assert!(access["duration_ms"].as_f64().is_some(), "{access}");
    assert!(!text.contains('\u{1b}'), "no ANSI escapes in a file");
}

#[tokio::test]
async fn as_pid_1_of_its_namespace_sigterm_stops_it_gracefully() {
    // In a container tabula is PID 1, for which the kernel drops signals that have no handler.
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("tabula.log");
    let port = free_port();
    let file = std::fs::File::create(&log).expect("log file");
    let mut namespace = Killed(
        Command::new("unshare")
            .args(["--pid", "--fork", "--kill-child"])
            .arg(TABULA)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .spawn()
            .expect("unshare (util-linux)"),
    );
    let ready = wait_serving(&format!("127.0.0.1:{port}"), &[], Duration::from_secs(10));
    assert!(ready.status.success(), "{ready:?}");

    let unshare = namespace.0.id();
    let children = std::fs::read_to_string(format!("/proc/{unshare}/task/{unshare}/children"))
        .expect("unshare's children");
    let tabula: u32 = children
        .split_whitespace()
        .next()
        .and_then(|pid| pid.parse().ok())
        .expect("tabula runs under unshare");
    let status = std::fs::read_to_string(format!("/proc/{tabula}/status")).expect("status");
    let namespaced_pid = status
        .lines()
        .find_map(|line| line.strip_prefix("NSpid:"))
        .and_then(|pids| pids.split_whitespace().last())
        .expect("an NSpid line");
    assert_eq!(namespaced_pid, "1", "tabula is PID 1 in its namespace");

    send_signal(tabula, "-TERM");
    let exit = namespace.exit_within(Duration::from_secs(5)).await;
    assert!(exit.success(), "{exit}");
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.contains("SIGTERM"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_reports_not_serving_before_it_ends_streams_and_refuses_calls() {
    use futures::StreamExt;
    use tabula::proto::v1 as pb;
    use tabula::server::{self, ServeOptions};
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;

    let store: std::sync::Arc<dyn tabula::store::Store> =
        std::sync::Arc::new(tabula::store::memory::MemoryStore::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(server::serve_with(
        listener,
        store,
        common::test_options(),
        ServeOptions {
            shutdown_grace: Duration::from_secs(5),
            ..ServeOptions::default()
        },
        async {
            let _ = stopped.await;
        },
    ));
    let channel = tonic::transport::Endpoint::from_shared(url)
        .expect("url")
        .connect()
        .await
        .expect("connect");
    let mut health = HealthClient::new(channel.clone());
    let mut watch = health
        .watch(tonic_health::pb::HealthCheckRequest {
            service: "tabula.v1.GameService".into(),
        })
        .await
        .expect("Watch")
        .into_inner();
    // Readiness starts NOT_SERVING until the first store check, then turns SERVING.
    loop {
        let status = watch.next().await.expect("a status").expect("ok");
        if status.status() == ServingStatus::Serving {
            break;
        }
        assert_eq!(status.status(), ServingStatus::NotServing);
    }
    let mut games = common::Client::new(channel.clone());
    let game = common::create(&mut games, common::medici_config(), 5).await;
    let mut observe = common::observe(&mut games, &game.game_id, None).await;
    observe.next().await.expect("the first view").expect("ok");

    stop.send(()).expect("the server runs");
    // Readiness goes NOT_SERVING first; then the streams end with UNAVAILABLE.
    let next = watch.next().await.expect("a status").expect("ok");
    assert_eq!(next.status(), ServingStatus::NotServing);
    let ended = watch.next().await.expect("the end of the watch");
    assert_eq!(
        ended.expect_err("UNAVAILABLE").code(),
        tonic::Code::Unavailable
    );
    let ended = observe.next().await.expect("the end of the stream");
    let ended = ended.expect_err("UNAVAILABLE");
    assert_eq!(ended.code(), tonic::Code::Unavailable);
    assert!(
        ended.message().contains("reconnect to another replica"),
        "{ended:?}"
    );

    // The server returns well within the grace, and nothing is served after it.
    let returned = tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("serve_with returns within the grace");
    returned.expect("task").expect("served");
    let after = games
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            version: None,
            min_version: None,
            omit_view: false,
        })
        .await
        .expect_err("refused after shutdown");
    // The connection is gone: the client sees it closed, or cannot reconnect.
    assert!(
        matches!(
            after.code(),
            tonic::Code::Unavailable | tonic::Code::Cancelled
        ),
        "{after:?}"
    );
}
