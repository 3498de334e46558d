//! The raw realtime client of the baselines: the WebSocket crate the bot
//! uses (tokio-websockets), with the bot's socket settings (`TCP_NODELAY`,
//! the 1 MiB payload limit) and nothing of the bot's own: no keystore, no
//! dispatch, no queues.

use botlane_proto::payload::{LoginReply, LoginRequest};
use botlane_proto::{decode_frame, decode_payload, encode_frame, OpCode, MAX_FRAME_BYTES};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_websockets::{ClientBuilder, Limits, Message, WebSocketStream};

pub(crate) type RawSocket = WebSocketStream<TcpStream>;

/// Opens a WebSocket to the realtime url `url` (`ws://host:port/ws`).
pub(crate) async fn connect(url: &str) -> RawSocket {
    let parsed = url::Url::parse(url).expect("the bench passes a valid ws url");
    let addr = parsed
        .socket_addrs(|| None)
        .expect("the bench's url names a loopback address")[0];
    let tcp = TcpStream::connect(addr).await.expect("tcp connect");
    tcp.set_nodelay(true).expect("TCP_NODELAY");
    let (ws, _response) = ClientBuilder::new()
        .uri(url)
        .expect("the bench passes a valid ws url")
        .limits(Limits::default().max_payload_len(Some(MAX_FRAME_BYTES)))
        .connect_on(tcp)
        .await
        .expect("websocket upgrade");
    ws
}

/// Logs in (op 10) and reads until `ready` (op 11), as the bot does before
/// publishing its menu. Panics on a refusal: a bench cannot go on without.
pub(crate) async fn login(ws: &mut RawSocket, token: &str, public_key: &str) {
    let request = encode_frame(
        OpCode::Login,
        &LoginRequest::new(token, public_key, "raw-bench/1"),
    );
    ws.send(Message::text(request)).await.expect("send login");
    loop {
        let message = ws
            .next()
            .await
            .expect("the service answers the login")
            .expect("a readable frame");
        let Some(text) = message.as_text() else {
            continue;
        };
        let frame = decode_frame(text).expect("a frame envelope");
        match frame.op {
            10 => {
                let reply: LoginReply = decode_payload(frame.op, frame.d).expect("a login reply");
                assert_eq!(reply.code, 0, "the service refused the raw login");
            }
            11 => return,
            _ => {}
        }
    }
}
