//! The accept loop both listeners share, in place of `axum::serve`: hyper's
//! HTTP/1 with a timer, so the header-read timeout is active; a bounded
//! number of connections; TLS handshakes under the same timeout; upgrades
//! (for `/ws`); and a graceful shutdown with a bounded grace period.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio_rustls::TlsAcceptor;

use crate::Limits;

/// How long the loop backs off after a failed accept (such as too many open
/// files), so it does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How long requests in flight may take to finish once shutdown is asked.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The most bytes hyper buffers for one request's headers (its minimum is
/// 8 KiB): bounds each connection and each recorded request.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// One listener: what it serves and how.
pub(crate) struct Listener {
    pub(crate) tcp: TcpListener,
    pub(crate) tls: Option<TlsAcceptor>,
    pub(crate) router: Router,
    /// Turn Nagle off on every connection (the realtime wire's small frames).
    pub(crate) nodelay: bool,
    /// For the logs: `realtime` or `rest`.
    pub(crate) name: &'static str,
}

/// Serves `listener` until `shutdown` turns true, then gives the requests in
/// flight [`SHUTDOWN_GRACE`] to finish. Upgraded connections (WebSockets)
/// live on in their own tasks and end by their own shutdown path.
pub(crate) async fn serve(listener: Listener, limits: Limits, mut shutdown: watch::Receiver<bool>) {
    let Listener {
        tcp,
        tls,
        router,
        nodelay,
        name,
    } = listener;
    let permits = Arc::new(Semaphore::new(limits.http_connections));
    // Every connection task holds a clone of `done`: `recv` returns `None`
    // once the last of them has ended.
    let (done, mut all_done) = mpsc::channel::<()>(1);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = stopped(&mut shutdown) => break,
        };
        let accepted = tokio::select! {
            accepted = tcp.accept() => accepted,
            () = stopped(&mut shutdown) => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::debug!(listener = name, error = %e, "accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        if nodelay {
            let _ = stream.set_nodelay(true);
        }
        let connection = Connection {
            router: router.clone(),
            tls: tls.clone(),
            header_read_timeout: limits.header_read_timeout,
            shutdown: shutdown.clone(),
            name,
        };
        let done = done.clone();
        tokio::spawn(async move {
            connection.serve(stream).await;
            drop(permit);
            drop(done);
        });
    }
    drop(done);
    if tokio::time::timeout(SHUTDOWN_GRACE, all_done.recv())
        .await
        .is_err()
    {
        tracing::warn!(
            listener = name,
            "requests still in flight after the shutdown grace"
        );
    }
    tracing::info!(listener = name, "listener stopped");
}

/// Resolves once `shutdown` turns true (or its sender, the handle, is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// What one accepted connection needs.
struct Connection {
    router: Router,
    tls: Option<TlsAcceptor>,
    header_read_timeout: Duration,
    shutdown: watch::Receiver<bool>,
    name: &'static str,
}

impl Connection {
    async fn serve(self, stream: TcpStream) {
        match self.tls.clone() {
            None => self.http(stream).await,
            Some(acceptor) => {
                // A silent or slow client may not hold a connection through
                // its handshake: the same bound as for a request's headers.
                match tokio::time::timeout(self.header_read_timeout, acceptor.accept(stream)).await
                {
                    Ok(Ok(tls)) => self.http(tls).await,
                    Ok(Err(e)) => {
                        tracing::debug!(listener = self.name, error = %e, "tls handshake failed");
                    }
                    Err(_) => {
                        tracing::debug!(listener = self.name, "tls handshake timed out");
                    }
                }
            }
        }
    }

    async fn http<S>(mut self, stream: S)
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            // hyper adds it to an `Instant` unchecked: `Duration::MAX`
            // panicked its connection task.
            .header_read_timeout(self.header_read_timeout.min(crate::limits::FOREVER))
            .max_buf_size(MAX_HEADER_BYTES)
            .keep_alive(true);
        let service = TowerToHyperService::new(self.router.clone());
        let conn = builder
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        tokio::pin!(conn);
        let served = tokio::select! {
            served = conn.as_mut() => served,
            () = stopped(&mut self.shutdown) => {
                // Finish the request in flight, then close; an idle
                // keep-alive connection closes at once.
                conn.as_mut().graceful_shutdown();
                match tokio::time::timeout(SHUTDOWN_GRACE, conn.as_mut()).await {
                    Ok(served) => served,
                    Err(_) => return,
                }
            }
        };
        if let Err(e) = served {
            // Header timeouts, malformed requests and resets from clients:
            // the kind only, never what was read.
            tracing::debug!(listener = self.name, error = %e, "connection ended with an error");
        }
    }
}
