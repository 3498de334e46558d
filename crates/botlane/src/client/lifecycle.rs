//! The client's life: login (once, and what becomes of a login given
//! up on), and its end, whether asked for (`shutdown`, `close`) or by
//! dropping its last handle.

use std::sync::Arc;

use futures_util::future::FutureExt;

use super::{Client, Inner, Ready};
use crate::dispatch::Dispatcher;
use crate::error::ClientError;
use crate::session::Session;
use crate::sync::Claim;

impl<D: Send + Sync + 'static> Client<D> {
    /// Opens the keystore (creating the identity on first run), connects,
    /// logs in with the token, publishes the canonical menu and starts
    /// dispatch. An attempt that fails for a reason that may pass (the
    /// service unreachable, busy or restarting) is tried again with the
    /// reconnect backoff and any `Retry-After`, each reported as
    /// [`Event::LoginFailed`](crate::Event::LoginFailed), while the next
    /// can start within [`login_deadline`](crate::ClientOptions::login_deadline);
    /// then the last attempt's error is returned. A refused token
    /// ([`ClientError::LoginRefused`]) or a keystore that cannot be opened
    /// fail at once. [`close`](Self::close) or [`shutdown`](Self::shutdown)
    /// during the wait ends it at once with [`ClientError::NotConnected`];
    /// dropping this future stops the attempts.
    /// Returns once the session is ready and its `ready` push (the
    /// bot's channels) applied, or after `request_timeout` without one (with
    /// a warning; the session is used all the same). A client runs one
    /// session: a second call, also one made while the first is under
    /// way, fails at once with [`ClientError::AlreadyLoggedIn`] (a login
    /// that failed, or whose future was dropped before it returned, may be
    /// retried; dropped once the session was up, while it waited for
    /// `ready`, the session runs on, `Event::Ready` still comes, and the
    /// next call waits for it and returns `Ok`). A client shut down before
    /// `ready` came ends the wait with [`ClientError::NotConnected`]. A
    /// first connection that ends before its `ready` came ends it too,
    /// with `Ok` and [`Event::Ready`](crate::Event::Ready) sent (the
    /// channels not listed yet): the session reconnects as after any
    /// disconnect.
    pub async fn login(&self) -> Result<(), ClientError> {
        let inner = &self.inner;
        let ready = match inner.session.start().await {
            Ok(()) => self.started(),
            // Up: this one may return `Ok` only if the login that brought
            // the session up was given up on (checked by the claim below).
            Err(ClientError::AlreadyLoggedIn) => match inner.ready.get() {
                Some(ready) => ready.clone(),
                None => return Err(ClientError::AlreadyLoggedIn),
            },
            Err(e) => return Err(e),
        };
        // The `Ok` goes to one login: claimed before the wait, so that a
        // second call fails at once instead of racing the first for it, and
        // given back if this login's future is dropped before it returns.
        let Some(claim) = Claim::take(&inner.returned) else {
            return Err(ClientError::AlreadyLoggedIn);
        };
        let up = ready.await;
        claim.keep();
        if up {
            Ok(())
        } else {
            Err(ClientError::NotConnected)
        }
    }

    /// Starts dispatch and the wait for `ready` once the first session is
    /// up, with nothing awaited in between: from here on the session runs
    /// whatever becomes of the login's future. Returns the wait.
    fn started(&self) -> Ready {
        let inner = &self.inner;
        // Allowed (as in poise), and documented, but never what the author
        // meant: said once, where a bot's operator looks first.
        if inner.runner.owners().is_none() {
            for command in inner.commands.snapshot().registered() {
                if command.settings.owners_only {
                    tracing::warn!(
                        command = %command.decl.name,
                        "the command is owners_only and the client has no owners \
                         (ClientOptions::owners): it refuses everyone"
                    );
                }
            }
        }
        let dispatcher = Dispatcher {
            session: inner.session.clone(),
            commands: inner.commands.clone(),
            outbound: self.outbound(),
            runner: inner.runner.clone(),
        };
        tokio::spawn(Arc::new(dispatcher).run());
        let session = inner.session.clone();
        // The service pushes `ready` right after the login reply; dispatch
        // applies it in wire order and sends `Event::Ready` in that step.
        // Waiting for the event makes `channels()` complete when `login`
        // returns. A shutdown ends the wait: no `ready` comes after it,
        // and the task would hold the client's events open until the
        // timeout. The end of the first connection before its `ready` is
        // applied ends it too: the supervisor then sends `Event::Ready`
        // before its `Disconnected`.
        let ready = tokio::spawn(async move {
            let timeout = session.request_timeout();
            tokio::select! {
                biased;
                () = session.until_shutdown() => {}
                ready = tokio::time::timeout(timeout, session.until_announced()) => {
                    if ready.is_err() {
                        // Either no `ready` came, or dispatch is still
                        // busy with what came before it: one bound, one
                        // message that names both.
                        tracing::warn!(
                            "the first ready was not applied within the request timeout \
                             after login (none came, or dispatch is behind)"
                        );
                    }
                }
            }
            // `false`: shut down before `Event::Ready` was sent.
            session.announce_ready()
        });
        let ready = ready.map(|up| up.unwrap_or(false)).boxed().shared();
        // Only the first login's `start` succeeds: the cell is empty here.
        let _ = inner.ready.set(ready.clone());
        ready
    }

    /// Closes the session and stops reconnecting and dispatching. Keystore
    /// changes not yet written (they are coalesced for up to half a second)
    /// are written in the background; use [`close`](Self::close) to wait for
    /// them. Once the connection has ended, every [`Events`](crate::Events)
    /// of the client returns [`EventRecvError::Closed`](crate::EventRecvError::Closed)
    /// after the events it holds, although this handle lives on. Dropping
    /// the last handle of a client (its clones; not its
    /// [`rest`](Self::rest) lane or [`events`](Self::events)) does the same.
    pub fn shutdown(&self) {
        shut_down(&self.inner.session);
        self.inner.report_swallowed();
    }

    /// [`shutdown`](Self::shutdown), then waits until every connection has
    /// written its close frame and let go of its socket (a service that
    /// does not read gets the closing handshake's grace of 1 s, then the
    /// socket is dropped; the wait is at most 2 s), and every keystore
    /// change (a channel key received or evicted) is on disk. A process may exit as soon as it
    /// returns: the service has been told goodbye.
    ///
    /// ```no_run
    /// # async fn demo(client: botlane::Client) -> Result<(), botlane::ClientError> {
    /// client.close().await?;
    /// # Ok(()) }
    /// ```
    pub async fn close(&self) -> Result<(), ClientError> {
        self.shutdown();
        self.inner.session.released().await;
        self.inner.session.close_events();
        match self.inner.session.membership().keystore() {
            Some(saver) => saver.flush().await.map_err(ClientError::Keystore),
            None => Ok(()),
        }
    }
}

/// A client whose last handle is dropped shuts down: its tasks hold the
/// session, not the client, and would otherwise keep it connected (and
/// reconnecting) for as long as the runtime runs, with nobody left to stop
/// it.
impl<D> Drop for Inner<D> {
    fn drop(&mut self) {
        shut_down(&self.session);
        self.report_swallowed();
    }
}

/// What [`Client::shutdown`] does. Once the connections have ended, the
/// subscribers are closed too: the application may still hold the client
/// (an event loop in `main` beside a command that closes the bot), and
/// its events would otherwise never end.
fn shut_down(session: &Session) {
    session.shutdown();
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        session.close_events();
        return;
    };
    runtime.spawn(session.close_events_once_released());
    if let Some(saver) = session.membership().keystore() {
        let saver = saver.clone();
        runtime.spawn(async move {
            if let Err(e) = saver.flush().await {
                tracing::warn!(error = %e, "could not write the keystore at shutdown");
            }
        });
    }
}
