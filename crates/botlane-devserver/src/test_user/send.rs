//! What a [`TestUser`] sends into a channel: plain lines, replies, command
//! invocations on either lane, and deliberately wrong sidecars; each sealed
//! with the channel's key as a chat app would.

use botlane::{Command, CommandArgs, CommandDeclaration, OutgoingInvocation};
use botlane_proto::payload::{SendReply, SendRequest};
use botlane_proto::OpCode;

use super::inbox::check;
use super::{TestUser, TestUserError};

impl TestUser {
    /// Sends a plain text message; returns its id.
    pub async fn send_text(&self, channel_id: &str, line: &str) -> Result<String, TestUserError> {
        self.send_sealed(channel_id, line, None, None).await
    }

    /// Replies to a message (the replied-to author gets a notification);
    /// returns the reply's id.
    pub async fn reply_to(
        &self,
        channel_id: &str,
        message_id: &str,
        line: &str,
    ) -> Result<String, TestUserError> {
        self.send_sealed(channel_id, line, None, Some(message_id))
            .await
    }

    /// Invokes a bot's command the way a chat app does: the content is the
    /// readable line and the sealed sidecar addressed to `bot_id`, both
    /// from [`OutgoingInvocation`] (the line with the default prefix `/`).
    /// Returns the message id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use botlane::{CommandArgValue, CommandArgs, CommandDeclaration, CommandOption, CommandOptionType};
    /// use botlane_devserver::{DevServer, TestUser};
    ///
    /// let server = DevServer::start(Default::default()).await?;
    /// let channel = server.create_channel(&server.create_server("lobby"), "general")?;
    /// let alice = server.add_user("alice");
    /// server.add_member(&channel, &alice.id)?;
    /// let alice = TestUser::connect(&server.ws_url(), &alice.token).await?;
    /// alice.open_channel(&channel).await?;
    ///
    /// let roll = CommandDeclaration::new("roll", "Roll dice")
    ///     .option(CommandOption::new("count", "How many", CommandOptionType::Integer).required(true));
    /// let args = CommandArgs::from([("count".to_owned(), CommandArgValue::Integer(2))]);
    /// alice.send_command(&channel, "6f1c2b0e-2a4c-4f43-9d1e-0b8e6a1e9a55", &roll, &args).await?;
    /// let echo = alice.next_message(Duration::from_secs(5)).await?;
    /// assert_eq!(echo.content, "/roll 2");
    /// assert_eq!(echo.command.map(|c| c.bot_id), Some("6f1c2b0e2a4c4f439d1e0b8e6a1e9a55".to_owned()));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send_command(
        &self,
        channel_id: &str,
        bot_id: &str,
        decl: &CommandDeclaration,
        args: &CommandArgs,
    ) -> Result<String, TestUserError> {
        let invocation = OutgoingInvocation::new(bot_id, decl, args, None)?;
        self.send_sealed(
            channel_id,
            &invocation.line,
            Some(&invocation.sidecar),
            None,
        )
        .await
    }

    /// Invokes the typed command `command` of a bot on the structured lane,
    /// as [`send_command`](Self::send_command) does with its declaration
    /// ([`Command::declaration`]) and arguments ([`Command::to_args`]): the
    /// line and the sidecar are formatted and encoded by botlane's own code,
    /// exactly as `Client::send_command` does. Returns the message id.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use botlane::Command;
    /// use botlane_devserver::{DevServer, TestUser};
    ///
    /// /// Roll some dice
    /// #[derive(Command)]
    /// struct Roll {
    ///     /// How many dice
    ///     count: u8,
    ///     /// What for
    ///     label: Option<String>,
    /// }
    ///
    /// let server = DevServer::start(Default::default()).await?;
    /// let channel = server.create_channel(&server.create_server("lobby"), "general")?;
    /// let alice = server.add_user("alice");
    /// server.add_member(&channel, &alice.id)?;
    /// let alice = TestUser::connect(&server.ws_url(), &alice.token).await?;
    /// alice.open_channel(&channel).await?;
    ///
    /// let bot = "6f1c2b0e-2a4c-4f43-9d1e-0b8e6a1e9a55";
    /// alice.invoke(&channel, bot, &Roll { count: 2, label: Some("fire damage".into()) }).await?;
    /// let sent = alice.next_message(Duration::from_secs(5)).await?;
    /// assert_eq!(sent.content, "/roll 2 fire damage");
    /// let data = sent.command.unwrap();
    /// assert_eq!((data.name.as_str(), data.args.len()), ("roll", 2));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn invoke<C: Command>(
        &self,
        channel_id: &str,
        bot_id: &str,
        command: &C,
    ) -> Result<String, TestUserError> {
        self.send_command(channel_id, bot_id, &C::declaration(), &command.to_args())
            .await
    }

    /// Sends any content with any sidecar JSON, both sealed: for tests of
    /// malformed or mismatched sidecars, such as a [`Sidecar`](super::Sidecar)'s
    /// [`to_json`](super::Sidecar::to_json). Returns the message id.
    pub async fn send_with_sidecar(
        &self,
        channel_id: &str,
        content: &str,
        sidecar_json: &str,
    ) -> Result<String, TestUserError> {
        self.send_sealed(channel_id, content, Some(sidecar_json), None)
            .await
    }

    async fn send_sealed(
        &self,
        channel_id: &str,
        content: &str,
        sidecar: Option<&str>,
        reply_to: Option<&str>,
    ) -> Result<String, TestUserError> {
        let (content, command) = {
            let inner = self.shared.lock();
            let key = inner
                .keys
                .get(channel_id)
                .ok_or_else(|| TestUserError::NoChannelKey(channel_id.to_owned()))?;
            let aad = channel_id.as_bytes();
            let command = sidecar.map(|s| key.seal(s.as_bytes(), aad)).transpose()?;
            (key.seal(content.as_bytes(), aad)?, command)
        };
        let mut request = SendRequest::new(channel_id, content);
        request.command = command;
        request.reply_to = reply_to.map(str::to_owned);
        let reply: SendReply = self.request(OpCode::Send, &request).await?;
        check(OpCode::Send, reply.code, reply.reason)?;
        reply
            .message_id
            .ok_or_else(|| TestUserError::Protocol("send accepted without a message_id".into()))
    }
}
