//! The bare realtime service of the isolated dispatch benches
//! (`dispatch_isolated`, `dispatch_allocs`): the tests' scripted service
//! (`tests/peer`) over the client's own WebSocket crate (tokio-websockets,
//! server side). It logs a client in (answers op 10, pushes `ready` and the
//! channel key wrapped to the client's identity key), answers every later
//! request with code 0, and on command writes a batch of pre-sealed
//! `message_create` pushes as fast as the socket takes them. A bot and a
//! raw receiver get the same bytes, so the two figures differ only by what
//! reads them.

use std::sync::Arc;

use botlane::crypto::ChannelKey;
use botlane_proto::payload::{
    AccountKind, ChannelInfo, LoginRequest, MessageCreate, Ready, WireMessage,
};
use botlane_proto::{decode_frame, decode_payload, encode_frame, OpCode, MAX_FRAME_BYTES};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_websockets::{Limits, Message, ServerBuilder};

#[path = "../../tests/peer/mod.rs"]
mod peer;

pub(crate) const CHANNEL_ID: &str = "c0ffee00-0000-4000-8000-000000000001";
/// The human who posts every message (never the bot, whose own messages
/// are not dispatched as commands).
pub(crate) const AUTHOR_ID: &str = "a11ce000-0000-4000-8000-000000000002";
pub(crate) const BOT_ID: &str = "b0700000-0000-4000-8000-000000000003";
/// The command the bot registers; [`Mix`] invokes it as `/tick`.
pub(crate) const COMMAND: &str = "tick";
/// The frames a client gets after `ready` and before any batch: the channel key.
pub(crate) const FRAMES_AFTER_READY: u64 = 1;

/// What a batch holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mix {
    /// Plain `hello` and the invocation `/tick` in turn, ending on an
    /// invocation (so that the bot's last handler runs after every plain
    /// message of the batch was dispatched).
    Alternating,
    /// Only `/tick`.
    Invocations,
}

impl Mix {
    fn invokes(self, i: usize) -> bool {
        matches!(self, Mix::Invocations) || i % 2 == 1
    }
}

/// How many pushes a batch holds, and how many of them invoke [`COMMAND`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub(crate) len: usize,
    pub(crate) invocations: u64,
}

impl Shape {
    /// `len` pushes: even, so that [`Mix::Alternating`] ends on an invocation.
    pub(crate) fn new(len: usize, mix: Mix) -> Self {
        assert!(
            len >= 2 && len.is_multiple_of(2),
            "a batch is an even number of pushes"
        );
        let invocations = (0..len).filter(|&i| mix.invokes(i)).count() as u64;
        Self { len, invocations }
    }
}

/// Pre-encoded `message_create` pushes, replayed as they are.
pub(crate) struct Batch {
    frames: Vec<Bytes>,
}

impl Batch {
    /// The pushes of [`Shape::new`]`(len, mix)`, each sealed once with `key`,
    /// each with its own message id.
    pub(crate) fn new(key: &ChannelKey, len: usize, mix: Mix) -> Self {
        let frames = (0..len)
            .map(|i| {
                // "/tick" and "hello" have the same length, so every frame
                // of a batch has the same size.
                let invoke = mix.invokes(i);
                let line = if invoke { "/tick" } else { "hello" };
                let message = WireMessage::new(
                    format!("00000000-0000-4000-8000-{i:012}"),
                    CHANNEL_ID,
                    AUTHOR_ID,
                    key.seal(line.as_bytes(), CHANNEL_ID.as_bytes())
                        .expect("sealing with a fresh key"),
                    1_700_000_000_000 + i as u64,
                );
                Bytes::from(encode_frame(
                    OpCode::MessageCreate,
                    &MessageCreate::new(message),
                ))
            })
            .collect();
        Self { frames }
    }

    /// The size of one push frame (all are the same size).
    pub(crate) fn frame_bytes(&self) -> usize {
        self.frames[0].len()
    }
}

/// One logged-in connection of the service.
pub(crate) struct Session {
    replays: mpsc::Sender<Arc<Batch>>,
}

impl Session {
    /// Has the connection write `batch` (it returns before the writes end).
    pub(crate) async fn replay(&self, batch: &Arc<Batch>) {
        self.replays
            .send(batch.clone())
            .await
            .expect("the session is open");
    }
}

/// The service: a listener on loopback served by a runtime on a thread of
/// its own, so that it does not compete for the workers of the client
/// under test.
pub(crate) struct FakeService {
    pub(crate) url: String,
    /// The channel's key: sealed the batches; a bot gets it wrapped to its
    /// identity key, the raw opener as it is.
    pub(crate) key: Arc<ChannelKey>,
    sessions: mpsc::Receiver<Session>,
}

impl FakeService {
    /// A service whose `ready` lists `others` channels before the bench's.
    pub(crate) fn start(others: usize) -> Self {
        let key = Arc::new(ChannelKey::generate().expect("a random source"));
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let (sessions_tx, sessions) = mpsc::channel(4);
        let (service_key, ready_push) = (key.clone(), ready(others));
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the fake service");
            rt.block_on(async move {
                let (addr, _) = peer::serve(move |tcp, _| {
                    serve(
                        tcp,
                        service_key.clone(),
                        ready_push.clone(),
                        sessions_tx.clone(),
                    )
                })
                .await;
                url_tx
                    .send(format!("ws://{addr}/ws"))
                    .expect("the bench waits");
                std::future::pending::<()>().await;
            });
        });
        let url = url_rx.recv().expect("the service thread starts");
        Self { url, key, sessions }
    }

    pub(crate) fn batch(&self, len: usize, mix: Mix) -> Arc<Batch> {
        Arc::new(Batch::new(&self.key, len, mix))
    }

    /// The next connection to finish its login handshake.
    pub(crate) async fn next_session(&mut self) -> Session {
        self.sessions.recv().await.expect("the service runs")
    }
}

/// Logs the client in (its `ready` is `ready`), then answers it and replays.
async fn serve(
    tcp: TcpStream,
    key: Arc<ChannelKey>,
    ready: String,
    sessions: mpsc::Sender<Session>,
) {
    tcp.set_nodelay(true).expect("TCP_NODELAY");
    let Ok((_request, mut ws)) = ServerBuilder::new()
        .limits(Limits::default().max_payload_len(Some(MAX_FRAME_BYTES)))
        .accept(tcp)
        .await
    else {
        return;
    };
    let Some(Ok(message)) = ws.next().await else {
        return;
    };
    let Some(Ok(frame)) = message.as_text().map(decode_frame) else {
        return;
    };
    assert_eq!(frame.op, 10, "the first frame is the login");
    let Ok(login) = decode_payload::<LoginRequest>(frame.op, frame.d) else {
        return;
    };
    let (replays, mut pending) = mpsc::channel(1);
    // Registered before the login is answered: a client that sees its
    // login done (and the bench that then asks for a replay) always finds
    // its session in place.
    if sessions.send(Session { replays }).await.is_err() {
        return;
    }
    let key_push = peer::key_push(&key, &login.public_key, CHANNEL_ID);
    for frame in [peer::login_accepted(BOT_ID), ready, key_push] {
        if ws.send(Message::text(frame)).await.is_err() {
            return;
        }
    }
    loop {
        tokio::select! {
            incoming = ws.next() => {
                let Some(Ok(message)) = incoming else { return };
                let Some(text) = message.as_text() else { continue };
                let Ok(frame) = decode_frame(text) else { return };
                if ws.send(Message::text(peer::answer(frame.op))).await.is_err() {
                    return;
                }
            }
            batch = pending.recv() => {
                let Some(batch) = batch else { return };
                for frame in &batch.frames {
                    if ws.feed(Message::text(frame.clone())).await.is_err() {
                        return;
                    }
                }
                if ws.flush().await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The `ready` push: `others` channels (their ids as long as the bench's,
/// differing in the last digits), then the bench's.
fn ready(others: usize) -> String {
    let mut channels: Vec<ChannelInfo> = (0..others)
        .map(|i| {
            let id = format!("{}f{i:05}", &CHANNEL_ID[..CHANNEL_ID.len() - 6]);
            // Short, so that 10,000 fit in one frame.
            ChannelInfo::new(id, "s", "o")
        })
        .collect();
    let server_id = "5e7e7000-0000-4000-8000-000000000004";
    channels.push(ChannelInfo::new(CHANNEL_ID, server_id, "bench"));
    encode_frame(
        OpCode::Ready,
        &Ready::new(BOT_ID, "bench", AccountKind::Bot, channels),
    )
}
