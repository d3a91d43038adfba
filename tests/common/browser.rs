//! What the browser tests (tests/browser.rs, tests/web.rs) need around Chromium: finding node and
//! the browser, skipping with a reason outside CI and failing under it, and a `tabula serve`
//! process with a client.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

use super::Client;
use super::servers::TabulaServe;

/// Whether `node` (>= 20, with npm) runs; otherwise says why `what` is skipped (and fails under CI).
pub fn node_present(what: &str) -> bool {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !node {
        skip(&format!(
            "{what} needs node (>= 20, with npm): run scripts/test.sh"
        ));
    }
    node
}

/// The Chromium to drive (`CHROMIUM`, else Debian's `/usr/bin/chromium`) when node is present too,
/// or `None` after saying why `what` is skipped (failing under CI, where it must run).
pub fn chromium(what: &str) -> Option<PathBuf> {
    if !node_present(what) {
        return None;
    }
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if chromium.is_file() {
        return Some(chromium);
    }
    skip(&format!(
        "{what} needs Chromium at {}: run scripts/test.sh (it installs Debian's chromium) or set \
         CHROMIUM",
        chromium.display()
    ));
    None
}

/// Says why a test is skipped; under CI a skip is a failure.
fn skip(message: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{message} (under CI it must run)"
    );
    eprintln!("SKIPPED: {message}");
}

/// `tabula serve` with `extra` arguments on a free loopback port, its address, and a client once
/// it accepts connections.
pub async fn start_replica(extra: &[&str]) -> (TabulaServe, SocketAddr, Client) {
    let served = TabulaServe::start(extra);
    let client = served.client().await;
    let address = served.address().parse().expect("a loopback address");
    (served, address, client)
}
