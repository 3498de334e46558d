//! A service that stalls where the client waits on it: it stops reading
//! (the client's writes stall, its close frame too), it never sends
//! `ready` after the login reply, or it ignores the client's close frame.
//! Each wait of the client is bounded, and the client goes on: a new
//! session, a login that returns, a socket that is let go. Over real
//! sockets, against a fake service (`tests/peer`).

#![allow(clippy::unwrap_used)]

use crate::peer;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use botlane::ClientError;
use futures_util::stream::FuturesUnordered;
use futures_util::{SinkExt, StreamExt};
use peer::{
    behave, emojis_after_reconnect, login, next_frame, send, serve, serve_on, upgrade, WAIT,
};
use tokio::io::AsyncReadExt;
use tokio::net::TcpSocket;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

// Two workers: sealing megabytes in a debug build must not starve the
// client's reading (its idle timer) or the service's pushes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_that_stops_reading_is_closed_after_a_stalled_write_and_replaced() {
    // The smallest receive buffer on the service's sockets; the client's
    // send buffer on loopback still takes about 4 MB before a write stalls.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let (addr, accepted) = serve_on(socket.listen(16).unwrap(), |tcp, n| async move {
        let Some((mut ws, _key, key_push)) = peer::first_session_with_key(tcp, n, "c1").await
        else {
            return;
        };
        send(&mut ws, key_push).await;
        // Never read again, but keep the session looking alive: a frame of
        // an unknown opcode (ignored by the client) every 50 ms.
        let (mut tx, _rx) = ws.split();
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if tx
                .send(Message::text(r#"{"op":9999,"d":{}}"#))
                .await
                .is_err()
            {
                return;
            }
        }
    });
    let dir = tempfile::tempdir().unwrap();
    // The write stall (the request timeout after the socket stops taking
    // bytes) must come before the first request written goes unanswered
    // for twice the request timeout: no heartbeats (the service's frames
    // every 50 ms keep the session alive), and the flood written well
    // within one request timeout.
    let options = peer::options(addr, &dir)
        .request_timeout(Duration::from_secs(3))
        .heartbeat_interval(Duration::from_secs(10))
        .idle_timeout(Duration::from_secs(20));
    let client = peer::client(options).await;
    let mut events = client.events();
    // The channel's key is applied once a send waits for its reply
    // instead of failing at once for want of a key.
    let key_applied = async {
        loop {
            let probe = client.send("c1", "probe");
            match tokio::time::timeout(Duration::from_millis(50), probe).await {
                Err(_waiting) => break,
                Ok(Err(ClientError::NoChannelKey { .. })) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Ok(other) => panic!("{other:?}"),
            }
        }
    };
    tokio::time::timeout(WAIT, key_applied)
        .await
        .expect("the channel key is applied");
    // Sealed messages of 80 KB, 1.4 times what the client's send buffer
    // may grow to (the most of `tcp_wmem`, 4 MiB here; the service's
    // receive buffer is fixed above): more than the sockets take while the
    // service reads nothing. At most 256, the requests that may wait to be
    // written.
    let text = "x".repeat(60_000);
    let most = peer::most_of("/proc/sys/net/ipv4/tcp_wmem");
    let sends: Vec<_> = (0..(most * 14 / 10 / 80_000).min(256))
        .map(|_| {
            let (client, text) = (client.clone(), text.clone());
            tokio::spawn(async move { client.send("c1", &text).await })
        })
        .collect();
    let ended = peer::disconnect_reason(&mut events).await;
    assert!(
        ended.contains("writing to the service stalled") && ended.contains("does not read"),
        "{ended}"
    );
    // Every caller is let go (a send that first ran after the reconnect
    // may have been answered by the next session).
    for send in sends {
        tokio::time::timeout(WAIT, send)
            .await
            .expect("each send returns")
            .unwrap()
            .ok();
    }
    assert_eq!(emojis_after_reconnect(&client).await.len(), 1);
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_login_without_ready_returns_after_the_request_timeout() {
    let (addr, _) = serve(|tcp, _| async move {
        let mut ws = upgrade(tcp).await;
        // The login reply, then no `ready`: every request answered.
        if peer::accept_login(&mut ws, 1, None).await.is_some() {
            behave(&mut ws).await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let options = peer::options(addr, &dir).request_timeout(Duration::from_secs(2));
    let client = botlane::Client::new(options).unwrap();
    let login = tokio::time::timeout(WAIT, client.login()).await;
    login.expect("login returns without a ready").unwrap();
    assert!(client.channels().is_empty());
    // The session is up and used.
    assert_eq!(client.fetch_emojis().await.unwrap().len(), 1);
    client.close().await.unwrap();
}

#[tokio::test]
async fn close_sends_a_close_frame_and_lets_go_of_a_service_that_never_answers_it() {
    let (eof_tx, mut eof_rx) = mpsc::channel(1);
    let (addr, _) = serve(move |tcp, n| {
        let eof_tx = eof_tx.clone();
        async move {
            let mut ws = upgrade(tcp).await;
            if login(&mut ws, n, &[]).await.is_none() {
                return;
            }
            // From here the socket is read raw, below the WebSocket layer,
            // which would otherwise answer the client's close frame.
            let _ = eof_tx.send(read_raw_to_eof(&mut ws).await).await;
            // Keep the socket open: only the client may end it.
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // No heartbeat and no idle end before the close: the close is the
    // client's only reason to end the session.
    let options = peer::options(addr, &dir)
        .heartbeat_interval(Duration::from_secs(5))
        .idle_timeout(Duration::from_secs(10));
    // The client runs on a runtime of its own, dropped as soon as `close`
    // returns, as a process that exits then would: what `close` did not
    // wait for never happens.
    on_a_runtime_dropped_after(|| async {
        let client = peer::client(options).await;
        tokio::time::timeout(WAIT, client.close())
            .await
            .expect("close returns")
            .unwrap();
    })
    .await;
    let read = tokio::time::timeout(WAIT, eof_rx.recv())
        .await
        .expect("the client lets the socket go though its close is never answered")
        .unwrap();
    // FIN and opcode 8: the first frame after the login is the close,
    // written before `close` returned.
    assert_eq!(read.first(), Some(&0x88), "{read:?}");
}

/// Everything the client writes on `ws`'s socket until it lets go, read
/// raw (below the WebSocket layer, which would answer a close frame).
async fn read_raw_to_eof(ws: &mut peer::Ws) -> Vec<u8> {
    let tcp = ws.get_mut();
    let mut read = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = tcp.read(&mut buf).await {
        if n == 0 {
            break;
        }
        read.extend_from_slice(&buf[..n]);
    }
    read
}

/// Runs `body` on a runtime of its own, dropped as soon as `body` returns,
/// as a process that exits then would: what the client did not finish by
/// then never happens.
async fn on_a_runtime_dropped_after<F, Fut>(body: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    tokio::task::spawn_blocking(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(body());
    })
    .await
    .unwrap();
}

/// The first byte of each client frame in `read` (masked frames, as a
/// client sends them).
fn frame_starts(read: &[u8]) -> Vec<u8> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at + 2 <= read.len() {
        starts.push(read[at]);
        let (len, header) = match read[at + 1] & 0x7f {
            126 if at + 4 <= read.len() => {
                (u16::from_be_bytes([read[at + 2], read[at + 3]]) as usize, 4)
            }
            127 if at + 10 <= read.len() => {
                let bytes: [u8; 8] = read[at + 2..at + 10].try_into().unwrap();
                (usize::try_from(u64::from_be_bytes(bytes)).unwrap(), 10)
            }
            short => (usize::from(short), 2),
        };
        at += header + 4 + len;
    }
    starts
}

/// A login the application gave up on (its future dropped, as a
/// `select!` against Ctrl-C does) leaves a connection no supervisor
/// watches; `close()` still waits until it has written its close frame.
/// The client's runtime is dropped as soon as `close()` returns.
#[tokio::test]
async fn close_waits_for_the_connection_of_a_login_given_up_on() {
    let (eof_tx, mut eof_rx) = mpsc::channel(1);
    let (addr, _) = serve(move |tcp, _| {
        let eof_tx = eof_tx.clone();
        async move {
            // The login is never answered; the socket is read raw.
            let mut ws = upgrade(tcp).await;
            let _ = eof_tx.send(read_raw_to_eof(&mut ws).await).await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let options = peer::patient(peer::options(addr, &dir));
    on_a_runtime_dropped_after(|| async {
        let client = botlane::Client::new(options).unwrap();
        let gave_up = tokio::time::timeout(Duration::from_millis(300), client.login()).await;
        assert!(gave_up.is_err(), "the login is never answered");
        tokio::time::timeout(WAIT, client.close())
            .await
            .expect("close returns")
            .unwrap();
    })
    .await;
    let read = tokio::time::timeout(WAIT, eof_rx.recv())
        .await
        .expect("the client lets the socket go")
        .unwrap();
    // The login (a text frame), then the close frame (FIN and opcode 8).
    assert_eq!(frame_starts(&read), [0x81, 0x88], "{read:?}");
}

/// A service that logs the bot in and then never reads again, while
/// requests larger together than every socket buffer on the way are being
/// written:
/// the client's send path is full for good, so its close frame can never
/// be written. It proves the close grace (1 s) holds when the socket
/// itself is stalled: the connection task gives up its close and drops the
/// socket. Still not reading, the service sees that as a reset on its own
/// next write (data sent to a closed socket is answered with a reset), no
/// sooner than the grace after the shutdown; a client that waited on the
/// close would keep the socket open and the service's writes would go on
/// succeeding.
#[tokio::test]
async fn close_drops_a_socket_it_cannot_write_its_close_frame_to() {
    // What the client's send buffer and the service's receive buffer may
    // grow to together: a message longer than that stays partly unwritten
    // while the service reads nothing.
    let buffers =
        peer::most_of("/proc/sys/net/ipv4/tcp_wmem") + peer::most_of("/proc/sys/net/ipv4/tcp_rmem");
    let (header_tx, mut header_rx) = mpsc::channel(1);
    let (reset_tx, mut reset_rx) = mpsc::channel(1);
    let (addr, _) = serve(move |tcp, n| {
        let (header_tx, reset_tx) = (header_tx.clone(), reset_tx.clone());
        async move {
            let mut ws = upgrade(tcp).await;
            if login(&mut ws, n, &[]).await.is_none() {
                return;
            }
            // The next frame's header, peeked: the socket is never read
            // again, so its receive window stays shut.
            let mut header = [0u8; 10];
            while ws.get_ref().peek(&mut header).await.unwrap() < header.len() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let _ = header_tx.send(header).await;
            // Frames of an unknown opcode (ignored by the client), until
            // writing fails.
            while send(&mut ws, r#"{"op":9999,"d":{}}"#).await {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let _ = reset_tx.send(Instant::now()).await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // Nothing but the close may end the session: no heartbeat, no idle
    // end, and no write stall detected before the test is over.
    let options = peer::patient(peer::options(addr, &dir));
    let client = peer::client(options).await;
    // History requests with long channel ids (the client checks only that
    // each frame is under the protocol's 1 MiB), enough of them to fill
    // both buffers: the close frame can only come after them.
    let chunk = 1_000_000;
    let requests = usize::try_from(buffers).unwrap() / chunk + 1;
    let history: Vec<_> = (0..requests)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.history(&"x".repeat(chunk), 1).await })
        })
        .collect();
    let header = tokio::time::timeout(WAIT, header_rx.recv())
        .await
        .expect("the long request starts to be written")
        .unwrap();
    // The first frame of a long request: text (the message may be split
    // into frames, so FIN may be clear), masked, with a 64-bit length.
    assert!(
        header[0] & 0x0f == 1 && header[1] == 0x80 | 127,
        "{header:?}"
    );
    let shut_down = Instant::now();
    tokio::time::timeout(WAIT, client.close())
        .await
        .expect("close returns")
        .unwrap();
    // The callers are failed, not left to their 60 s request timeout.
    for request in history {
        let history = tokio::time::timeout(WAIT, request)
            .await
            .expect("the request returns")
            .unwrap();
        assert!(
            matches!(history, Err(ClientError::ConnectionClosed { .. })),
            "{history:?}"
        );
    }
    let reset = tokio::time::timeout(WAIT, reset_rx.recv())
        .await
        .expect("the client drops the socket it cannot write its close frame to")
        .unwrap();
    assert!(
        reset.duration_since(shut_down) >= Duration::from_secs(1),
        "the socket was dropped only after the close grace"
    );
}

/// A caller that gives up on a login (a timeout around `login()`) may call
/// `login()` again: the first attempt is not taken for a session. Its
/// connection is closed (the service reads a close frame), and the second
/// attempt logs in on a connection of its own.
#[tokio::test]
async fn a_login_given_up_on_may_be_tried_again() {
    let (login_read_tx, mut login_read_rx) = mpsc::channel(1);
    let (closed_tx, mut closed_rx) = mpsc::channel(1);
    let (addr, accepted) = serve(move |tcp, n| {
        let login_read_tx = login_read_tx.clone();
        let closed_tx = closed_tx.clone();
        async move {
            let mut ws = upgrade(tcp).await;
            if n > 1 {
                if login(&mut ws, n, &[]).await.is_some() {
                    behave(&mut ws).await;
                }
                return;
            }
            // The first login is read and never answered.
            peer::read_login(&mut ws).await.unwrap();
            let _ = login_read_tx.send(()).await;
            let _ = closed_tx.send(next_frame(&mut ws).await).await;
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    tokio::select! {
        _ = client.login() => panic!("the first login is never answered"),
        _ = login_read_rx.recv() => {}
    }
    let after = tokio::time::timeout(WAIT, closed_rx.recv())
        .await
        .expect("the connection of the login given up on is closed");
    assert_eq!(
        after,
        Some(None),
        "nothing but a close frame follows the login"
    );

    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("the second login returns")
        .expect("the second login succeeds");
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    assert_eq!(client.bot_id().as_deref(), Some("bot-2"));
    let again = client.login().await.unwrap_err();
    assert!(matches!(again, ClientError::AlreadyLoggedIn), "{again}");
    client.close().await.unwrap();
}

/// A close while the login request waits for its reply ends the login with
/// `NotConnected`, as a close at every other step of a login does: it said
/// `SessionEnded` ("the client shut down"), as if the service had ended it.
#[tokio::test]
async fn a_close_while_the_login_waits_for_its_reply_ends_it_with_not_connected() {
    let (login_read_tx, mut login_read_rx) = mpsc::channel(1);
    let (addr, accepted) = serve(move |tcp, _| {
        let login_read_tx = login_read_tx.clone();
        async move {
            let mut ws = upgrade(tcp).await;
            peer::read_login(&mut ws).await.unwrap();
            let _ = login_read_tx.send(()).await;
            // Never answered; read until the client goes.
            while next_frame(&mut ws).await.is_some() {}
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let login = tokio::spawn({
        let client = client.clone();
        async move { client.login().await }
    });
    tokio::time::timeout(WAIT, login_read_rx.recv())
        .await
        .expect("the service reads the login");
    client.close().await.unwrap();
    let ended = tokio::time::timeout(WAIT, login)
        .await
        .expect("the close ends the login")
        .unwrap()
        .unwrap_err();
    assert!(matches!(ended, ClientError::NotConnected), "{ended:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "nothing dialled again");
}

/// A login given up on after its session came up, while it waited for
/// `ready`: the session runs on, so `Event::Ready` still comes when
/// `ready` does, and a login tried again returns `Ok` with it (one login
/// of a client returns `Ok`, never two).
#[tokio::test]
async fn a_login_given_up_on_while_waiting_for_ready_ends_in_one_ready() {
    let (addr, accepted, ready_tx) = ready_on_demand().await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let mut events = client.events();
    tokio::select! {
        _ = client.login() => panic!("no ready yet: the login waits for it"),
        () = peer::eventually("the session is up", || client.stats().sessions == 1) => {}
    }

    let retry = client.login();
    ready_tx.send(()).await.unwrap();
    tokio::time::timeout(WAIT, retry)
        .await
        .expect("the login tried again returns")
        .expect("the login tried again returns Ok: the session it waits for is up");
    assert_eq!(
        client.channels().len(),
        1,
        "ready applied before it returned"
    );
    let readies = tokio::time::timeout(WAIT, async {
        loop {
            if let botlane::Event::Ready { bot_id } = events.recv().await.unwrap() {
                return bot_id;
            }
        }
    })
    .await
    .expect("Event::Ready");
    assert_eq!(readies, "bot-1");
    let again = client.login().await.unwrap_err();
    assert!(matches!(again, ClientError::AlreadyLoggedIn), "{again}");
    while let Ok(Some(event)) = events.try_recv() {
        assert!(!matches!(event, botlane::Event::Ready { .. }), "one Ready");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "one session all along");
    client.close().await.unwrap();
}

/// Answers the login (`bot-1`) and the menu publish, and sends no `ready`.
async fn login_without_ready(ws: &mut peer::Ws) {
    peer::accept_login(ws, 1, None).await.unwrap();
    peer::read_menu(ws).await.unwrap();
    send(ws, r#"{"op":20,"d":{"code":0}}"#).await;
}

/// A service that answers the login and the menu, and sends `ready` (as
/// `bot-1`, in `c1`) only once the test sends on the returned channel;
/// then it behaves.
async fn ready_on_demand() -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    mpsc::Sender<()>,
) {
    let (ready_tx, ready_rx) = mpsc::channel::<()>(1);
    let ready_rx = std::sync::Arc::new(tokio::sync::Mutex::new(ready_rx));
    let (addr, accepted) = serve(move |tcp, _| {
        let ready_rx = ready_rx.clone();
        async move {
            let mut ws = upgrade(tcp).await;
            login_without_ready(&mut ws).await;
            let _ = ready_rx.lock().await.recv().await;
            send(&mut ws, peer::ready("bot-1", &["c1"])).await;
            behave(&mut ws).await;
        }
    })
    .await;
    (addr, accepted, ready_tx)
}

/// A client closed while its login waits for `ready` (which never comes):
/// the login returns `NotConnected` at once rather than after the request
/// timeout (60 s here), no `Event::Ready` is sent after the close, and the
/// subscribers are told the client is gone.
#[tokio::test]
async fn a_close_during_the_wait_for_ready_ends_the_login_and_the_events() {
    let (addr, _) = serve(|tcp, _| async move {
        let mut ws = upgrade(tcp).await;
        login_without_ready(&mut ws).await;
        // No `ready`, ever.
        behave(&mut ws).await;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let mut events = client.events();
    let login = tokio::spawn({
        let client = client.clone();
        async move { client.login().await }
    });
    peer::eventually("the session is up", || client.stats().sessions == 1).await;
    tokio::time::timeout(WAIT, client.close())
        .await
        .expect("close returns")
        .unwrap();
    let login = tokio::time::timeout(WAIT, login)
        .await
        .expect("the login returns once the client is closed")
        .unwrap();
    assert!(matches!(login, Err(ClientError::NotConnected)), "{login:?}");
    drop(client);
    let seen = tokio::time::timeout(WAIT, async {
        let mut seen = Vec::new();
        loop {
            match events.recv().await {
                Ok(event) => seen.push(format!("{event:?}")),
                Err(botlane::EventRecvError::Closed) => return seen,
                Err(lagged) => panic!("{lagged}"),
            }
        }
    })
    .await
    .expect("the subscribers are told the client is gone");
    assert!(!seen.iter().any(|e| e.starts_with("Ready")), "{seen:?}");
}

/// A second `login()` while the first waits for `ready` fails at once with
/// `AlreadyLoggedIn`, and the first, once `ready` comes, returns `Ok`:
/// the second never takes the first one's `Ok` (it used to wait for
/// `ready` beside it and race it for the `Ok`). Two workers, so that both
/// logins run in parallel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_login_during_the_first_fails_at_once_and_leaves_it_its_ok() {
    let (addr, accepted, ready_tx) = ready_on_demand().await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::patient(peer::options(addr, &dir))).unwrap();
    let first = tokio::spawn({
        let client = client.clone();
        async move { client.login().await }
    });
    peer::eventually("the session is up", || client.stats().sessions == 1).await;
    // Before `ready`: the second call does not wait for it.
    let second = tokio::time::timeout(WAIT, client.login())
        .await
        .expect("the second login returns at once");
    assert!(
        matches!(second, Err(ClientError::AlreadyLoggedIn)),
        "{second:?}"
    );
    ready_tx.send(()).await.unwrap();
    let first = tokio::time::timeout(WAIT, first)
        .await
        .expect("the first login returns once ready comes")
        .unwrap();
    assert!(first.is_ok(), "{first:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    client.close().await.unwrap();
}

/// `login()` on a client shut down before it ever logged in fails with
/// `NotConnected` and dials nothing: a `close()` that returned is not
/// followed by a connection.
#[tokio::test]
async fn a_login_after_shutdown_dials_nothing() {
    let (addr, accepted) = peer::serve_well_behaved().await;
    let dir = tempfile::tempdir().unwrap();
    let client = botlane::Client::new(peer::options(addr, &dir)).unwrap();
    client.close().await.unwrap();
    let login = tokio::time::timeout(WAIT, client.login())
        .await
        .expect("the login returns");
    assert!(matches!(login, Err(ClientError::NotConnected)), "{login:?}");
    // Long enough for a connection made by the login to be accepted.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "nothing dialled");
}

/// Waits until the client's writes on `tcp` have stalled: the bytes
/// waiting to be read there, peeked, have stopped growing for half a
/// second.
async fn until_writes_stall(tcp: &tokio::net::TcpStream) {
    let mut buf = vec![0u8; 64 << 20];
    let (mut last, mut same) = (0, 0);
    while same < 10 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let waiting = tcp.peek(&mut buf).await.unwrap();
        if waiting > 0 && waiting == last {
            same += 1;
        } else {
            (last, same) = (waiting, 0);
        }
    }
}

/// Requests made while a connection is closing: the service closed it and
/// reads nothing more, so the client's close frame waits behind a request
/// half written, for up to the close grace (1 s). Those still waiting to
/// be written and a new one fail at once, not when the grace is over: the
/// service, reading again only once the test has every failure, still
/// receives the client's close frame (the client had not let go of the
/// socket). A REST mint (opcode 638) asked for then goes to the next
/// connection, as one asked for while the client is disconnected does.
/// They used to wait for the closing handshake to end (the grace, here),
/// and the mint failed with the closed connection.
#[tokio::test]
async fn requests_made_while_a_connection_closes_fail_at_once_and_a_mint_waits_for_the_next() {
    // What the client's send buffer and the service's receive buffer may
    // grow to together: requests longer than that stay partly unwritten.
    let buffers =
        peer::most_of("/proc/sys/net/ipv4/tcp_wmem") + peer::most_of("/proc/sys/net/ipv4/tcp_rmem");
    let (closed_tx, mut closed) = mpsc::channel::<()>(1);
    let (read_tx, read) = mpsc::channel::<()>(1);
    let read = Arc::new(tokio::sync::Mutex::new(read));
    let (raw_tx, mut raw) = mpsc::channel::<Vec<u8>>(1);
    let (login_tx, take_login) = mpsc::channel::<()>(1);
    let take_login = Arc::new(tokio::sync::Mutex::new(take_login));
    let (minted_tx, mut minted) = mpsc::unbounded_channel::<usize>();
    let (addr, _) = serve(move |tcp, n| {
        let (closed_tx, read, raw_tx) = (closed_tx.clone(), read.clone(), raw_tx.clone());
        let (take_login, minted_tx) = (take_login.clone(), minted_tx.clone());
        async move {
            let mut ws = upgrade(tcp).await;
            if n == 1 {
                if login(&mut ws, n, &[]).await.is_none() {
                    return;
                }
                until_writes_stall(ws.get_ref()).await;
                let _ = ws.close(None).await;
                closed_tx.send(()).await.unwrap();
                let _ = read.lock().await.recv().await;
                let _ = raw_tx.send(read_raw_to_eof(&mut ws).await).await;
                return;
            }
            // The next session is held until the test says.
            let _ = take_login.lock().await.recv().await;
            if login(&mut ws, n, &[]).await.is_none() {
                return;
            }
            while let Some(frame) = next_frame(&mut ws).await {
                let op = frame["op"].as_u64().unwrap();
                let code = if op == 638 {
                    minted_tx.send(n).unwrap();
                    -7
                } else {
                    0
                };
                if !send(&mut ws, format!(r#"{{"op":{op},"d":{{"code":{code}}}}}"#)).await {
                    return;
                }
            }
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // Nothing but the service may end the session: no heartbeat, no idle
    // end, no write stall detected within the test.
    let options = peer::patient(peer::options(addr, &dir)).rest_url("http://127.0.0.1:1");
    let client = peer::client(options).await;
    // History requests with long channel ids, enough to fill both buffers.
    let chunk = 1_000_000;
    let requests = usize::try_from(buffers).unwrap() / chunk + 2;
    let mut history: FuturesUnordered<_> = (0..requests)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.history(&"x".repeat(chunk), 1).await })
        })
        .collect();
    tokio::time::timeout(WAIT, closed.recv())
        .await
        .expect("the client's writes stall")
        .unwrap();
    // The request being written fails as the connection ends.
    let first = tokio::time::timeout(WAIT, history.next())
        .await
        .expect("a request fails as the connection ends")
        .unwrap()
        .unwrap();
    assert!(
        matches!(first, Err(ClientError::ConnectionClosed { .. })),
        "{first:?}"
    );
    // The connection is closing: its close frame cannot be written.
    let emojis = tokio::time::timeout(WAIT, client.fetch_emojis())
        .await
        .expect("the request returns");
    let mint = tokio::spawn({
        let lane = client.rest();
        async move {
            lane.request(botlane::rest::Method::GET, "/api/files/list", None)
                .await
                .err()
        }
    });
    while let Some(request) = tokio::time::timeout(WAIT, history.next())
        .await
        .expect("each request returns")
    {
        let request = request.unwrap();
        assert!(
            matches!(request, Err(ClientError::ConnectionClosed { .. })),
            "{request:?}"
        );
    }
    assert!(
        matches!(emojis, Err(ClientError::NotConnected)),
        "{emojis:?}"
    );
    read_tx.send(()).await.unwrap();
    let raw = tokio::time::timeout(WAIT, raw.recv())
        .await
        .expect("the client lets the socket go")
        .unwrap();
    assert_eq!(
        frame_starts(&raw).last(),
        Some(&0x88),
        "the client's close frame, written once the service read again: the failures came \
         during the closing handshake"
    );

    login_tx.send(()).await.unwrap();
    let mint = tokio::time::timeout(WAIT, mint)
        .await
        .expect("the mint is answered")
        .unwrap();
    assert!(
        mint.as_ref().is_some_and(botlane::RestError::is_lane_off),
        "{mint:?}"
    );
    assert_eq!(minted.try_recv(), Ok(2), "asked on the next connection");
    client.close().await.unwrap();
}
