//! botlane-proto: what both ends of botlane's realtime wire agree on, with
//! no I/O.
//!
//! The opcodes ([`OpCode`]), the frame envelope `{"op": u16, "d": payload}`
//! ([`encode_frame`], [`decode_frame`], [`decode_frame_with`],
//! [`MAX_FRAME_BYTES`]; the message push also in one pass without serde,
//! [`read_message_push`]), the payload of every exchange ([`payload`]), the
//! reply codes ([`ReplyCode`]), the command area's caps ([`limits`]), how
//! many WebSocket pings an end answers ([`ping`]), and the
//! end-to-end encryption as pure functions over bytes ([`crypto`]: AES-256-GCM
//! sealing, X25519 + HKDF-SHA256 key wrapping). No tokio, no sockets: the
//! client (`botlane`), the reference service (`botlane-devserver`) and the
//! derive macros (`botlane-macros`) all build on it.
//!
//! The byte-exact formats are in `docs/protocol.md` and `docs/crypto.md`.
//!
//! ```
//! use botlane_proto::payload::HistoryRequest;
//! use botlane_proto::{decode_frame, decode_payload, encode_frame, OpCode};
//!
//! let text = encode_frame(OpCode::HistoryFetch, &HistoryRequest::new("c").with_limit(5));
//! assert_eq!(text, r#"{"op":40,"d":{"channel_id":"c","limit":5}}"#);
//! let frame = decode_frame(&text)?;
//! let request: HistoryRequest = decode_payload(frame.op, frame.d)?;
//! assert_eq!(request.limit, Some(5));
//! # Ok::<(), botlane_proto::FrameError>(())
//! ```
//!
//! # Building a payload
//!
//! Every payload struct (and [`WrappedKey`](crypto::WrappedKey)) is
//! `#[non_exhaustive]`, so that the protocol can gain a field without
//! breaking a crate that builds one; only [`Empty`](payload::Empty), the
//! shape `{}` itself, is not. One convention holds for all of them:
//!
//! - `new` takes the fields the wire requires, in the order the type lists
//!   them (a reply's `code` alone).
//! - Every optional field starts absent (`None`, or an empty list where the
//!   wire may leave the list out) and is set by `with_<field>(value)`, which
//!   takes the value itself and returns the payload.
//! - Fields stay public: read them as `payload.field`, and assign one to
//!   carry an `Option` through as it is.
//!
//! ```
//! use botlane_proto::payload::{SendReply, SendRequest};
//!
//! let request = SendRequest::new("c", "c2VhbGVk").with_reply_to("m1");
//! assert_eq!(request.reply_to.as_deref(), Some("m1"));
//! let mut reply = SendReply::new(0);
//! reply.message_id = request.reply_to;
//! assert_eq!(serde_json::to_string(&reply).unwrap(), r#"{"code":0,"message_id":"m1"}"#);
//! ```
//!
//! The name rule (`^[a-z0-9_-]{1,32}$`) is internal by the spec ("the
//! constant and regex are internal and not exported"): the module `names`
//! that holds it is hidden and outside the stability promise; it is public
//! only so that `botlane` and `botlane-macros` share one definition. The
//! module `numbers` (how an integer or number option's text reads) is
//! hidden for the same reason.
#![deny(missing_docs)]

mod codes;
pub mod crypto;
mod frame;
pub mod limits;
mod message_push;
#[doc(hidden)]
pub mod names;
#[doc(hidden)]
pub mod numbers;
mod opcode;
pub mod payload;
pub mod ping;

pub use codes::ReplyCode;
pub use frame::{
    decode_frame, decode_frame_with, decode_payload, encode_frame, Frame, FrameError, PayloadSeed,
    RawFrame, MAX_FRAME_BYTES,
};
pub use message_push::{read_message_push, MessagePushRef};
pub use opcode::OpCode;
