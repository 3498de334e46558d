//! The two receivers the isolated dispatch benches compare, both logged in
//! to the fake service: a bot with a no-op `/tick` handler, and a raw
//! tokio-websockets client that only counts the frames it reads
//! (`raw_opener.rs` is a third, for the isolated benches only).

use std::sync::Arc;
use std::time::Duration;

use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
use futures_util::StreamExt;

use crate::fake_service::{Shape, COMMAND, FRAMES_AFTER_READY};
use crate::progress::Progress;
use crate::raw_client;

/// How long one batch may take before the bench gives up.
pub(crate) const BATCH_LIMIT: Duration = Duration::from_secs(60);

/// A logged-in bot whose `/tick` handler only counts.
pub(crate) struct TickBot {
    pub(crate) client: Client,
    pub(crate) handled: Arc<Progress>,
    _dir: tempfile::TempDir,
}

/// Gives the bot a dynamic prefix, to measure what one costs: `none`, one
/// that always answers `None`; `other`, one that replaces the main prefix
/// `!` with `/` for every message (a copied `String`, as from a map).
const DYNAMIC_PREFIX: &str = "BOTLANE_BENCH_DYNAMIC_PREFIX";

impl TickBot {
    pub(crate) async fn login(url: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let options = ClientOptions::new("bench-token", dir.path().join("keystore"), url);
        let options = match std::env::var(DYNAMIC_PREFIX).as_deref() {
            Ok("none") => options.dynamic_prefix(|_| None),
            Ok("other") => options
                .command_prefix("!")
                .dynamic_prefix(|_| Some(String::from("/"))),
            Ok(other) => panic!("{DYNAMIC_PREFIX} is `none` or `other`, not {other:?}"),
            Err(_) => options,
        };
        let client = Client::new(options).expect("valid options");
        let handled = Arc::new(Progress::default());
        let counter = handled.clone();
        client
            .commands()
            .register(
                CommandDeclaration::new(COMMAND, "Count"),
                move |_ctx: CommandContext| {
                    counter.bump();
                    async { Ok::<(), std::io::Error>(()) }
                },
            )
            .expect("a valid declaration");
        client.login().await.expect("login to the fake service");
        Self {
            client,
            handled,
            _dir: dir,
        }
    }

    /// Waits until the handler has run for every invocation of one more
    /// `batch` (the batch ends on an invocation, so every plain message of
    /// it has been dispatched too); call after the replay was asked for.
    pub(crate) async fn wait_batch(&self, start: u64, batch: Shape) {
        self.handled
            .wait_for(start + batch.invocations, BATCH_LIMIT)
            .await;
    }

    /// Panics if the bot dropped a push: the figures would be of less work.
    pub(crate) fn assert_nothing_dropped(&self) {
        let stats = self.client.stats();
        assert_eq!(
            stats.pushes_dropped, 0,
            "the bot dropped pushes (queue peak {})",
            stats.push_queue_peak
        );
    }
}

/// A raw client that counts every frame it reads, on a task of its own.
pub(crate) struct RawReceiver {
    pub(crate) frames: Arc<Progress>,
}

impl RawReceiver {
    pub(crate) async fn login(url: &str, public_key: &str) -> Self {
        let mut ws = raw_client::connect(url).await;
        raw_client::login(&mut ws, "raw-token", public_key).await;
        let frames = Arc::new(Progress::default());
        let counter = frames.clone();
        tokio::spawn(async move {
            while let Some(Ok(_message)) = ws.next().await {
                counter.bump();
            }
        });
        frames.wait_for(FRAMES_AFTER_READY, BATCH_LIMIT).await;
        Self { frames }
    }

    /// Waits until every frame of one more `batch` was read.
    pub(crate) async fn wait_batch(&self, start: u64, batch: Shape) {
        self.frames
            .wait_for(start + batch.len as u64, BATCH_LIMIT)
            .await;
    }
}
