//! The realtime opcode wire, under the name the library's parts use
//! (`crate::wire::…`). Opcodes, frames, payloads and reply codes are
//! defined in `botlane-proto`, which the devserver uses directly (see
//! `docs/protocol.md`).
//!
//! Hidden and outside the stability promise: `botlane::wire` is kept only
//! so that code written against it before `botlane-proto` existed still
//! builds; new code names `botlane_proto`.

pub use botlane_proto::payload::*;
pub use botlane_proto::{
    decode_frame, decode_frame_with, decode_payload, encode_frame, Frame, FrameError, OpCode,
    PayloadSeed, RawFrame, ReplyCode, MAX_FRAME_BYTES,
};
