//! The `tabula` binary as a user runs it: `serve` against Redis, `export` to canonical JSON,
//! `verify` of the exported file (and refusal of a tampered one).

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use tabula::games::Seed;
use tabula::games::common::GameRng;

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_export_and_verify_from_the_command_line() {
    let redis = RedisServer::start();
    let port = free_port();
    let binary = env!("CARGO_BIN_EXE_tabula");
    let _server = Served(
        Command::new(binary)
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--allow-client-seed",
            ])
            .args(["--redis-url", &redis.url(), "--log-format", "json"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tabula serve"),
    );
    let url = format!("http://127.0.0.1:{port}");
    let mut client = None;
    for _ in 0..250 {
        if let Ok(connected) = Client::connect(url.clone()).await {
            client = Some(connected);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut clients = vec![client.expect("tabula serve accepts connections")];
    let game = create(&mut clients[0], medici_config(), 12).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(12));
    play_random(&mut clients, &game, &mut rng, 5_000).await;

    let export = Command::new(binary)
        .args(["export", "--server", &url, &game.game_id])
        .output()
        .expect("tabula export");
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let json = String::from_utf8(export.stdout).expect("utf-8");
    assert!(
        json.contains("\"complete\": true"),
        "canonical JSON names fields in camelCase: {json:.200}"
    );
    assert!(json.contains("\"medici_vs_strozzi\"") || json.contains("\"mediciVsStrozzi\""));

    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("game.json");
    std::fs::write(&file, &json).expect("write");
    let verify = Command::new(binary)
        .arg("verify")
        .arg(&file)
        .output()
        .expect("tabula verify");
    let report = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "{report}");
    assert!(report.contains("\"valid\": true"), "{report}");
    assert!(report.contains("\"stateHash\""), "{report}");

    // Change who made a move (canonical JSON omits seat 0, so flip a seat 1 to 2): verification
    // fails, naming the entry, with exit code 1.
    let tampered_json = json.replacen("\"seat\": 1,", "\"seat\": 2,", 1);
    assert!(tampered_json != json, "the log has a move by seat 1");
    let tampered = dir.path().join("tampered.json");
    std::fs::write(&tampered, tampered_json).expect("write");
    let verify = Command::new(binary)
        .arg("verify")
        .arg(&tampered)
        .output()
        .expect("tabula verify");
    let report = String::from_utf8_lossy(&verify.stdout);
    assert_eq!(verify.status.code(), Some(1), "{report}");
    assert!(report.contains("\"invalidVersion\""), "{report}");

    let unreadable = dir.path().join("garbage.json");
    std::fs::write(&unreadable, "{ not json").expect("write");
    let verify = Command::new(binary)
        .arg("verify")
        .arg(&unreadable)
        .output()
        .expect("tabula verify");
    assert!(!verify.status.success());
    assert!(
        !String::from_utf8_lossy(&verify.stderr).is_empty(),
        "a clear error on stderr"
    );
}
