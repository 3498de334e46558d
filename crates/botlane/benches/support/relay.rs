//! Allocations per relayed message in the devserver (`dispatch_allocs`):
//! the devserver runs in the counting process and nothing else does; its
//! two clients run in a child process (this binary again, with
//! [`CLIENTS_ROLE`] set). A human posts batches of pre-sealed sends (op
//! 30), pipelined; the service stores each, answers it and relays it (op
//! 32) to both members of the channel, the human and a raw receiver.
//!
//! The warm-up fills the service's rings (frame records, channel history),
//! so that the counted batches are its steady state.

use std::io::{BufRead, BufReader, Write};

use botlane::crypto::{ChannelKey, IdentityKeyPair};
use botlane_devserver::{DevServer, DevServerConfig};
use botlane_proto::payload::SendRequest;
use botlane_proto::{decode_frame, encode_frame, OpCode};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio_websockets::Message;

use crate::raw_client;
use crate::role_child::RoleChild;

/// Set in the child: run the two clients instead of measuring.
pub(crate) const CLIENTS_ROLE: &str = "BOTLANE_RELAY_CLIENTS";

/// Sends per batch.
const BATCH: usize = 1000;

/// Batches before counting: 3,000 messages make 12,000 frame records (the
/// send, its reply, two pushes), past the ring's 10,000, and three times
/// the channel's history of 1,000.
const WARM_UP_BATCHES: usize = 3;

/// Asks the clients for a batch: they answer once it was relayed in full.
fn batch(clients: &mut RoleChild) {
    writeln!(clients, "batch").unwrap();
    assert_eq!(clients.line(), "relayed", "the clients' answer");
}

/// Counts `batches` batches of [`BATCH`] sends in a devserver of this
/// process; calls and bytes allocated per relayed message.
pub(crate) fn count(batches: usize) -> (f64, f64) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(DevServer::start(DevServerConfig::default()))
        .unwrap();
    let human = server.add_user("alice");
    let member = server.add_user("bob");
    let space = server.create_server("s");
    let channel = server.create_channel(&space, "c").unwrap();
    server.add_member(&channel, &human.id).unwrap();
    server.add_member(&channel, &member.id).unwrap();
    let args = [server.ws_url(), human.token, member.token, channel].join("\t");
    let mut clients = RoleChild::spawn(CLIENTS_ROLE, &args);
    assert_eq!(clients.line(), "logged in");
    for _ in 0..WARM_UP_BATCHES {
        batch(&mut clients);
    }
    let region = stats_alloc::Region::new(crate::GLOBAL);
    for _ in 0..batches {
        batch(&mut clients);
    }
    let change = region.change();
    drop(clients);
    rt.block_on(server.shutdown());
    let messages = (batches * BATCH) as f64;
    (
        change.allocations as f64 / messages,
        change.bytes_allocated as f64 / messages,
    )
}

/// The child: logs the human and the receiver in, then relays a batch per
/// line of stdin until it closes.
pub(crate) fn clients(args: &str) {
    let [url, human, member, channel] = args.split('\t').collect::<Vec<_>>()[..] else {
        panic!("{CLIENTS_ROLE} is url, two tokens and a channel, tab-separated");
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let key = IdentityKeyPair::generate()
            .unwrap()
            .public_key()
            .to_base64();
        let mut sender = raw_client::connect(url).await;
        raw_client::login(&mut sender, human, &key).await;
        let mut receiver = raw_client::connect(url).await;
        raw_client::login(&mut receiver, member, &key).await;
        let sealed = ChannelKey::generate()
            .unwrap()
            .seal(b"/tick", channel.as_bytes())
            .unwrap();
        let send = Bytes::from(encode_frame(
            OpCode::Send,
            &SendRequest::new(channel, sealed),
        ));
        println!("logged in");
        let mut stdin = BufReader::new(std::io::stdin()).lines();
        while let Some(Ok(_)) = stdin.next() {
            for _ in 0..BATCH {
                sender.feed(Message::text(send.clone())).await.unwrap();
            }
            sender.flush().await.unwrap();
            // The human reads its replies and its own messages relayed
            // back, the receiver its copies.
            let ((replies, own), (_, relayed)) =
                tokio::join!(read(&mut sender, 2 * BATCH), read(&mut receiver, BATCH));
            assert_eq!((replies, own, relayed), (BATCH, BATCH, BATCH));
            println!("relayed");
        }
    });
}

/// Reads `n` frames; how many were replies to sends and message pushes.
async fn read(ws: &mut raw_client::RawSocket, n: usize) -> (usize, usize) {
    let (mut replies, mut pushes) = (0, 0);
    while replies + pushes < n {
        let message = ws.next().await.unwrap().unwrap();
        let Some(text) = message.as_text() else {
            continue;
        };
        match OpCode::from(decode_frame(text).unwrap().op) {
            Some(OpCode::Send) => replies += 1,
            Some(OpCode::MessageCreate) => pushes += 1,
            _ => {}
        }
    }
    (replies, pushes)
}
