//! Reading an incoming frame in one pass (`botlane_proto::decode_frame_with`):
//! a push straight into its payload type, a reply kept raw (borrowed from
//! the frame) for the caller waiting for it, a frame of an opcode this
//! library does not know skipped. The payload is never parsed twice.

use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::connection::Push;
use crate::wire::{self, OpCode, PayloadSeed};

/// What a frame turned out to be.
pub(super) enum Routed<'a> {
    Push(Push),
    Reply(&'a RawValue),
    Unknown,
}

/// Chooses the payload type by opcode.
pub(super) struct ByOpcode;

impl<'de> PayloadSeed<'de> for ByOpcode {
    type Value = Routed<'de>;

    fn deserialize<D: Deserializer<'de>>(self, op: u16, d: D) -> Result<Routed<'de>, D::Error> {
        let Some(op) = OpCode::from(op) else {
            return IgnoredAny::deserialize(d).map(|_| Routed::Unknown);
        };
        if !op.is_push() {
            return <&RawValue>::deserialize(d).map(Routed::Reply);
        }
        let push = match op {
            OpCode::Ready => Push::Ready(wire::Ready::deserialize(d)?),
            OpCode::MessageCreate => Push::Message(wire::MessageCreate::deserialize(d)?.message),
            OpCode::ChannelKey => Push::ChannelKey(wire::ChannelKeyPush::deserialize(d)?),
            OpCode::ChannelAdded => Push::ChannelAdded(wire::ChannelAdded::deserialize(d)?.channel),
            OpCode::ChannelRemoved => {
                Push::ChannelRemoved(wire::ChannelRemoved::deserialize(d)?.channel_id)
            }
            // Op 33 (and a push opcode added later): checked for shape only.
            _ => wire::Notification::deserialize(d).map(|_| Push::Notification)?,
        };
        Ok(Routed::Push(push))
    }
}
