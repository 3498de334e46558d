//! The checks behind the devserver's fuzz targets (`fuzz/`), each panicking
//! when an invariant fails. Compiled only with the `fuzzing` feature (the
//! fuzz crate and this crate's own tests enable it, to run the committed
//! corpora); outside the stability promise.

use std::collections::HashSet;
use std::sync::Arc;

use botlane_proto::payload::AccountKind;
use botlane_proto::{decode_frame, decode_payload, OpCode};
use tokio::sync::watch;
use tower::ServiceExt as _;

use crate::config::{AccountConfig, ChannelConfig, DevServerConfig, FileConfig, ServerConfig};
use crate::realtime::dispatch::handle_text;
use crate::realtime::envelope::read_envelope;
use crate::realtime::handlers::Flow;
use crate::records::Direction;
use crate::state::{outbox, Outbound, OutboxReader, Shared, State, StateView, Termination};

/// The bot's login token in [`check_realtime_frames`].
pub const FUZZ_BOT_TOKEN: &str = "fuzz-bot-token-5b1e9c";
/// The human's login token in [`check_realtime_frames`].
pub const FUZZ_USER_TOKEN: &str = "fuzz-user-token-8d04a7";
/// The id of the bot account.
pub const FUZZ_BOT_ID: &str = "00000000-0000-4000-8000-00000000b071";
/// The id of the human account.
pub const FUZZ_USER_ID: &str = "00000000-0000-4000-8000-000000005e12";
/// The id of the channel both are members of.
pub const FUZZ_CHANNEL_ID: &str = "00000000-0000-4000-8000-0000000c4a11";
/// The id of the server (room) of [`FUZZ_CHANNEL_ID`], which holds the file.
pub const FUZZ_SERVER_ID: &str = "00000000-0000-4000-8000-00000005e7e7";
/// The id of the one file of the fuzz world.
pub const FUZZ_FILE_ID: &str = "fuzz-file";
/// The content of that file.
pub const FUZZ_FILE_CONTENT: &str = "what the download route serves";
/// The byte that separates the frames of one input. It never occurs in
/// UTF-8, so every text frame can be written between two of them.
pub const FRAME_SEPARATOR: u8 = 0xff;

/// What one run of [`check_realtime_frames`] went through, so that the
/// corpus test can tell that its seeds reach the checks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FramesRun {
    /// Frames handed to the service.
    pub handled: usize,
    /// Frames answered on their own opcode (the connection stayed open).
    pub answered: usize,
    /// Of those, frames whose answer says success (code 0).
    pub accepted: usize,
    /// Connections the service closed.
    pub closed: usize,
    /// Logins that succeeded.
    pub logins: usize,
    /// One-time REST secrets the service handed out.
    pub secrets: usize,
}

impl std::iter::Sum for FramesRun {
    fn sum<I: Iterator<Item = Self>>(runs: I) -> Self {
        runs.fold(Self::default(), |total, run| Self {
            handled: total.handled + run.handled,
            answered: total.answered + run.answered,
            accepted: total.accepted + run.accepted,
            closed: total.closed + run.closed,
            logins: total.logins + run.logins,
            secrets: total.secrets + run.secrets,
        })
    }
}

/// One open connection of the fuzzed state.
struct Peer {
    id: u64,
    reader: OutboxReader,
    kill: watch::Receiver<Option<Termination>>,
}

/// Feeds text frames to the service's frame handler, as two connections of
/// a fixed world (a bot and a human sharing a channel, REST minting on).
///
/// The input is a list of frames separated by [`FRAME_SEPARATOR`]; a frame's
/// first byte picks the connection (even: the first, odd: the second) and
/// the rest is its text (lossy UTF-8). Nothing may panic, and:
/// - every frame the service queues is a frame a client can decode;
/// - a frame whose envelope the service can read and that does not close
///   the connection gets at least one frame back on its own opcode (no
///   request is left without an answer);
/// - no login reply holds a login token, no login frame's record holds
///   one, and no record of a 638 reply holds the one-time secret it
///   carried;
/// - after every frame, the pre-login and session pools count exactly the
///   open connections that have not logged in and those that have.
pub fn check_realtime_frames(input: &[u8]) -> FramesRun {
    let mut state = world();
    let mut peers: Vec<Option<Peer>> = (0..2).map(|_| Some(connect(&mut state))).collect();
    let mut secrets = HashSet::new();
    let mut run = FramesRun::default();
    for frame in input.split(|&b| b == FRAME_SEPARATOR) {
        let Some((&pick, text)) = frame.split_first() else {
            continue;
        };
        let slot = usize::from(pick % 2);
        let Some(id) = peers[slot].as_ref().map(|peer| peer.id) else {
            continue;
        };
        let text = String::from_utf8_lossy(text);
        let flow = handle_text(&mut state, id, &text);
        run.handled += 1;
        let mut answered = Vec::new();
        for (index, peer) in peers.iter_mut().enumerate() {
            let Some(open) = peer else { continue };
            let closed = drain(open, &mut secrets, |op, code| {
                if index == slot {
                    answered.push((op, code));
                }
            });
            let killed = open.kill.borrow().is_some();
            if closed || killed {
                state.disconnect(open.id);
                *peer = None;
            }
        }
        if let Flow::Close { .. } = flow {
            if let Some(open) = peers[slot].take() {
                state.disconnect(open.id);
            }
            run.closed += 1;
        } else {
            run.logins += usize::from(flow == Flow::LoggedIn);
            let op = read_envelope(&text)
                .expect("a frame whose envelope cannot be read closes its connection")
                .op;
            let answer = answered.iter().find(|(answer, _)| *answer == op);
            let Some(&(_, code)) = answer else {
                panic!("no answer on opcode {op} to {text:?} (answers: {answered:?})");
            };
            run.answered += 1;
            run.accepted += usize::from(code == Some(0));
        }
        let open: Vec<u64> = peers.iter().flatten().map(|peer| peer.id).collect();
        let sessions = open
            .iter()
            .filter(|id| state.account_of(**id).is_some())
            .count();
        let view = StateView { state: &state };
        assert_eq!(
            (view.prelogin_count(), view.session_count()),
            (open.len() - sessions, sessions),
            "the pools' counts drifted from the open connections"
        );
        assert_eq!(
            state.indexed_sessions(),
            sessions,
            "the account index drifted from the logged-in connections"
        );
        for id in &open {
            if let Some(account) = state.account_of(*id) {
                assert!(
                    state.connections_of(account).contains(id),
                    "a logged-in connection is missing from its account's index"
                );
            }
        }
    }
    run.secrets = secrets.len();
    let tokens = [FUZZ_BOT_TOKEN, FUZZ_USER_TOKEN].map(str::to_owned);
    let minted: Vec<String> = secrets.into_iter().collect();
    for record in state.frames().items() {
        // Other payloads are recorded as the client sent them: a token a
        // client puts in a message, or in a 638 request, is its own doing.
        let guarded: &[String] = match (record.direction, record.opcode) {
            (Direction::Received, Some(op)) if op == OpCode::Login.code() => &tokens,
            (Direction::Sent, Some(op)) if op == OpCode::RestMint.code() => &minted,
            _ => &[],
        };
        for secret in guarded {
            assert!(
                !record.payload.contains(secret.as_str()),
                "a secret reached the record of a {:?} frame of opcode {:?}",
                record.direction,
                record.opcode
            );
        }
    }
    run
}

/// The fixed world of the fuzz targets: a bot and a human sharing a
/// channel of one server, which holds one file; REST minting on.
fn world() -> State {
    let config = DevServerConfig::default()
        .bot(AccountConfig::new("fuzzbot", FUZZ_BOT_TOKEN).id(FUZZ_BOT_ID))
        .user(AccountConfig::new("fuzzuser", FUZZ_USER_TOKEN).id(FUZZ_USER_ID))
        .server(
            ServerConfig::new("fuzz")
                .id(FUZZ_SERVER_ID)
                .channel(
                    ChannelConfig::new("general")
                        .id(FUZZ_CHANNEL_ID)
                        .member("fuzzbot")
                        .member("fuzzuser"),
                )
                .file(FileConfig::new("notes.txt", FUZZ_FILE_CONTENT).id(FUZZ_FILE_ID)),
        )
        .bot_rest_credentials(true);
    State::from_config(&config).expect("the fixed fuzz world is a valid config")
}

/// A new connection in the pre-login pool.
fn connect(state: &mut State) -> Peer {
    let (queue, reader, _backlog) = outbox(state.limits().outbound_queue_bytes);
    let (kill, watched) = watch::channel(None);
    let id = state
        .connect(queue, kill)
        .expect("the pre-login pool has room for two connections");
    Peer {
        id,
        reader,
        kill: watched,
    }
}

/// The `code` of a reply payload, if it has one.
#[derive(serde::Deserialize)]
struct Code {
    code: Option<i32>,
}

/// Takes what the service queued for `peer`, checking each frame and
/// passing its opcode and reply code to `seen`; true when a close was
/// queued.
fn drain(
    peer: &mut Peer,
    secrets: &mut HashSet<String>,
    mut seen: impl FnMut(u16, Option<i32>),
) -> bool {
    let mut closed = false;
    while let Some(item) = peer.reader.try_recv() {
        match item {
            Outbound::Frame(bytes) => {
                peer.reader.release(bytes.len());
                let text = std::str::from_utf8(&bytes).unwrap_or_else(|e| {
                    panic!("the service queued a frame that is not UTF-8: {e}")
                });
                let frame = decode_frame(text)
                    .unwrap_or_else(|e| panic!("the service queued an undecodable frame: {e}"));
                if frame.op == OpCode::Login.code() {
                    assert!(
                        !text.contains(FUZZ_BOT_TOKEN) && !text.contains(FUZZ_USER_TOKEN),
                        "a login reply holds a token"
                    );
                }
                if frame.op == OpCode::RestMint.code()
                    && let Ok(botlane_proto::payload::RestMintReply {
                        secret: Some(secret),
                        ..
                    }) = decode_payload(frame.op, frame.d)
                {
                    secrets.insert(secret);
                }
                let code = decode_payload::<Code>(frame.op, frame.d).ok();
                seen(frame.op, code.and_then(|reply| reply.code));
            }
            Outbound::Close { .. } => closed = true,
        }
    }
    closed
}

/// Reads arbitrary text as a devserver configuration file and builds the
/// service's state from it: errors, never a panic, and an error never
/// quotes a login token. (Only tokens of eight bytes or more that occur
/// once in the text are looked for: a shorter or repeated one may also be
/// a name the error rightly names.)
pub fn check_config(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let Ok(config) = DevServerConfig::from_json_str(&text) else {
        return;
    };
    let Err(error) = State::from_config(&config) else {
        return;
    };
    let shown = format!("{error} {error:?}");
    for account in config.bots.iter().chain(&config.users) {
        let token = account.token.as_str();
        if token.len() >= 8 && text.matches(token).count() == 1 {
            assert!(!shown.contains(token), "a config error quotes a token");
        }
    }
}

/// What one run of [`check_rest_requests`] went through.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RequestsRun {
    /// Requests the router answered.
    pub answered: usize,
    /// Answers with status 200.
    pub ok: usize,
    /// Answers refusing a request to `/api` without the credential (401).
    pub unauthenticated: usize,
    /// Exchanges of the world's one-time secret that succeeded.
    pub exchanged: usize,
}

impl std::iter::Sum for RequestsRun {
    fn sum<I: Iterator<Item = Self>>(runs: I) -> Self {
        runs.fold(Self::default(), |total, run| Self {
            answered: total.answered + run.answered,
            ok: total.ok + run.ok,
            unauthenticated: total.unauthenticated + run.unauthenticated,
            exchanged: total.exchanged + run.exchanged,
        })
    }
}

/// Sends HTTP requests to the REST listener's router (in process, no
/// socket), in the fuzz world with one credential already exchanged and
/// one one-time secret not yet.
///
/// The input is a list of requests separated by [`FRAME_SEPARATOR`]; a
/// request's first byte picks the method (GET, POST, PUT, DELETE, HEAD,
/// PATCH, OPTIONS), the rest is text: the target (path and query) on the
/// first line, then `name: value` header lines, an empty line and the
/// body. In it, `{V}` stands for the valid `verification` value, `{S}` and
/// `{R}` for the unused secret and its row id, `{F}` for the file's id and
/// `{ROOM}` for its server's. Nothing may panic, and:
/// - every status is one the REST lane documents, and every refusal is a
///   JSON `{"error_code": <string>}` (but for HEAD, which has no body);
/// - a request under `/api` without the valid credential is refused with
///   401, whatever else is wrong with it (authentication first);
/// - the one-time secret is exchanged at most once;
/// - a download that succeeds serves the file's bytes.
pub fn check_rest_requests(input: &[u8]) -> RequestsRun {
    let mut state = world();
    let now = tokio::time::Instant::now();
    let (used, unused) = (
        state.rest_mut().mint(FUZZ_BOT_ID, AccountKind::Bot, now),
        state.rest_mut().mint(FUZZ_BOT_ID, AccountKind::Bot, now),
    );
    let (Some(used_secret), Some(used_row)) = (used.secret, used.row_id) else {
        panic!("the fuzz world mints (code {})", used.code);
    };
    let (Some(secret), Some(row)) = (unused.secret, unused.row_id) else {
        panic!("the fuzz world mints twice (code {})", unused.code);
    };
    let (verification, _) = state
        .rest_mut()
        .exchange(&used_secret, &used_row, now)
        .unwrap_or_else(|_| panic!("the fuzz world's first secret exchanges"));
    let limits = state.limits().clone();
    let router = crate::rest::router(Arc::new(Shared::new(state)), limits);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime builds");
    let mut run = RequestsRun::default();
    for raw in input.split(|&b| b == FRAME_SEPARATOR) {
        let Some((&pick, text)) = raw.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(text)
            .replace("{V}", &verification)
            .replace("{S}", &secret)
            .replace("{R}", &row)
            .replace("{F}", FUZZ_FILE_ID)
            .replace("{ROOM}", FUZZ_SERVER_ID);
        let Some(request) = http_request(pick, &text) else {
            continue;
        };
        let path = request.uri().path().to_owned();
        // A response to HEAD has no body (RFC 9110 §9.3.2).
        let head = request.method() == axum::http::Method::HEAD;
        let authenticated = request
            .headers()
            .get("verification")
            .is_some_and(|value| value.as_bytes() == verification.as_bytes());
        let exchange = path == "/auth/verify-session";
        let download = path == format!("/api/files/{FUZZ_FILE_ID}/download");
        let (status, body) = runtime.block_on(async {
            let response = router
                .clone()
                .oneshot(request)
                .await
                .unwrap_or_else(|never| match never {});
            let status = response.status();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .expect("a response body held in memory reads");
            (status, body)
        });
        run.answered += 1;
        let code = status.as_u16();
        assert!(
            [200, 400, 401, 403, 404, 405, 408, 413].contains(&code),
            "status {code} for {path:?}"
        );
        if code == 200 {
            run.ok += 1;
        } else if !head {
            let refusal: serde_json::Value = serde_json::from_slice(&body)
                .unwrap_or_else(|_| panic!("a {code} refusal that is not JSON"));
            assert!(
                refusal["error_code"].is_string(),
                "a {code} refusal without an error code: {refusal}"
            );
        }
        if (path == "/api" || path.starts_with("/api/")) && !authenticated {
            assert_eq!(code, 401, "{path:?} answered without the credential");
            run.unauthenticated += 1;
        }
        if exchange && code == 200 {
            run.exchanged += 1;
            assert!(run.exchanged <= 1, "the one-time secret exchanged twice");
        }
        if download && code == 200 && !head {
            assert_eq!(
                &body[..],
                FUZZ_FILE_CONTENT.as_bytes(),
                "the download's bytes"
            );
        }
    }
    run
}

/// The request `text` describes (see [`check_rest_requests`]), with the
/// method `pick` selects; `None` when its target or a header could not be
/// sent over HTTP at all.
fn http_request(pick: u8, text: &str) -> Option<axum::http::Request<axum::body::Body>> {
    use axum::http::Method;
    let methods = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::HEAD,
        Method::PATCH,
        Method::OPTIONS,
    ];
    let method = methods[usize::from(pick) % methods.len()].clone();
    let (head, body) = text.split_once("\n\n").unwrap_or((text, ""));
    let mut lines = head.lines();
    let target = lines.next().unwrap_or("/");
    let mut request = axum::http::Request::builder().method(method).uri(target);
    for line in lines {
        let (name, value) = line.split_once(':')?;
        request = request.header(name.trim(), value.trim());
    }
    request.body(axum::body::Body::from(body.to_owned())).ok()
}
