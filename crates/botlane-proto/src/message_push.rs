//! The message push (op 32), the frame a bot reads by the thousand, read
//! in one pass without serde: [`read_message_push`].
//!
//! Strict by design: it reads only the spelling [`encode_frame`](crate::encode_frame)
//! writes for a [`MessageCreate`](crate::payload::MessageCreate) (no
//! whitespace, the fields in their documented order, strings without an
//! escape, `created_at` a plain integer). Anything else, valid JSON or
//! not, is `None`, and the caller reads the frame with
//! [`decode_frame_with`](crate::decode_frame_with): so what a frame means
//! never depends on which reader took it (a property test here and the
//! fuzz target `decode_frame` compare both on every input).

/// A message push's message with its strings borrowed from the frame:
/// [`WireMessage`](crate::payload::WireMessage)'s fields, as
/// [`read_message_push`] found them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MessagePushRef<'a> {
    /// The message id.
    pub id: &'a str,
    /// The channel.
    pub channel_id: &'a str,
    /// The author's id.
    pub author_id: &'a str,
    /// The sealed content.
    pub content: &'a str,
    /// The sealed command sidecar.
    pub command: Option<&'a str>,
    /// The message this one replies to.
    pub reply_to: Option<&'a str>,
    /// Milliseconds since the Unix epoch, assigned by the service.
    pub created_at: u64,
}

/// Reads `text` when it is a message push in the exact spelling botlane's
/// ends write; `None` for any other frame and any other spelling, which
/// [`decode_frame_with`](crate::decode_frame_with) then reads (or refuses)
/// as it would have without this reader.
///
/// ```
/// use botlane_proto::read_message_push;
///
/// let text = r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"Zm9v","created_at":7}}}"#;
/// let message = read_message_push(text).expect("the spelling encode_frame writes");
/// assert_eq!((message.id, message.command, message.created_at), ("m", None, 7));
/// // Valid, but spelled otherwise (a space): left to the serde reader.
/// assert!(read_message_push(&text.replace(r#""op":32"#, r#""op": 32"#)).is_none());
/// ```
pub fn read_message_push(text: &str) -> Option<MessagePushRef<'_>> {
    let mut at = Cursor(text);
    at.literal(r#"{"op":32,"d":{"message":{"id":"#)?;
    let id = at.string()?;
    at.literal(r#","channel_id":"#)?;
    let channel_id = at.string()?;
    at.literal(r#","author_id":"#)?;
    let author_id = at.string()?;
    at.literal(r#","content":"#)?;
    let content = at.string()?;
    let command = at.optional(r#","command":"#)?;
    let reply_to = at.optional(r#","reply_to":"#)?;
    at.literal(r#","created_at":"#)?;
    let created_at = at.integer()?;
    at.literal("}}}")?;
    at.0.is_empty().then_some(MessagePushRef {
        id,
        channel_id,
        author_id,
        content,
        command,
        reply_to,
        created_at,
    })
}

/// The text not yet read.
struct Cursor<'a>(&'a str);

impl<'a> Cursor<'a> {
    fn literal(&mut self, expected: &str) -> Option<()> {
        self.0 = self.0.strip_prefix(expected)?;
        Some(())
    }

    /// `Some(None)` when `key` is not next, `None` when it is and its value
    /// is not a plain string.
    fn optional(&mut self, key: &str) -> Option<Option<&'a str>> {
        match self.0.strip_prefix(key) {
            Some(rest) => {
                self.0 = rest;
                self.string().map(Some)
            }
            None => Some(None),
        }
    }

    /// A string with no escape and no control character (which JSON
    /// refuses unescaped): its text is the value itself.
    fn string(&mut self) -> Option<&'a str> {
        let body = self.0.strip_prefix('"')?;
        let end = plain_len(body.as_bytes());
        // The byte found is ASCII (or `end` is the end), so `end` is a
        // character boundary.
        let (value, rest) = body.split_at(end);
        self.0 = rest.strip_prefix('"')?;
        Some(value)
    }

    /// A `u64` in JSON's integer spelling (no sign, no leading zero); one
    /// that overflows is left to serde, which refuses it.
    fn integer(&mut self) -> Option<u64> {
        let bytes = self.0.as_bytes();
        let (mut value, mut digits) = (0u64, 0);
        // Eight digits at a time while eight follow (a time in milliseconds
        // has thirteen), then one at a time, each step checked.
        while let Some(eight) = bytes.get(digits..digits + 8).and_then(eight_digits) {
            value = value.checked_mul(100_000_000)?.checked_add(eight)?;
            digits += 8;
        }
        for &b in &bytes[digits..] {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
            digits += 1;
        }
        if digits == 0 || (digits > 1 && bytes[0] == b'0') {
            return None;
        }
        // The digits are ASCII, so `digits` is a character boundary.
        self.0 = &self.0[digits..];
        Some(value)
    }
}

/// The value of eight ASCII digits, `None` unless all eight are digits:
/// tested and combined in a machine word (pairs, then fours, then the
/// eight), about 15 instructions against some 80 one by one.
fn eight_digits(bytes: &[u8]) -> Option<u64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let word = u64::from_le_bytes(bytes.try_into().ok()?);
    // Each byte is 0x30..=0x39: its high nibble is 3, and adding 6 keeps it 3.
    let high = 0xF0F0_F0F0_F0F0_F0F0;
    if word & high != ZEROS || word.wrapping_add(0x0606_0606_0606_0606) & high != ZEROS {
        return None;
    }
    let v = word - ZEROS;
    // The first digit is the lowest byte: each pair as tens and ones...
    let pairs = (v * 10 + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    // ...each four as hundreds and the rest...
    let fours = (pairs * 100 + (pairs >> 16)) & 0x0000_FFFF_0000_FFFF;
    // ...and the eight.
    Some((fours & 0xFFFF) * 10_000 + (fours >> 32))
}

/// The length of the leading run of `bytes` with no byte that ends a plain
/// string: a quote, a backslash or a control character. A sealed content
/// is a few hundred base64 characters: 32 bytes at a time while no block
/// holds one, then 8 at a time in a machine word, the last
/// few bytes in a word padded with quotes. A block costs about 24 SSE2
/// instructions, a word about 15; no byte is looked at alone.
fn plain_len(bytes: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let mut at = 0;
    for block in bytes.chunks_exact(BLOCK) {
        // Flags first, then their union: written so, the compiler tests
        // the block in vector instructions (a fold of `special` straight
        // over the bytes stays a loop, at about 3 times the cost).
        let mut flags = [0u8; BLOCK];
        for (flag, &b) in flags.iter_mut().zip(block) {
            *flag = u8::from(b == b'"') | u8::from(b == b'\\') | u8::from(b < 0x20);
        }
        if flags.iter().fold(0, |any, &flag| any | flag) != 0 {
            break;
        }
        at += BLOCK;
    }
    let words = bytes[at..].chunks_exact(8);
    let rest = words.remainder();
    for word in words {
        let found = specials(u64::from_le_bytes(
            word.try_into().expect("chunks of eight bytes"),
        ));
        if found != 0 {
            return at + first(found);
        }
        at += 8;
    }
    // Fewer than eight bytes are left, shifted into a word of quotes (a
    // copy into a padded array is a call to `memcpy`, several times the
    // cost): the quote after them ends the run there at the latest.
    let word = rest
        .iter()
        .rev()
        .fold(QUOTES, |word, &b| (word << 8) | u64::from(b));
    at + first(specials(word))
}

/// Eight quotes, the padding of a string's last word.
const QUOTES: u64 = u64::from_le_bytes([b'"'; 8]);

/// The high bit of each byte of the little-endian word `w` that ends a
/// plain string, and maybe of some after the first: a quote or a backslash
/// is a zero byte once XORed with it, a control character is below 0x20.
fn specials(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `v` that is below `n` (n <= 128): exact
    // up to the first such byte, past which a borrow may set more.
    let below = |v: u64, n: u64| v.wrapping_sub(ONES * n) & !v & HIGH;
    below(w ^ (ONES * u64::from(b'"')), 1)
        | below(w ^ (ONES * u64::from(b'\\')), 1)
        | below(w, 0x20)
}

/// The index of the first byte flagged in `specials`' answer (exact: only
/// flags after the first may be wrong).
fn first(found: u64) -> usize {
    // At most 8: the cast cannot truncate.
    (found.trailing_zeros() / 8) as usize
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Whether a string byte ends a plain string, byte by byte.
    fn special(b: u8) -> bool {
        b == b'"' || b == b'\\' || b < 0x20
    }
    use crate::payload::{MessageCreate, WireMessage};
    use crate::{decode_frame, decode_payload, encode_frame, OpCode};
    use proptest::prelude::*;

    /// What the serde reader makes of `text`, when it reads a message push.
    fn serde_reading(text: &str) -> Option<WireMessage> {
        let frame = decode_frame(text).ok()?;
        (frame.op == OpCode::MessageCreate.code())
            .then(|| decode_payload::<MessageCreate>(frame.op, frame.d).ok())
            .flatten()
            .map(|push| push.message)
    }

    fn owned(m: MessagePushRef<'_>) -> WireMessage {
        let mut message =
            WireMessage::new(m.id, m.channel_id, m.author_id, m.content, m.created_at);
        message.command = m.command.map(str::to_owned);
        message.reply_to = m.reply_to.map(str::to_owned);
        message
    }

    /// The law: whatever this reader reads, the serde reader reads the same.
    fn agree(text: &str) -> Result<(), TestCaseError> {
        if let Some(read) = read_message_push(text) {
            prop_assert_eq!(Some(owned(read)), serde_reading(text), "{}", text);
        }
        Ok(())
    }

    #[test]
    fn reads_what_encode_frame_writes_and_leaves_the_rest() {
        let full = WireMessage::new("m1", "c1", "u1", "Zm9v", 1_795_330_000_000)
            .with_command("YmFy")
            .with_reply_to("m0");
        let text = encode_frame(OpCode::MessageCreate, &MessageCreate::new(full.clone()));
        assert_eq!(read_message_push(&text).map(owned), Some(full));
        for other in [
            // Valid pushes spelled otherwise: the serde reader takes them.
            r#"{"op":32,"d":{"message":{"id":"m\"1","channel_id":"c","author_id":"a","content":"x","created_at":7}}}"#,
            r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":7}}} "#,
            r#"{"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":7}},"op":32}"#,
            r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","command":null,"created_at":7}}}"#,
            r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":7,"extra":1}}}"#,
            // Not valid: refused by serde too.
            r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":07}}}"#,
            r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":18446744073709551616}}}"#,
            "{\"op\":32,\"d\":{\"message\":{\"id\":\"m\n\",\"channel_id\":\"c\",\"author_id\":\"a\",\"content\":\"x\",\"created_at\":7}}}",
            r#"{"op":33,"d":{"kind":"reply","channel_id":"c","message_id":"m","from":"u"}}"#,
        ] {
            assert_eq!(read_message_push(other), None, "{other}");
        }
        let largest = r#"{"op":32,"d":{"message":{"id":"m","channel_id":"c","author_id":"a","content":"x","created_at":18446744073709551615}}}"#;
        assert_eq!(read_message_push(largest).unwrap().created_at, u64::MAX);
        agree(largest).unwrap();
    }

    proptest! {
        #[test]
        fn plain_len_is_the_first_special_byte(
            // A plain run across blocks, then maybe a special byte, then anything.
            plain in prop::collection::vec(prop::sample::select(b"aZ9+/= \x7f\xc3\xa9".to_vec()), 0..100),
            stop in prop::option::of(prop::sample::select(b"\"\\\x00\x1f".to_vec())),
            tail in prop::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut bytes = plain;
            bytes.extend(stop);
            bytes.extend(tail);
            let expected = bytes.iter().position(|&b| special(b)).unwrap_or(bytes.len());
            prop_assert_eq!(plain_len(&bytes), expected);
        }
    }

    proptest! {
        #[test]
        fn integer_reads_what_str_parse_reads(
            digits in "[0-9]{1,24}",
            after in "[^0-9]{0,3}",
        ) {
            let text = format!("{digits}{after}");
            let mut cursor = Cursor(&text);
            let read = cursor.integer();
            let leading_zero = digits.len() > 1 && digits.starts_with('0');
            let expected = digits.parse::<u64>().ok().filter(|_| !leading_zero);
            prop_assert_eq!(read, expected);
            if read.is_some() {
                prop_assert_eq!(cursor.0, after.as_str());
            }
        }
    }

    fn wire_message() -> impl Strategy<Value = WireMessage> {
        // Plain text, escapes, quotes, control characters and non-ASCII.
        let text = "[a-z0-9\"\\\\/\u{0}-\u{1f}é€😀 -]{0,8}";
        (
            text,
            text,
            text,
            text,
            proptest::option::of(text),
            proptest::option::of(text),
            any::<u64>(),
        )
            .prop_map(|(id, channel, author, content, command, reply_to, at)| {
                let mut m = WireMessage::new(id, channel, author, content, at);
                m.command = command;
                m.reply_to = reply_to;
                m
            })
    }

    proptest! {
        /// Every message as encode_frame writes it: read the same by both
        /// readers, and read by this one whenever no string needs an escape.
        #[test]
        fn both_readers_agree_on_every_encoded_message(message in wire_message()) {
            let text = encode_frame(OpCode::MessageCreate, &MessageCreate::new(message.clone()));
            agree(&text)?;
            let plain = [&message.id, &message.channel_id, &message.author_id, &message.content]
                .into_iter()
                .chain(message.command.as_ref())
                .chain(message.reply_to.as_ref())
                .all(|s| !s.contains(['"', '\\']) && !s.contains(|c: char| c < ' '));
            prop_assert_eq!(read_message_push(&text).is_some(), plain, "{}", text);
        }

        /// An encoded message with one byte changed, removed or inserted
        /// anywhere: this reader refuses or reads what serde reads.
        #[test]
        fn both_readers_agree_on_every_near_miss(
            message in wire_message(),
            at in any::<prop::sample::Index>(),
            edit in 0..3u8,
            byte in prop::sample::select(b"{}[]\":,0123456789 .-enul\\ax".to_vec()),
        ) {
            let mut text = encode_frame(OpCode::MessageCreate, &MessageCreate::new(message)).into_bytes();
            let at = at.index(text.len());
            match edit {
                0 => text[at] = byte,
                1 => { text.remove(at); }
                _ => text.insert(at, byte),
            }
            if let Ok(text) = String::from_utf8(text) {
                agree(&text)?;
            }
        }

        /// Arbitrary text: never a panic, never a disagreement.
        #[test]
        fn both_readers_agree_on_any_text(text in r#"\{"op":32,"d":\{"message":\{[{}\[\]":,0-9a-z_ \\.-]{0,120}"#) {
            agree(&text)?;
        }
    }
}
