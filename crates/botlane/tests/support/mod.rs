//! A world for client tests: a real devserver on loopback, one bot, one
//! human (a `TestUser`), one server with a channel they share and a file;
//! and the shared declarations (`fixtures.rs`).

#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

pub mod fixtures;

use std::time::Duration;

use botlane::Events;
use botlane::{encode_command_data, Client, ClientOptions, CommandArgs, CommandData, Event};
use botlane_devserver::{
    BotAccount, DevServer, DevServerConfig, Direction, ReceivedMessage, TestUser, UserAccount,
};
use botlane_proto::OpCode;

pub const WAIT: Duration = Duration::from_secs(10);

pub struct World {
    pub server: DevServer,
    pub bot: BotAccount,
    pub user: UserAccount,
    /// The server the channel and the file are in.
    pub space: String,
    pub channel: String,
    /// `notes.txt` (`hello, world`), for the REST lane.
    pub file: String,
    pub dir: tempfile::TempDir,
}

impl World {
    pub async fn new() -> Self {
        Self::with(DevServerConfig::default()).await
    }

    pub async fn with(config: DevServerConfig) -> Self {
        let server = DevServer::start(config).await.unwrap();
        let bot = server.add_bot("dicebot");
        let user = server.add_user("alice");
        let space = server.create_server("playground");
        let channel = server.create_channel(&space, "general").unwrap();
        server.add_member(&channel, &bot.id).unwrap();
        server.add_member(&channel, &user.id).unwrap();
        let file = server
            .add_file(&space, "notes.txt", b"hello, world".to_vec())
            .unwrap();
        Self {
            server,
            bot,
            user,
            space,
            channel,
            file,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The bot's options, the REST lane pointed at the devserver (and
    /// trusting its certificate when it serves https).
    pub fn options(&self) -> ClientOptions {
        let options = ClientOptions::new(
            self.bot.token.clone(),
            self.dir.path().join("bot.keystore"),
            self.server.ws_url(),
        )
        .rest_url(self.server.rest_url());
        match self.server.rest_root_certificate_der() {
            Some(der) => options.root_certificate(der),
            None => options,
        }
    }

    pub fn client(&self) -> Client {
        Client::new(self.options()).unwrap()
    }

    /// Connects the human and shares the channel key with every member
    /// (the bot must have logged in once, so its public key is known).
    pub async fn alice(&self) -> TestUser {
        let alice = TestUser::connect(&self.server.ws_url(), &self.user.token)
            .await
            .unwrap();
        alice.open_channel(&self.channel).await.unwrap();
        alice
    }

    /// The sidecar of an invocation of this world's bot.
    pub fn sidecar(&self, name: &str, args: CommandArgs) -> String {
        encode_command_data(&CommandData {
            bot_id: self.bot.id.clone(),
            name: name.into(),
            args,
        })
    }

    /// Logs `client` in, then connects alice with the channel key shared.
    pub async fn start<D: Send + Sync + 'static>(&self, client: &Client<D>) -> TestUser {
        client.login().await.unwrap();
        self.alice().await
    }
}

/// How many frames of `op` the devserver has received (from anyone).
pub fn received(server: &DevServer, op: OpCode) -> usize {
    server
        .frames()
        .iter()
        .filter(|f| f.is(Direction::Received, op))
        .count()
}

/// The next message of the bot that `alice` sees, failing the test after
/// `WAIT`.
pub async fn bot_says(alice: &TestUser, world: &World) -> ReceivedMessage {
    alice
        .wait_for_message(|m| m.author_id == world.bot.id, WAIT)
        .await
        .unwrap()
}

/// The next event matching `pred`, failing the test after `WAIT`.
pub async fn next_event(events: &mut Events, mut pred: impl FnMut(&Event) -> bool) -> Event {
    tokio::time::timeout(WAIT, async {
        loop {
            let event = events.recv().await.expect("the event channel stays open");
            if pred(&event) {
                return event;
            }
        }
    })
    .await
    .expect("the expected event arrives in time")
}

/// The `Event::Message` for the message with this id.
pub async fn message_event(events: &mut Events, id: &str) -> botlane::Message {
    match next_event(events, |e| matches!(e, Event::Message(m) if m.id == id)).await {
        Event::Message(m) => m,
        _ => unreachable!("filtered above"),
    }
}

/// The `Event::CommandError` for the message with this id.
pub async fn command_error_event(events: &mut Events, id: &str) -> botlane::CommandError {
    match next_event(
        events,
        |e| matches!(e, Event::CommandError(c) if c.message.id == id),
    )
    .await
    {
        Event::CommandError(c) => c,
        _ => unreachable!("filtered above"),
    }
}

/// The next `Event::SendRejected`.
pub async fn send_rejected_event(events: &mut Events) -> botlane::SendRejected {
    match next_event(events, |e| matches!(e, Event::SendRejected(_))).await {
        Event::SendRejected(r) => r,
        _ => unreachable!("filtered above"),
    }
}
