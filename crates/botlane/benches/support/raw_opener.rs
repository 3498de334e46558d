//! A third receiver for the isolated dispatch benches: a raw client that
//! does with each push what any receiver of it must do (its JSON read, its
//! content opened) with the crates the bot uses and none of the bot's
//! code. Its throughput is the floor of a bot built on those crates, on
//! one task. [`Reader::Lean`] adds what the leanest bot must do on top.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce, Tag};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use botlane::{CommandDeclaration, CommandRegistry, TextParseResult};
use botlane_proto::crypto::{NONCE_LEN, TAG_LEN};
use futures_util::StreamExt;
use serde::Deserialize;

use crate::fake_service::{Shape, BOT_ID, COMMAND, FRAMES_AFTER_READY};
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
}

/// What [`Reader::Lean`] hands its handler.
struct LeanMessage {
    id: String,
    channel_id: String,
    author_id: String,
    content: String,
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
        Reader::OnePass | Reader::Lean => botlane_proto::read_message_push(text),
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

impl RawOpener {
    /// Logs in; `key` is the channel key's bytes (the bench's service
    /// shares them, so the client skips unwrapping).
    pub(crate) async fn login(url: &str, public_key: &str, key: &[u8; 32], reader: Reader) -> Self {
        let cipher = Aes256Gcm::new_from_slice(key).expect("a 32-byte key");
        let mut registry = CommandRegistry::new();
        registry
            .register(CommandDeclaration::new(COMMAND, "Count"), |_ctx| async {
                Ok::<(), std::io::Error>(())
            })
            .expect("a valid declaration");
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
