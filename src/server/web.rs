//! The web client (issue #16): a page to create, play, watch and replay games, served by the
//! replica itself on its own port, so opening the printed address is all a person needs.
//!
//! The page is built from `web/` (TypeScript, with a client generated from `proto/`) into
//! `web/dist/`, which is committed and embedded here at compile time: no build step and no files
//! on disk at run time. `tests/web.rs` rebuilds it and fails when the committed bundle differs
//! from its sources. The page calls the replica over gRPC-Web on the same origin, so it needs no
//! `--cors-origin`.
//!
//! [`WebLayer`] answers `GET`/`HEAD` for the page's few files and lets everything else through to
//! the gRPC routes (and to [`super::edge::MethodGateLayer`], which refuses other non-POST
//! requests as before).

use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use tonic::body::Body;

/// One file of the bundle: its path, content type and bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

/// Every file the page consists of; `/` is `index.html`. Nothing else on disk is reachable.
const ASSETS: [Asset; 4] = [
    Asset {
        path: "/index.html",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("../../web/dist/index.html"),
    },
    Asset {
        path: "/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../web/dist/app.js"),
    },
    Asset {
        path: "/live-worker.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../web/dist/live-worker.js"),
    },
    Asset {
        path: "/app.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../web/dist/app.css"),
    },
];

/// The page's Content-Security-Policy: its own scripts, styles and calls only (gRPC-Web goes to
/// the same origin), inline SVG, no frames of it elsewhere.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; \
     form-action 'none'";

fn asset(path: &str) -> Option<&'static Asset> {
    let path = if path == "/" { "/index.html" } else { path };
    ASSETS.iter().find(|asset| asset.path == path)
}

/// The layer: serves the web client when `enabled`, else passes every request through.
#[derive(Clone, Copy, Debug)]
pub struct WebLayer {
    enabled: bool,
}

impl WebLayer {
    /// A layer that serves the page when `enabled` (`--web`).
    pub fn new(enabled: bool) -> Self {
        WebLayer { enabled }
    }
}

impl<S> tower_layer::Layer<S> for WebLayer {
    type Service = Web<S>;

    fn layer(&self, inner: S) -> Web<S> {
        Web {
            inner,
            enabled: self.enabled,
        }
    }
}

/// The service the [`WebLayer`] wraps around the server.
#[derive(Clone, Debug)]
pub struct Web<S> {
    inner: S,
    enabled: bool,
}

/// The answer for one of the page's files (no body for `HEAD`).
fn page_response(asset: &'static Asset, head: bool) -> Response<Body> {
    let body = if head {
        Body::empty()
    } else {
        Body::new(http_body_util::Full::new(Bytes::from_static(asset.body)))
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(asset.body.len()));
    // The bundle changes with the binary: revalidate rather than keep a stale page after an
    // upgrade.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

impl<S, ReqBody> tower_service::Service<Request<ReqBody>> for Web<S>
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
        let head = request.method() == Method::HEAD;
        if self.enabled
            && (head || request.method() == Method::GET)
            && let Some(asset) = asset(request.uri().path())
        {
            return futures::future::Either::Right(std::future::ready(Ok(page_response(
                asset, head,
            ))));
        }
        futures::future::Either::Left(self.inner.call(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_page_and_nothing_else_is_served() {
        assert_eq!(asset("/").map(|a| a.path), Some("/index.html"));
        assert_eq!(asset("/app.js").map(|a| a.path), Some("/app.js"));
        assert!(asset("/../Cargo.toml").is_none());
        assert!(asset("/tabula.v1.GameService/Act").is_none());
        for asset in &ASSETS {
            assert!(!asset.body.is_empty(), "{} is built", asset.path);
        }
    }
}
