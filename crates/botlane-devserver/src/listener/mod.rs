//! The accept loop every listener shares, in place of `axum::serve`: hyper's
//! HTTP/1 with a timer, so the header-read timeout is active; a bounded
//! number of connections, where a connection waiting for room closes the
//! one idle longest (`idle.rs`); TLS handshakes under the same timeout;
//! upgrades (for `/ws`); and a graceful shutdown with a bounded grace period.

mod idle;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::http::Request;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;

use crate::limits::FOREVER;
use crate::Limits;
use idle::{Activity, IdleConnections, Room};

/// How long the loop backs off after a failed accept (such as too many open
/// files), so it does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How long requests in flight may take to finish once shutdown is asked.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The most bytes of one request's line and headers together, however they
/// arrive: one byte more is answered 431 (hyper checks the head it parsed
/// against it, and a head still incomplete at this size). It also caps
/// hyper's read buffer, which bounds each connection.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The listener's number of the TCP connection a request came on (from 1,
/// in the order accepted), in the request's extensions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionNumber(pub(crate) u64);

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
    let idle = Arc::new(IdleConnections::default());
    let mut accepted_count = 0u64;
    // Every connection task holds a clone of `done`: `recv` returns `None`
    // once the last of them has ended.
    let (done, mut all_done) = mpsc::channel::<()>(1);
    loop {
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
        let Some(permit) = room(&permits, &idle, &mut shutdown).await else {
            break;
        };
        if nodelay {
            let _ = stream.set_nodelay(true);
        }
        accepted_count += 1;
        let connection = Connection {
            router: router.clone(),
            tls: tls.clone(),
            header_read_timeout: limits.header_read_timeout,
            shutdown: shutdown.clone(),
            activity: Activity::new(Arc::clone(&idle)),
            number: ConnectionNumber(accepted_count),
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

/// A place in the budget for a connection just accepted: at once, or, when
/// the budget is full, once a connection ends, the connection idle longest
/// closing to make room (the connections after this one wait in the
/// kernel's backlog meanwhile). `None` once shutdown is asked.
async fn room(
    permits: &Arc<Semaphore>,
    idle: &IdleConnections,
    shutdown: &mut watch::Receiver<bool>,
) -> Option<OwnedSemaphorePermit> {
    loop {
        if let Ok(permit) = Arc::clone(permits).try_acquire_owned() {
            return Some(permit);
        }
        // Enabled first, so that a connection turning idle after the look
        // below is not missed.
        let idled = idle.idled().notified();
        tokio::pin!(idled);
        idled.as_mut().enable();
        let room = idle.make_room();
        let retry = match room {
            Room::At(when) => when,
            // Made: the place comes free as the closed connection ends.
            Room::Made | Room::NoneIdle => crate::limits::deadline(FOREVER),
        };
        tokio::select! {
            permit = Arc::clone(permits).acquire_owned() => return permit.ok(),
            () = stopped(shutdown) => return None,
            () = &mut idled, if room == Room::NoneIdle => {}
            () = tokio::time::sleep_until(retry) => {}
        }
    }
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
    activity: Arc<Activity>,
    number: ConnectionNumber,
    name: &'static str,
}

impl Connection {
    async fn serve(self, stream: TcpStream) {
        let activity = Arc::clone(&self.activity);
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
        activity.end();
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
            .header_read_timeout(self.header_read_timeout.min(FOREVER))
            .max_header_size(MAX_HEADER_BYTES)
            .max_buf_size(MAX_HEADER_BYTES)
            .keep_alive(true);
        let router = TowerToHyperService::new(self.router.clone());
        let (activity, number) = (Arc::clone(&self.activity), self.number);
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(number);
            let busy = activity.begin();
            let answer = router.call(request);
            async move { Ok::<_, Infallible>(busy.track(answer.await?)) }
        });
        let conn = builder
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        tokio::pin!(conn);
        let mut making_room = false;
        let served = loop {
            tokio::select! {
                served = conn.as_mut() => break served,
                () = stopped(&mut self.shutdown) => {
                    // Finish the request in flight, then close; an idle
                    // keep-alive connection closes at once.
                    conn.as_mut().graceful_shutdown();
                    match tokio::time::timeout(SHUTDOWN_GRACE, conn.as_mut()).await {
                        Ok(served) => break served,
                        Err(_) => return,
                    }
                }
                () = self.activity.closed(), if !making_room => {
                    // The same, for a connection waiting for room.
                    making_room = true;
                    conn.as_mut().graceful_shutdown();
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
