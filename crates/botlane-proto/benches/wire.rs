//! The wire's hot paths, per inbound message: reading a `message_create`
//! frame (one pass against the former two), and opening its sealed content
//! with a key that holds its cipher (against making the cipher per open,
//! as `ChannelKey` did before). Per outbound message: sealing 200 bytes,
//! beside the fresh nonce alone (`OsRng`, one `getrandom` system call),
//! to show that call's share. `scripts/bench` runs it with short
//! settings; the numbers are in `docs/benchmarks.md`.

#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use botlane_proto::crypto::ChannelKey;
use botlane_proto::payload::{MessageCreate, WireMessage};
use botlane_proto::{
    decode_frame, decode_frame_with, decode_payload, encode_frame, OpCode, PayloadSeed,
};
use criterion::{criterion_group, criterion_main, Criterion};
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Deserializer};

/// Decodes a message push as the client's transport does.
struct Messages;

impl<'de> PayloadSeed<'de> for Messages {
    type Value = MessageCreate;
    fn deserialize<D: Deserializer<'de>>(self, _: u16, d: D) -> Result<MessageCreate, D::Error> {
        MessageCreate::deserialize(d)
    }
}

fn frame_and_key() -> (String, ChannelKey, String) {
    let key = ChannelKey::from_bytes([7; 32]);
    let content = key
        .seal(
            b"/roll 2 sides:6 with a little more text, as a chat line has",
            b"channel-1",
        )
        .unwrap();
    let command = key
        .seal(
            br#"{"v":1,"bot":"b0b","name":"roll","args":{"count":2,"sides":6}}"#,
            b"channel-1",
        )
        .unwrap();
    let message = WireMessage::new(
        "6f1c9b2e-8d4a-4c1e-9b7a-2d5e8f0a1b3c",
        "channel-1",
        "0e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968",
        content.clone(),
        1_700_000_000_000,
    )
    .with_command(command);
    (
        encode_frame(OpCode::MessageCreate, &MessageCreate::new(message)),
        key,
        content,
    )
}

fn envelope(c: &mut Criterion) {
    let (text, _, _) = frame_and_key();
    let mut group = c.benchmark_group("frame");
    // The envelope with `d` as a RawValue, then the payload: the former reading.
    group.bench_function("two_passes", |b| {
        b.iter(|| {
            let frame = decode_frame(black_box(&text)).unwrap();
            let push: MessageCreate = decode_payload(frame.op, frame.d).unwrap();
            black_box(push)
        });
    });
    group.bench_function("one_pass", |b| {
        b.iter(|| {
            black_box(
                decode_frame_with(black_box(&text), Messages)
                    .unwrap()
                    .payload,
            )
        });
    });
    group.finish();
}

fn open(c: &mut Criterion) {
    let (_, key, content) = frame_and_key();
    let mut group = c.benchmark_group("open");
    group.bench_function("held_cipher", |b| {
        b.iter(|| black_box(key.open(black_box(&content), b"channel-1").unwrap()));
    });
    // The key schedule on every open, as the former ChannelKey did.
    group.bench_function("cipher_per_open", |b| {
        b.iter(|| {
            let fresh = ChannelKey::from_bytes([7; 32]);
            black_box(fresh.open(black_box(&content), b"channel-1").unwrap())
        });
    });
    group.finish();
}

fn seal(c: &mut Criterion) {
    let key = ChannelKey::from_bytes([7; 32]);
    let plaintext = [b'a'; 200];
    let mut group = c.benchmark_group("seal");
    group.bench_function("channel_key_200_bytes", |b| {
        b.iter(|| black_box(key.seal(black_box(&plaintext), b"channel-1").unwrap()));
    });
    // What `seal` spends on its nonce: 12 bytes from the operating system.
    group.bench_function("os_rng_nonce", |b| {
        b.iter(|| {
            let mut nonce = [0u8; 12];
            OsRng.fill_bytes(&mut nonce);
            black_box(nonce)
        });
    });
    group.finish();
}

criterion_group!(benches, envelope, open, seal);
criterion_main!(benches);
