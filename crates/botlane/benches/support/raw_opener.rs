//! A third receiver for the isolated dispatch benches: a raw client that
//! does with each push what any receiver of it must do (its JSON read, its
//! content opened) with the crates the bot uses and none of the bot's
//! code. Its throughput is the floor of a bot built on those crates, on
//! one task. [`Reader::Lean`] adds what the leanest bot must do on top,
//! [`Reader::Kept`] what issue 32 keeps of a bot on top of that.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce, Tag};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use botlane::{CommandDeclaration, CommandInvocation, CommandRegistry, TextParseResult};
use botlane_proto::crypto::{NONCE_LEN, TAG_LEN};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::sync::{broadcast, Semaphore};

use crate::fake_service::{Shape, BOT_ID, CHANNEL_ID, COMMAND, FRAMES_AFTER_READY};
use crate::progress::Progress;
use crate::raw_client;
use crate::receivers::BATCH_LIMIT;

/// A raw client that, for every frame it reads, parses the frame's JSON
/// with serde_json (every field of a `message_create` push, strings
/// borrowed from the frame, as the bot's view reads it), decodes the
/// content's base64 into a buffer it reuses and opens it in place with
/// AES-256-GCM (aes-gcm, the cipher made once, the channel id as
/// associated data). One task, nothing spawned, nothing queued, no
/// allocation per frame but the WebSocket crate's: what any receiver must
/// do, done as cheaply as these crates allow.
pub(crate) struct RawOpener {
    pub(crate) frames: Arc<Progress>,
    /// Pushes whose content opened to one of the two lines of a batch.
    opened: Arc<AtomicU64>,
}

/// A `message_create` frame, read in one pass: `{"op":…,"d":{"message":{…}}}`.
#[derive(Deserialize)]
struct PushFrame<'a> {
    #[allow(dead_code)]
    op: u16,
    #[serde(borrow)]
    d: PushPayload<'a>,
}

#[derive(Deserialize)]
struct PushPayload<'a> {
    #[serde(borrow)]
    message: PushMessage<'a>,
}

#[derive(Deserialize)]
struct PushMessage<'a> {
    id: &'a str,
    channel_id: &'a str,
    author_id: &'a str,
    content: &'a str,
    #[allow(dead_code)]
    created_at: u64,
}

/// How a [`RawOpener`] reads a frame.
#[derive(Clone, Copy)]
pub(crate) enum Reader {
    /// serde_json, strings borrowed (the floor as it was first set).
    Serde,
    /// `botlane_proto::read_message_push`, serde_json for any other
    /// spelling (the bot's own reading).
    OnePass,
    /// [`Reader::OnePass`], then what the leanest bot does with an opened
    /// message (issue 32's prototype): its author checked against the
    /// bot's id, its line decided by the public `parse_from_text`, and an
    /// invocation's message built of four owned strings and handed to a
    /// handler, called in place. No panic isolation, no permit, no pace,
    /// no event, no context.
    Lean,
    /// [`Reader::Lean`] with what issue 32 keeps of a bot, each done as
    /// cheaply as its crate allows: the push's channel found (the last one
    /// remembered), an invocation's clock read at its start and its end, a
    /// handler permit, its message shared (`Arc`) in a context with the
    /// bot's data, registry and answering handle, an event offered to
    /// nobody, a span, the registered handler's boxed future polled once in
    /// place under `catch_unwind` (it never waits: a bot sets a timer only
    /// for one that does), its no-op metrics recorded.
    Kept,
}

/// What [`Reader::Lean`] hands its handler, and [`Reader::Kept`] shares
/// with its handler's context.
struct LeanMessage {
    id: String,
    channel_id: String,
    author_id: String,
    content: String,
}

/// A handler as a bot keeps one: type-erased, its future boxed.
type KeptHandler = Arc<
    dyn Fn(KeptContext) -> Pin<Box<dyn Future<Output = Result<(), std::io::Error>> + Send>>
        + Send
        + Sync,
>;

/// A handle a context answers through (the bot's is its client's).
type Outbound = Arc<dyn std::any::Any + Send + Sync>;

/// What [`Reader::Kept`] hands its handler: the message shared, the
/// invocation, the bot's data, registry and outbound handle.
struct KeptContext {
    message: Arc<LeanMessage>,
    invocation: CommandInvocation,
    data: Arc<()>,
    registry: Arc<CommandRegistry>,
    outbound: Outbound,
}

/// The lean bot with what issue 32 keeps of a bot ([`Reader::Kept`]).
struct Kept {
    registry: Arc<CommandRegistry>,
    /// The bot's channels, as a bot finds a push's, and the last one found,
    /// which the next push is looked for first.
    channels: HashSet<String>,
    last: RefCell<String>,
    data: Arc<()>,
    outbound: Outbound,
    permits: Arc<Semaphore>,
    /// Nobody listens: an event is offered, not built.
    events: broadcast::Sender<Arc<LeanMessage>>,
    handler: KeptHandler,
    /// The metrics of a bot with no recorder installed.
    handled: metrics::Counter,
    took: metrics::Histogram,
    /// The last invocation's message, emptied, when nobody else holds it
    /// (as the bot keeps one).
    spare: Cell<Option<Arc<LeanMessage>>>,
}

impl Kept {
    fn new(registry: CommandRegistry) -> Self {
        Self {
            registry: Arc::new(registry),
            channels: HashSet::from([CHANNEL_ID.to_owned()]),
            last: RefCell::default(),
            data: Arc::new(()),
            outbound: Arc::new(()),
            permits: Arc::new(Semaphore::new(64)),
            events: broadcast::channel(16).0,
            handler: Arc::new(|ctx| {
                Box::pin(async move {
                    let ctx = std::hint::black_box(ctx);
                    let _ = (&ctx.data, &ctx.registry, &ctx.outbound);
                    if ctx.message.content.is_empty() || ctx.invocation.name.is_empty() {
                        return Err(std::io::Error::other("an empty invocation"));
                    }
                    Ok(())
                })
            }),
            handled: metrics::Counter::noop(),
            took: metrics::Histogram::noop(),
            spare: Cell::new(None),
        }
    }

    /// Whether the bot is in `channel_id` (the last channel found first).
    fn find(&self, channel_id: &str) -> bool {
        let mut last = self.last.borrow_mut();
        if *last == channel_id {
            return true;
        }
        if !self.channels.contains(channel_id) {
            return false;
        }
        channel_id.clone_into(&mut last);
        true
    }

    /// [`lean_dispatch`] with what the issue keeps; `true` as there.
    fn dispatch(&self, push: &PushMessage<'_>, line: &[u8]) -> bool {
        let Ok(line) = std::str::from_utf8(line) else {
            return false;
        };
        if push.author_id == BOT_ID || !self.find(push.channel_id) {
            return false;
        }
        let invocation = match self.registry.parse_from_text(line, None) {
            TextParseResult::Ok(invocation) if invocation.name == COMMAND => invocation,
            TextParseResult::None => return line == "hello",
            _ => return false,
        };
        let began = tokio::time::Instant::now();
        let Ok(permit) = self.permits.clone().try_acquire_owned() else {
            return false;
        };
        let mut message = self.spare.take().unwrap_or_else(|| {
            Arc::new(LeanMessage {
                id: String::new(),
                channel_id: String::new(),
                author_id: String::new(),
                content: String::new(),
            })
        });
        let m = Arc::get_mut(&mut message).expect("a spare is kept only when nobody holds it");
        for (to, from) in [
            (&mut m.id, push.id),
            (&mut m.channel_id, push.channel_id),
            (&mut m.author_id, push.author_id),
            (&mut m.content, line),
        ] {
            to.push_str(from);
        }
        if self.events.receiver_count() > 0 {
            let _ = self.events.send(message.clone());
        }
        let span = tracing::info_span!("command", command = %invocation.name);
        let _entered = span.enter();
        let mut future = (self.handler)(KeptContext {
            message: message.clone(),
            invocation,
            data: self.data.clone(),
            registry: self.registry.clone(),
            outbound: self.outbound.clone(),
        });
        // Polled in place; a timer would be set only if it waited.
        let mut cx = Context::from_waker(Waker::noop());
        let polled = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)));
        drop(future);
        self.handled.increment(1);
        self.took.record(began.elapsed().as_secs_f64());
        drop(permit);
        if let Some(m) = Arc::get_mut(&mut message) {
            for s in [
                &mut m.id,
                &mut m.channel_id,
                &mut m.author_id,
                &mut m.content,
            ] {
                s.clear();
            }
            self.spare.set(Some(message));
        }
        matches!(polled, Ok(Poll::Ready(Ok(()))))
    }
}

/// The leanest bot's part after the opening; `true` when the line was
/// one of the batch's and, for an invocation, the handler ran.
fn lean_dispatch(
    registry: &CommandRegistry,
    handler: fn(LeanMessage) -> bool,
    message: &PushMessage<'_>,
    line: &[u8],
) -> bool {
    let Ok(line) = std::str::from_utf8(line) else {
        return false;
    };
    if message.author_id == BOT_ID {
        return false;
    }
    match registry.parse_from_text(line, None) {
        TextParseResult::Ok(invocation) => {
            invocation.name == COMMAND
                && handler(LeanMessage {
                    id: message.id.to_owned(),
                    channel_id: message.channel_id.to_owned(),
                    author_id: message.author_id.to_owned(),
                    content: line.to_owned(),
                })
        }
        TextParseResult::None => line == "hello",
        TextParseResult::Error { .. } => false,
    }
}

/// The lean bot's handler: it looks at what it was given.
fn lean_handler(message: LeanMessage) -> bool {
    let message = std::hint::black_box(message);
    !(message.id.is_empty()
        || message.channel_id.is_empty()
        || message.author_id.is_empty()
        || message.content.is_empty())
}

/// Opens one frame's content into `buf`; `None` for a frame that is not a
/// `message_create` push or does not open.
fn open_push<'t, 'b>(
    cipher: &Aes256Gcm,
    reader: Reader,
    text: &'t str,
    buf: &'b mut Vec<u8>,
) -> Option<(PushMessage<'t>, &'b [u8])> {
    let fast = match reader {
        Reader::OnePass | Reader::Lean | Reader::Kept => botlane_proto::read_message_push(text),
        Reader::Serde => None,
    };
    let message = match fast {
        Some(m) => PushMessage {
            id: m.id,
            channel_id: m.channel_id,
            author_id: m.author_id,
            content: m.content,
            created_at: m.created_at,
        },
        None => serde_json::from_str::<PushFrame<'_>>(text).ok()?.d.message,
    };
    let (content, channel_id) = (message.content, message.channel_id);
    buf.clear();
    BASE64.decode_vec(content, buf).ok()?;
    if buf.len() < NONCE_LEN + TAG_LEN {
        return None;
    }
    let tag_at = buf.len() - TAG_LEN;
    let (head, tag) = buf.split_at_mut(tag_at);
    let (nonce, body) = head.split_at_mut(NONCE_LEN);
    cipher
        .decrypt_in_place_detached(
            Nonce::from_slice(nonce),
            channel_id.as_bytes(),
            body,
            Tag::from_slice(tag),
        )
        .ok()?;
    Some((message, &buf[NONCE_LEN..tag_at]))
}

fn lean_registry() -> CommandRegistry {
    let mut registry = CommandRegistry::new();
    registry
        .register(CommandDeclaration::new(COMMAND, "Count"), |_ctx| async {
            Ok::<(), std::io::Error>(())
        })
        .expect("a valid declaration");
    registry
}

impl RawOpener {
    /// Logs in; `key` is the channel key's bytes (the bench's service
    /// shares them, so the client skips unwrapping).
    pub(crate) async fn login(url: &str, public_key: &str, key: &[u8; 32], reader: Reader) -> Self {
        let cipher = Aes256Gcm::new_from_slice(key).expect("a 32-byte key");
        let registry = lean_registry();
        let kept = Kept::new(lean_registry());
        let mut ws = raw_client::connect(url).await;
        raw_client::login(&mut ws, "raw-opener-token", public_key).await;
        let frames = Arc::new(Progress::default());
        let opened = Arc::new(AtomicU64::new(0));
        let (counter, opened_counter) = (frames.clone(), opened.clone());
        tokio::spawn(async move {
            let mut buf = Vec::with_capacity(256);
            while let Some(Ok(message)) = ws.next().await {
                let opened = message
                    .as_text()
                    .and_then(|text| open_push(&cipher, reader, text, &mut buf));
                // The two lines of a batch (and, for the lean bot, each
                // invocation handled): checked, so that no part of the
                // work can be left out.
                let done = match (reader, opened) {
                    (Reader::Lean, Some((push, line))) => {
                        lean_dispatch(&registry, lean_handler, &push, line)
                    }
                    (Reader::Kept, Some((push, line))) => kept.dispatch(&push, line),
                    (_, Some((_, line))) => matches!(line, b"hello" | b"/tick"),
                    (_, None) => false,
                };
                if done {
                    opened_counter.fetch_add(1, Ordering::Relaxed);
                }
                counter.bump();
            }
        });
        frames.wait_for(FRAMES_AFTER_READY, BATCH_LIMIT).await;
        Self { frames, opened }
    }

    /// Waits until every frame of one more `batch` was read and opened.
    pub(crate) async fn wait_batch(&self, start: u64, batch: Shape) {
        self.frames
            .wait_for(start + batch.len as u64, BATCH_LIMIT)
            .await;
    }

    /// Panics unless every frame after the channel key's opened: the
    /// figure would otherwise be of less work.
    pub(crate) fn assert_every_push_opened(&self) {
        let frames = self.frames.get();
        assert_eq!(
            self.opened.load(Ordering::Relaxed),
            frames - FRAMES_AFTER_READY,
            "the raw opener failed to open some of {frames} frames"
        );
    }
}
