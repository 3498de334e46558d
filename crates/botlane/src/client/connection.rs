//! One realtime connection: a task that owns the WebSocket, writes queued
//! frames, and routes each incoming frame to the caller waiting for it (a
//! reply) or to the session (a push).
//!
//! Replies carry no request id: they are matched by position within their
//! opcode. The slot for a reply is queued in the same step that writes the
//! request, so the FIFO of slots always mirrors the order on the wire; when
//! the connection ends, every waiting slot fails.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message as WsMessage;

use super::error::ClientError;
use crate::wire::{self, OpCode};

/// A push from the service.
#[derive(Debug)]
pub(crate) enum Push {
    Ready(wire::Ready),
    Message(wire::WireMessage),
    ChannelKey(wire::ChannelKeyPush),
    Notification(wire::Notification),
}

type Slot = oneshot::Sender<Result<String, ClientError>>;

struct Outgoing {
    op: OpCode,
    text: String,
    slot: Option<Slot>,
}

/// A handle to a live connection; cheap to clone.
#[derive(Clone)]
pub(crate) struct Connection {
    tx: mpsc::Sender<Outgoing>,
    timeout: Duration,
}

/// How the connection task ended.
pub(crate) type Closed = JoinHandle<String>;

impl Connection {
    /// Opens the WebSocket and starts the connection task. Pushes go to `pushes`.
    pub(crate) async fn open(
        url: &str,
        timeout: Duration,
        debug: bool,
        pushes: mpsc::UnboundedSender<Push>,
        mut shutdown: watch::Receiver<bool>,
    ) -> Result<(Self, Closed), ClientError> {
        // Nagle off: frames are small and latency-bound (replies, heartbeats).
        let (socket, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
            .await
            .map_err(ClientError::Connect)?;
        let (tx, mut rx) = mpsc::channel::<Outgoing>(256);
        let task = tokio::spawn(async move {
            let (mut sink, mut stream) = socket.split();
            let mut pending: HashMap<u16, VecDeque<Slot>> = HashMap::new();
            let reason = loop {
                tokio::select! {
                    out = rx.recv() => {
                        let Some(out) = out else {
                            let _ = sink.close().await;
                            break "client closed the connection".to_owned();
                        };
                        if let Some(slot) = out.slot {
                            pending.entry(out.op.code()).or_default().push_back(slot);
                        }
                        if debug {
                            tracing::debug!(op = out.op.code(), bytes = out.text.len(), "frame sent");
                        }
                        if let Err(e) = sink.send(WsMessage::text(out.text)).await {
                            break format!("write failed: {e}");
                        }
                    }
                    incoming = stream.next() => match incoming {
                        Some(Ok(WsMessage::Text(text))) => route(text.as_str(), debug, &mut pending, &pushes),
                        Some(Ok(WsMessage::Close(_))) | None => break "the service closed the connection".to_owned(),
                        Some(Ok(_)) => {}
                        Some(Err(e)) => break format!("read failed: {e}"),
                    },
                    _ = shutdown.changed() => {
                        let _ = sink.close().await;
                        break "client shut down".to_owned();
                    }
                }
            };
            for (opcode, slots) in pending {
                for slot in slots {
                    let _ = slot.send(Err(ClientError::ConnectionClosed { opcode }));
                }
            }
            reason
        });
        Ok((Self { tx, timeout }, task))
    }

    /// Sends a request and waits for its reply, decoded as `Rep`.
    pub(crate) async fn request<Req, Rep>(&self, op: OpCode, req: &Req) -> Result<Rep, ClientError>
    where
        Req: Serialize + ?Sized,
        Rep: DeserializeOwned,
    {
        let rx = self.enqueue(op, wire::encode_frame(op, req)).await?;
        let opcode = op.code();
        let payload = match tokio::time::timeout(self.timeout, rx).await {
            Err(_) => return Err(ClientError::Timeout { opcode }),
            Ok(Err(_)) => return Err(ClientError::ConnectionClosed { opcode }),
            Ok(Ok(result)) => result?,
        };
        serde_json::from_str(&payload).map_err(|_| ClientError::MalformedReply { opcode })
    }

    /// Queues a request frame and returns the receiver of its reply. The
    /// reply is matched by position even if the receiver is dropped, so a
    /// cancelled caller never shifts replies onto later callers.
    pub(crate) async fn enqueue(
        &self,
        op: OpCode,
        text: String,
    ) -> Result<oneshot::Receiver<Result<String, ClientError>>, ClientError> {
        let (slot, rx) = oneshot::channel();
        self.tx
            .send(Outgoing {
                op,
                text,
                slot: Some(slot),
            })
            .await
            .map_err(|_| ClientError::ConnectionClosed { opcode: op.code() })?;
        Ok(rx)
    }
}

fn route(
    text: &str,
    debug: bool,
    pending: &mut HashMap<u16, VecDeque<Slot>>,
    pushes: &mpsc::UnboundedSender<Push>,
) {
    let frame = match wire::decode_frame(text) {
        Ok(frame) => frame,
        Err(e) => {
            tracing::warn!(bytes = text.len(), error = %e, "ignoring a malformed frame");
            return;
        }
    };
    let Some(op) = OpCode::from(frame.op) else {
        tracing::debug!(op = frame.op, "ignoring a frame with an unknown opcode");
        return;
    };
    if debug {
        // Opcode and size only: payloads hold ciphertext, tokens or secrets.
        tracing::debug!(op = frame.op, bytes = text.len(), "frame received");
    }
    if op.is_push() {
        let push = match op {
            OpCode::Ready => wire::decode_payload(frame.op, frame.d).map(Push::Ready),
            OpCode::MessageCreate => wire::decode_payload::<wire::MessageCreate>(frame.op, frame.d)
                .map(|m| Push::Message(m.message)),
            OpCode::ChannelKey => wire::decode_payload(frame.op, frame.d).map(Push::ChannelKey),
            _ => wire::decode_payload(frame.op, frame.d).map(Push::Notification),
        };
        match push {
            Ok(push) => {
                let _ = pushes.send(push);
            }
            Err(e) => tracing::warn!(op = frame.op, error = %e, "ignoring a malformed push"),
        }
        return;
    }
    match pending.get_mut(&frame.op).and_then(VecDeque::pop_front) {
        // A dropped receiver means its caller gave up; the reply is consumed
        // here all the same, which keeps later replies in their places.
        Some(slot) => {
            let _ = slot.send(Ok(frame.d.get().to_owned()));
        }
        None => tracing::warn!(op = frame.op, "ignoring a reply nobody asked for"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (
        HashMap<u16, VecDeque<Slot>>,
        mpsc::UnboundedSender<Push>,
        mpsc::UnboundedReceiver<Push>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        (HashMap::new(), tx, rx)
    }

    #[test]
    fn unknown_opcodes_and_garbage_are_ignored() {
        let (mut pending, tx, mut rx) = setup();
        let (slot, mut reply) = oneshot::channel();
        pending.entry(240).or_default().push_back(slot);
        for text in [
            r#"{"op":9999,"d":{}}"#,
            "not json",
            r#"{"op":32,"d":{"bad":1}}"#,
        ] {
            route(text, true, &mut pending, &tx);
        }
        assert!(rx.try_recv().is_err(), "nothing was pushed");
        assert!(reply.try_recv().is_err(), "the waiting slot is untouched");
        assert_eq!(pending[&240].len(), 1);
    }

    #[test]
    fn replies_go_to_the_oldest_slot_of_their_opcode() {
        let (mut pending, tx, _rx) = setup();
        let (a, mut ra) = oneshot::channel();
        let (b, mut rb) = oneshot::channel();
        let (c, mut rc) = oneshot::channel();
        pending.entry(240).or_default().push_back(a);
        pending.entry(40).or_default().push_back(b);
        pending.entry(240).or_default().push_back(c);
        route(
            r#"{"op":40,"d":{"code":0,"n":"b"}}"#,
            false,
            &mut pending,
            &tx,
        );
        route(
            r#"{"op":240,"d":{"code":0,"n":"a"}}"#,
            false,
            &mut pending,
            &tx,
        );
        route(
            r#"{"op":240,"d":{"code":0,"n":"c"}}"#,
            false,
            &mut pending,
            &tx,
        );
        assert!(ra.try_recv().unwrap().unwrap().contains("\"a\""));
        assert!(rb.try_recv().unwrap().unwrap().contains("\"b\""));
        assert!(rc.try_recv().unwrap().unwrap().contains("\"c\""));
    }

    #[test]
    fn a_dropped_caller_still_consumes_its_reply() {
        let (mut pending, tx, _rx) = setup();
        let (a, ra) = oneshot::channel();
        let (b, mut rb) = oneshot::channel();
        pending.entry(638).or_default().push_back(a);
        pending.entry(638).or_default().push_back(b);
        drop(ra);
        route(
            r#"{"op":638,"d":{"code":-7,"n":"first"}}"#,
            false,
            &mut pending,
            &tx,
        );
        route(
            r#"{"op":638,"d":{"code":-7,"n":"second"}}"#,
            false,
            &mut pending,
            &tx,
        );
        assert!(rb.try_recv().unwrap().unwrap().contains("second"));
    }

    #[test]
    fn pushes_are_routed_to_the_session() {
        let (mut pending, tx, mut rx) = setup();
        route(
            r#"{"op":33,"d":{"kind":"reply","channel_id":"c","message_id":"m","from":"u"}}"#,
            false,
            &mut pending,
            &tx,
        );
        assert!(matches!(rx.try_recv(), Ok(Push::Notification(n)) if n.kind == "reply"));
    }
}
