//! One `write` per burst: a connection wrapper that gathers what HTTP/2 writes in one turn of
//! the runtime and hands it to the socket at once.
//!
//! Why: hyper and h2 flush as soon as a connection's task has nothing more to do, and a gRPC call
//! is assembled by two tasks, the connection's and the call's. So a server's answer leaves as two
//! writes (headers and message, then the trailers a moment later) and a client's request as two
//! more (headers, then the message). On loopback and on virtual machines each write that finds
//! the peer asleep wakes it; the peer reads half a call, sleeps and is woken again. Measured on
//! the 2-core benchmark machine (`strace` of `scripts/bench-load.sh` with one game), every call
//! cost four writes and up to four wake-ups instead of two.
//!
//! [`Coalesced`] keeps what is written and, when asked to flush, first lets every other task that
//! is ready run: the call's task adds its part, and the whole burst then goes out in one write.
//! Under load, a connection's flush waits for the runtime's other ready tasks, so many calls'
//! frames share a write. What is buffered is bounded (`PASS_ON_AT`); a flush always ends with
//! everything handed to the socket.
//!
//! The turn is given by the task waking itself and answering "not yet" once, which puts it at
//! the back of the runtime's queue of ready tasks. Not by [`tokio::task::yield_now`]: that also
//! makes the runtime poll its I/O driver before the task runs again, a system call (`epoll_wait`)
//! per flush that an idle connection pays on every call, and a boxed future per flush.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The most bytes held: a write takes only what fits below it, and a full buffer is handed on
/// before more is taken, so a large message goes out in pieces rather than being copied whole.
const PASS_ON_AT: usize = 64 * 1024;

/// A connection whose writes are gathered until a flush, and whose flush first gives the
/// runtime's other ready tasks their turn (see the module docs). Reads pass straight through.
pub struct Coalesced<T> {
    inner: T,
    /// Bytes written and not yet handed to `inner`; `pending[handed..]` is what is left.
    pending: Vec<u8>,
    handed: usize,
    flush: FlushState,
}

/// Where a flush stands.
enum FlushState {
    /// No flush under way.
    Idle,
    /// Woken and waiting behind the runtime's other ready tasks.
    GivingWay,
    /// Handing the bytes to the socket; no second turn is given.
    HandingOn,
}

impl<T> Coalesced<T> {
    /// Gathers the writes to `inner`.
    pub fn new(inner: T) -> Self {
        Coalesced {
            inner,
            pending: Vec::new(),
            handed: 0,
            flush: FlushState::Idle,
        }
    }
}

impl<T: AsyncWrite + Unpin> Coalesced<T> {
    /// Hands every pending byte to `inner`.
    fn poll_hand_on(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.handed < self.pending.len() {
            let written =
                ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.handed..]))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.handed += written;
        }
        self.pending.clear();
        self.handed = 0;
        Poll::Ready(Ok(()))
    }

    /// How many more bytes may be taken, handing the pending ones on first when the buffer is
    /// full ([`PASS_ON_AT`]); never 0 once ready.
    fn poll_room(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.pending.len() >= PASS_ON_AT {
            ready!(self.poll_hand_on(cx))?;
        }
        Poll::Ready(Ok(PASS_ON_AT - self.pending.len()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Coalesced<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let room = ready!(this.poll_room(cx))?;
        let taken = &buf[..buf.len().min(room)];
        this.pending.extend_from_slice(taken);
        Poll::Ready(Ok(taken.len()))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut room = ready!(this.poll_room(cx))?;
        let mut taken = 0;
        for buf in bufs {
            let part = &buf[..buf.len().min(room)];
            this.pending.extend_from_slice(part);
            taken += part.len();
            room -= part.len();
            if room == 0 {
                break;
            }
        }
        Poll::Ready(Ok(taken))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.pending.is_empty() {
            this.flush = FlushState::Idle;
            return Pin::new(&mut this.inner).poll_flush(cx);
        }
        loop {
            match &mut this.flush {
                FlushState::Idle => {
                    // Back of the queue: every task already ready runs before this flush goes on.
                    this.flush = FlushState::GivingWay;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                FlushState::GivingWay => {
                    this.flush = FlushState::HandingOn;
                }
                FlushState::HandingOn => {
                    ready!(this.poll_hand_on(cx))?;
                    this.flush = FlushState::Idle;
                    return Pin::new(&mut this.inner).poll_flush(cx);
                }
            }
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // Closing gives no turn away: what is pending goes first, then the close.
        ready!(this.poll_hand_on(cx))?;
        this.flush = FlushState::Idle;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Coalesced<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

/// The server reads who is calling (the peer's address, for the per-address limits) from the
/// connection underneath.
impl<T: tonic::transport::server::Connected> tonic::transport::server::Connected for Coalesced<T> {
    type ConnectInfo = T::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

/// The client side: the HTTP connector tonic's `Endpoint::connect` uses (TCP_NODELAY on), each
/// connection it makes [`Coalesced`], for `Endpoint::connect_with_connector`. Tonic layers the
/// endpoint's connect timeout around it and its TLS, when it has one, on top, so the encrypted
/// records are the ones gathered.
#[derive(Clone)]
pub struct Connector {
    http: hyper_util::client::legacy::connect::HttpConnector,
}

impl Default for Connector {
    fn default() -> Self {
        let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
        // The scheme may be https: TLS is tonic's layer above this one.
        http.enforce_http(false);
        // Small request/response exchanges: without it, Nagle and delayed ACKs add ~40 ms.
        http.set_nodelay(true);
        Connector { http }
    }
}

impl tower_service::Service<http::Uri> for Connector {
    type Response = hyper_util::rt::TokioIo<Coalesced<tokio::net::TcpStream>>;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let connecting = self.http.call(uri);
        Box::pin(async move {
            let stream = connecting.await?.into_inner();
            Ok(hyper_util::rt::TokioIo::new(Coalesced::new(stream)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A socket stand-in that records each write it is given; it takes at most `limit` bytes per
    /// write and, when `stalls`, answers every other write "not now" (as a full socket does).
    #[derive(Default)]
    struct Recorder {
        writes: Vec<Vec<u8>>,
        limit: Option<usize>,
        stalls: bool,
        stalled_last: bool,
        shut: bool,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            if this.stalls && !this.stalled_last {
                this.stalled_last = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            this.stalled_last = false;
            let taken = buf.len().min(this.limit.unwrap_or(usize::MAX));
            this.writes.push(buf[..taken].to_vec());
            Poll::Ready(Ok(taken))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.get_mut().shut = true;
            Poll::Ready(Ok(()))
        }
    }

    fn everything(recorder: &Recorder) -> Vec<u8> {
        recorder.writes.concat()
    }

    #[tokio::test]
    async fn writes_before_a_flush_leave_in_one_write() {
        let mut connection = Coalesced::new(Recorder::default());
        connection.write_all(b"headers ").await.unwrap();
        let written = connection
            .write_vectored(&[io::IoSlice::new(b"message "), io::IoSlice::new(b"trailers")])
            .await
            .unwrap();
        assert_eq!(written, 16, "a vectored write is taken whole");
        assert!(
            connection.inner.writes.is_empty(),
            "nothing leaves before a flush"
        );
        connection.flush().await.unwrap();
        assert_eq!(
            connection.inner.writes,
            [b"headers message trailers".to_vec()]
        );
        // A flush with nothing pending writes nothing.
        connection.flush().await.unwrap();
        assert_eq!(connection.inner.writes.len(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn what_another_ready_task_adds_during_a_flush_leaves_with_it() {
        // The h2 pattern: the connection's task flushes; the call's task, ready at that moment,
        // hands over the trailers; the connection's task writes them and flushes again.
        let (trailers_in, mut trailers) = tokio::sync::mpsc::unbounded_channel::<&[u8]>();
        tokio::spawn(async move {
            trailers_in.send(b" trailers").unwrap();
        });
        let mut connection = Coalesced::new(Recorder::default());
        connection.write_all(b"headers message").await.unwrap();
        std::future::poll_fn(|cx| {
            while let Poll::Ready(Some(frame)) = trailers.poll_recv(cx) {
                let written = ready!(Pin::new(&mut connection).poll_write(cx, frame))?;
                assert_eq!(written, frame.len());
            }
            Pin::new(&mut connection).poll_flush(cx)
        })
        .await
        .unwrap();
        assert_eq!(
            connection.inner.writes,
            [b"headers message trailers".to_vec()],
            "the other task's frame joined the burst"
        );
    }

    #[tokio::test]
    async fn a_large_message_is_handed_on_in_pieces_and_in_order() {
        let message: Vec<u8> = (0..5 * PASS_ON_AT).map(|i| (i % 251) as u8).collect();
        let mut connection = Coalesced::new(Recorder {
            limit: Some(10_000),
            stalls: true,
            ..Recorder::default()
        });
        for piece in message.chunks(1_000) {
            connection.write_all(piece).await.unwrap();
            assert!(
                connection.pending.len() - connection.handed <= PASS_ON_AT + 1_000,
                "the buffer stays bounded"
            );
        }
        assert!(
            !connection.inner.writes.is_empty(),
            "a large message does not wait for the flush"
        );
        connection.flush().await.unwrap();
        assert_eq!(everything(&connection.inner), message);
        assert!(connection.pending.is_empty());
    }

    #[tokio::test]
    async fn one_huge_write_is_taken_only_up_to_the_bound() {
        let message = vec![7u8; 3 * PASS_ON_AT + 5];
        let mut connection = Coalesced::new(Recorder::default());
        let taken = connection.write(&message).await.unwrap();
        assert_eq!(taken, PASS_ON_AT, "the rest is the writer's to offer again");
        let slices = [io::IoSlice::new(&message), io::IoSlice::new(&message)];
        assert_eq!(
            connection.write_vectored(&slices).await.unwrap(),
            PASS_ON_AT
        );
        assert!(connection.pending.len() <= PASS_ON_AT);
        connection.write_all(&message).await.unwrap();
        connection.flush().await.unwrap();
        assert_eq!(
            everything(&connection.inner).len(),
            2 * PASS_ON_AT + message.len()
        );
    }

    #[tokio::test]
    async fn closing_hands_on_what_is_pending_first() {
        let mut connection = Coalesced::new(Recorder {
            stalls: true,
            ..Recorder::default()
        });
        connection.write_all(b"last words").await.unwrap();
        connection.shutdown().await.unwrap();
        assert_eq!(everything(&connection.inner), b"last words");
        assert!(connection.inner.shut);
    }

    #[tokio::test]
    async fn a_real_connection_carries_every_byte() {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let reader = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut received = Vec::new();
            socket.read_to_end(&mut received).await.unwrap();
            received
        });
        let mut connection = Coalesced::new(tokio::net::TcpStream::connect(address).await.unwrap());
        let mut sent = Vec::new();
        for round in 0..50u32 {
            let frame = vec![(round % 256) as u8; (round as usize * 997) % 20_000];
            connection.write_all(&frame).await.unwrap();
            sent.extend_from_slice(&frame);
            if round % 3 == 0 {
                connection.flush().await.unwrap();
            }
        }
        connection.shutdown().await.unwrap();
        assert_eq!(reader.await.unwrap(), sent);
    }
}
