//! A socket that counts the bytes it has written, so that the reader loop
//! can tell a client whose socket takes nothing more from one that reads.
//!
//! The WebSocket layer queues a pong for every ping it reads, whether or
//! not the client reads; the ping budget (`botlane_proto::ping`) bounds a
//! flood, and this count bounds a slow drip: a connection that received
//! more than [`MAX_PINGS_UNWRITTEN`] pings while its socket took no byte is
//! closed (see `connection.rs`).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Pings a connection may send while its socket takes no byte from the
/// service; the next closes it with 1008. A client that reads has each
/// pong written before its next ping is read, so it never gets near.
pub(crate) const MAX_PINGS_UNWRITTEN: u32 = 8;

/// `T`, counting the bytes written to it.
pub(crate) struct Written<T> {
    inner: T,
    written: Arc<AtomicU64>,
}

impl<T> Written<T> {
    pub(crate) fn new(inner: T) -> Self {
        Self {
            inner,
            written: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The count, shared: it goes on growing as the socket is written.
    pub(crate) fn counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.written)
    }

    fn count(&self, poll: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = poll {
            self.written.fetch_add(n as u64, Ordering::Relaxed);
        }
        poll
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Written<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Written<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.count(poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.count(poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Counts the pings of one connection against the bytes its socket took.
#[derive(Debug)]
pub(crate) struct Unwritten {
    counter: Arc<AtomicU64>,
    seen: u64,
    pings: u32,
}

impl Unwritten {
    pub(crate) fn new(counter: Arc<AtomicU64>) -> Self {
        Self {
            counter,
            seen: 0,
            pings: 0,
        }
    }

    /// Counts a ping; `false` when more than [`MAX_PINGS_UNWRITTEN`] came
    /// since the socket last took a byte.
    pub(crate) fn ping(&mut self) -> bool {
        let now = self.counter.load(Ordering::Relaxed);
        if now != self.seen {
            self.seen = now;
            self.pings = 0;
        }
        self.pings += 1;
        self.pings <= MAX_PINGS_UNWRITTEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pings_count_only_while_the_socket_takes_nothing() {
        let counter = Arc::new(AtomicU64::new(0));
        let mut unwritten = Unwritten::new(Arc::clone(&counter));
        for _ in 0..MAX_PINGS_UNWRITTEN {
            assert!(unwritten.ping());
        }
        // A byte written since the last ping starts the count again.
        counter.fetch_add(1, Ordering::Relaxed);
        for _ in 0..MAX_PINGS_UNWRITTEN {
            assert!(unwritten.ping());
        }
        assert!(!unwritten.ping(), "one more with nothing written");
        assert!(!unwritten.ping());
    }

    #[tokio::test]
    async fn the_count_is_the_bytes_the_inner_socket_took() {
        use tokio::io::AsyncWriteExt;
        let (near, _far) = tokio::io::duplex(4);
        let mut written = Written::new(near);
        let counter = written.counter();
        written.write_all(b"abc").await.unwrap();
        assert_eq!(counter.load(Ordering::Relaxed), 3);
        // The pipe holds four bytes and nobody reads: one more is taken,
        // the rest waits, uncounted.
        let more = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            written.write_all(b"defg"),
        )
        .await;
        assert!(more.is_err(), "the pipe is full");
        assert_eq!(counter.load(Ordering::Relaxed), 4);
    }
}
