//! Graceful shutdown: the drain signal and the tower layer that carries it out on every call.
//!
//! When a replica is told to stop (SIGTERM from the orchestrator, Ctrl-C), it reports NOT_SERVING,
//! stops accepting connections and asks its clients to go away (HTTP/2 GOAWAY). Unary calls already
//! running (an `Act` half-way through its append) finish normally. Long-lived streams would keep
//! the process alive forever, so [`DrainLayer`] ends them with `UNAVAILABLE`: an `Observe` client
//! then reconnects to another replica with `from_version` = the last version it saw, and misses
//! nothing. Calls that still arrive on an existing connection are refused with `UNAVAILABLE`, so
//! clients retry elsewhere at once instead of queueing on a replica that is going away.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body as HttpBody, Frame};
use tokio::sync::watch;
use tonic::body::Body;

/// The message streams and refused calls end with while the replica drains.
pub const DRAINING_MESSAGE: &str = "this replica is shutting down: reconnect to another replica";

/// Methods whose responses are long-lived streams, cut when draining starts. Everything else is a
/// unary call that is allowed to finish.
const STREAMING_METHODS: &[&str] = &[
    "/tabula.v1.GameService/Observe",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

/// Health checks keep being answered while draining (they say NOT_SERVING), so a load balancer
/// polling an existing connection learns why it should stop sending calls here.
const HEALTH_CHECK: &str = "/grpc.health.v1.Health/Check";

/// A one-way switch from "serving" to "draining", shared by the server and its layers.
#[derive(Clone, Debug)]
pub struct Drain {
    sender: std::sync::Arc<watch::Sender<bool>>,
    receiver: watch::Receiver<bool>,
}

impl Default for Drain {
    fn default() -> Self {
        Drain::new()
    }
}

impl Drain {
    /// A switch that is not yet draining.
    pub fn new() -> Self {
        let (sender, receiver) = watch::channel(false);
        Drain {
            sender: std::sync::Arc::new(sender),
            receiver,
        }
    }

    /// Starts draining (idempotent).
    pub fn start(&self) {
        self.sender.send_replace(true);
    }

    /// Whether draining has started.
    pub fn is_draining(&self) -> bool {
        *self.receiver.borrow()
    }

    /// Completes once draining has started.
    pub fn started(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.receiver.clone();
        async move {
            // An error means every sender is gone: nobody can start draining any more.
            if receiver.wait_for(|draining| *draining).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// The layer that applies this switch to every call.
    pub fn layer(&self) -> DrainLayer {
        DrainLayer {
            drain: self.clone(),
        }
    }
}

/// Refuses new calls and ends streaming responses once the [`Drain`] is switched.
#[derive(Clone, Debug)]
pub struct DrainLayer {
    drain: Drain,
}

impl<S> tower::Layer<S> for DrainLayer {
    type Service = DrainService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        DrainService {
            inner,
            drain: self.drain.clone(),
        }
    }
}

/// See [`DrainLayer`].
#[derive(Clone, Debug)]
pub struct DrainService<S> {
    inner: S,
    drain: Drain,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

impl<S, ReqBody, ResBody> tower::Service<Request<ReqBody>> for DrainService<S>
where
    S: tower::Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: HttpBody<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<tonic::codegen::StdError>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Response<Body>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let path = request.uri().path();
        if self.drain.is_draining() && path != HEALTH_CHECK {
            let refused = tonic::Status::unavailable(DRAINING_MESSAGE).into_http::<Body>();
            return Box::pin(std::future::ready(Ok(refused)));
        }
        let streaming = STREAMING_METHODS.contains(&path);
        let drained = streaming.then(|| Box::pin(self.drain.started()) as BoxFuture<()>);
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| match drained {
                Some(drained) => Body::new(DrainedBody {
                    inner: body,
                    drained: Some(drained),
                    ended: false,
                }),
                None => Body::new(body),
            }))
        })
    }
}

pin_project_lite::pin_project! {
    /// A streaming response body that ends with `UNAVAILABLE` trailers once draining starts.
    struct DrainedBody<B> {
        #[pin]
        inner: B,
        drained: Option<BoxFuture<()>>,
        ended: bool,
    }
}

fn unavailable_trailers() -> HeaderMap {
    let mut trailers = HeaderMap::new();
    trailers.insert(
        "grpc-status",
        HeaderValue::from(tonic::Code::Unavailable as i32),
    );
    trailers.insert(
        "grpc-message",
        HeaderValue::from_static(GRPC_DRAINING_MESSAGE),
    );
    trailers
}

/// [`DRAINING_MESSAGE`] percent-encoded as `grpc-message` requires (only spaces and ':' need it).
const GRPC_DRAINING_MESSAGE: &str =
    "this%20replica%20is%20shutting%20down%3A%20reconnect%20to%20another%20replica";

impl<B> HttpBody for DrainedBody<B>
where
    B: HttpBody<Data = Bytes>,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if *this.ended {
            return Poll::Ready(None);
        }
        // What the stream has ready is still delivered (e.g. the NOT_SERVING a health watcher is
        // owed); the stream is cut when it would otherwise wait.
        let frame = this.inner.poll_frame(cx);
        match &frame {
            Poll::Ready(Some(Ok(frame))) if frame.is_trailers() => {
                // The stream has ended on its own; nothing left to cut.
                *this.drained = None;
            }
            Poll::Ready(None) => *this.ended = true,
            Poll::Pending => {
                if let Some(drained) = this.drained.as_mut()
                    && drained.as_mut().poll(cx).is_ready()
                {
                    *this.ended = true;
                    return Poll::Ready(Some(Ok(Frame::trailers(unavailable_trailers()))));
                }
            }
            Poll::Ready(Some(_)) => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.inner.is_end_stream()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grpc_message_is_the_percent_encoded_draining_message() {
        let decoded = GRPC_DRAINING_MESSAGE
            .replace("%20", " ")
            .replace("%3A", ":");
        assert_eq!(decoded, DRAINING_MESSAGE);
    }

    #[tokio::test]
    async fn started_completes_only_after_start() {
        let drain = Drain::new();
        let started = drain.started();
        tokio::pin!(started);
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(20), &mut started)
                .await
                .is_err()
        );
        assert!(!drain.is_draining());
        drain.start();
        assert!(drain.is_draining());
        started.await;
    }
}
