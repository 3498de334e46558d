//! [`Scene`]: a devserver, a logged-in bot and a human member sharing one
//! channel, made in one line for a bot's tests.

use std::panic::{RefUnwindSafe, UnwindSafe};
use std::time::Duration;

use botlane::framework::Clock;
use botlane::{
    BoxError, Client, ClientError, ClientOptions, Command, CommandRegistry, DeclarationError,
};

use crate::{
    BotAccount, DevServer, DevServerConfig, DevServerError, ReceivedMessage, Sidecar, TestUser,
    TestUserError, UserAccount,
};

/// The bot's keystore file, in the scene's temporary directory.
const KEYSTORE_FILE: &str = "bot.keystore";

/// How long [`Scene::answer`] waits for the bot.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// A devserver in this process, a bot [`Client`] logged in with the test's
/// commands, and a human [`TestUser`] in one channel with the bot, the
/// channel key shared: everything a test of a bot's commands needs, over
/// real sockets on loopback.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use botlane::{CommandContext, CommandDeclaration};
/// use botlane_devserver::Scene;
///
/// let scene = Scene::start(|commands| {
///     let ping = CommandDeclaration::new("ping", "Check that the bot is alive");
///     commands.register(ping, |ctx: CommandContext| async move { ctx.reply("pong").await })?;
///     Ok(())
/// })
/// .await?;
///
/// let asked = scene.say("/ping").await?;
/// let answer = scene.answer().await?;
/// assert_eq!(answer.content, "pong");
/// assert_eq!(answer.reply_to, Some(asked));
/// scene.close().await?;
/// # Ok(())
/// # }
/// ```
///
/// What it sets up, in this order: a [`DevServer`] on a free port; a server
/// `lobby` with a channel `general`; a bot account `bot` and a human
/// account `alice`, both members; the bot's [`Client`] with its keystore in
/// a temporary directory (removed when the scene is dropped) and its REST
/// lane pointed at the devserver (`scene.bot.rest()` works when the config
/// turns on [`DevServerConfig::bot_rest_credentials`]), the commands
/// registered by the closure, logged in (so its menu is published and its
/// public key registered); then alice as a [`TestUser`], who creates the
/// channel key and wraps it to the bot. [`Scene::builder`] changes the
/// service's configuration and the client's options.
///
/// The fields are the handles themselves, to use as in any test:
/// `scene.server` for the service's admin and inspection calls,
/// `scene.bot` for the client (its events, its registry, sending),
/// `scene.user` for alice, `scene.channel` for the channel id.
///
/// `D` is the bot's shared state, as in [`Client<D>`]: `()` unless the
/// builder was given one ([`SceneBuilder::with_data`]).
#[non_exhaustive]
pub struct Scene<D = ()> {
    /// The bot under test, logged in.
    pub bot: Client<D>,
    /// The bot's account: its id and token.
    pub bot_account: BotAccount,
    /// Alice, a human member of the channel who holds its key.
    pub user: TestUser,
    /// Alice's account.
    pub user_account: UserAccount,
    /// The channel both are in.
    pub channel: String,
    /// The server (room) the channel belongs to.
    pub server_id: String,
    /// The service. Declared after alice so that she is dropped first; the
    /// bot is closed on a task of its own when the scene is dropped (see
    /// `KeystoreDir`).
    pub server: DevServer,
    /// The bot's keystore directory, removed when the scene is closed or
    /// dropped.
    keystore_dir: KeystoreDir,
}

/// The bot's keystore directory. [`Scene::close`] removes it once the bot
/// has closed. A scene dropped without `close` would remove it while the
/// bot's last keystore write is on its way (the write fails, and warns
/// twice in the test's log); dropping hands the directory to a task that
/// closes the bot (its keystore written) and then removes it. The service,
/// dropped beside it, stops at once and may not read the bot's goodbye;
/// and should the test's runtime end first, the task is cancelled and the
/// directory goes with it, before any write has started.
struct KeystoreDir {
    path: std::path::PathBuf,
    /// Closes the bot, then removes the directory; taken by `close`.
    on_drop: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl KeystoreDir {
    fn new<D: Send + Sync + 'static>(dir: tempfile::TempDir, bot: Client<D>) -> Self {
        let path = dir.path().to_owned();
        let on_drop = move || match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let _ = bot.close().await;
                    drop(dir);
                });
            }
            // No runtime to wait on: stop the bot, and the directory goes now.
            Err(_) => bot.shutdown(),
        };
        Self {
            path,
            on_drop: Some(Box::new(on_drop)),
        }
    }

    /// Removes the directory now, the bot being closed already.
    fn remove(mut self) {
        // Dropped uncalled: the directory it holds is removed here.
        drop(self.on_drop.take());
    }
}

impl Drop for KeystoreDir {
    fn drop(&mut self) {
        if let Some(close_then_remove) = self.on_drop.take() {
            close_then_remove();
        }
    }
}

/// Why a [`Scene`] could not be set up or closed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SceneError {
    /// The devserver did not start, or refused to create the accounts,
    /// the channel or the memberships.
    #[error("cannot set up the scene's devserver")]
    Server(#[source] DevServerError),
    /// The commands given to the scene were refused.
    #[error("the scene's commands were refused")]
    Commands(#[source] DeclarationError),
    /// The bot's client could not be built, log in, or close.
    #[error("the scene's bot client failed")]
    Bot(#[source] ClientError),
    /// The human user could not connect or share the channel key.
    #[error("the scene's user could not connect or share the channel key")]
    User(#[source] TestUserError),
    /// The temporary directory of the bot's keystore could not be made.
    #[error("cannot make a temporary directory for the scene's keystore")]
    Keystore(#[source] std::io::Error),
    /// The test's builder of the bot ([`SceneBuilder::start_bot`]) failed.
    #[error("the scene's bot builder failed")]
    Build(#[source] BoxError),
}

/// What the builder given to [`SceneBuilder::start_bot`] gets: the options
/// to build the bot's client with, and the scene as it stands before the
/// bot logs in (the service running, the channel and alice's account
/// made), for a bot that must know an id before it starts (its owners, its
/// moderators).
#[derive(Debug)]
#[non_exhaustive]
pub struct BotSetup<'a> {
    /// The options to build the client with: the bot's token, a keystore
    /// path in the scene's directory, the devserver's URLs (and
    /// certificate), with [`SceneBuilder::client_options`]'s change made.
    pub options: ClientOptions,
    /// The service, running: to add the accounts the bot must know.
    pub server: &'a DevServer,
    /// Alice's account, made already: her id, for an owner list.
    pub user_account: &'a UserAccount,
    /// The channel the bot and alice share.
    pub channel: &'a str,
}

/// The settings of a [`Scene`] beyond its commands; from [`Scene::builder`].
#[must_use]
pub struct SceneBuilder<D = ()> {
    config: DevServerConfig,
    options: OptionsChange,
    data: D,
}

impl<D> std::fmt::Debug for SceneBuilder<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<D: Send + Sync + 'static> SceneBuilder<D> {
    /// Gives the bot the shared state `data` ([`Client::with_data`]): the
    /// scene's commands take [`CommandContext<E>`](botlane::CommandContext).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use botlane::{CommandContext, CommandDeclaration};
    /// use botlane_devserver::Scene;
    ///
    /// let scene = Scene::builder()
    ///     .with_data(AtomicU64::new(0))
    ///     .start(|commands| {
    ///         let count = CommandDeclaration::new("count", "Counts");
    ///         commands.register(count, |ctx: CommandContext<AtomicU64>| async move {
    ///             let n = ctx.data().fetch_add(1, Ordering::SeqCst) + 1;
    ///             ctx.reply(&n.to_string()).await
    ///         })?;
    ///         Ok(())
    ///     })
    ///     .await?;
    /// scene.say("/count").await?;
    /// assert_eq!(scene.answer().await?.content, "1");
    /// assert_eq!(scene.bot.data().load(Ordering::SeqCst), 1);
    /// scene.close().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_data<E: Send + Sync + 'static>(self, data: E) -> SceneBuilder<E> {
        SceneBuilder {
            config: self.config,
            options: self.options,
            data,
        }
    }

    /// Starts the devserver with `config` (its listen addresses should stay
    /// on port 0, a free port). The default is [`DevServerConfig::default`].
    pub fn server_config(mut self, config: DevServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Changes the bot's [`ClientOptions`] before the client is built; the
    /// options given have the bot's token, the keystore path in the scene's
    /// directory and the devserver's URL.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use botlane::{CommandContext, CommandDeclaration};
    /// use botlane_devserver::Scene;
    ///
    /// let scene = Scene::builder()
    ///     .client_options(|options| options.command_prefix("!"))
    ///     .start(|commands| {
    ///         let ping = CommandDeclaration::new("ping", "Check that the bot is alive");
    ///         commands.register(ping, |ctx: CommandContext| async move { ctx.reply("pong").await })?;
    ///         Ok(())
    ///     })
    ///     .await?;
    /// scene.say("!ping").await?;
    /// assert_eq!(scene.answer().await?.content, "pong");
    /// # Ok(())
    /// # }
    /// ```
    pub fn client_options(
        mut self,
        change: impl FnOnce(ClientOptions) -> ClientOptions + Send + 'static,
    ) -> Self {
        let before = self.options;
        self.options = Box::new(move |options| change(before(options)));
        self
    }

    /// Gives the bot `clock` for its cooldowns and error answers
    /// ([`ClientOptions::clock`]); with a [`ManualClock`](botlane::framework::ManualClock)
    /// the test moves time itself, and sees a cooldown run out through
    /// the running bot without waiting for it. Composes with
    /// [`client_options`](Self::client_options).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use botlane::framework::{CommandSettings, Cooldown, ManualClock};
    /// use botlane::{CommandContext, CommandDeclaration};
    /// use botlane_devserver::Scene;
    ///
    /// let clock = ManualClock::new();
    /// let scene = Scene::builder()
    ///     .clock(clock.clone())
    ///     .start(|commands| {
    ///         let hug = CommandDeclaration::new("hug", "Hug");
    ///         let slow = CommandSettings::new().cooldown(Cooldown::per_user(Duration::from_secs(60)));
    ///         commands.register_with(hug, slow, |ctx: CommandContext| async move { ctx.reply("hug").await })?;
    ///         Ok(())
    ///     })
    ///     .await?;
    /// scene.say("/hug").await?;
    /// assert_eq!(scene.answer().await?.content, "hug");
    /// scene.say("/hug").await?;
    /// assert!(scene.answer().await?.content.contains("cooling down"));
    /// clock.advance(Duration::from_secs(60));
    /// scene.say("/hug").await?;
    /// assert_eq!(scene.answer().await?.content, "hug");
    /// # Ok(())
    /// # }
    /// ```
    pub fn clock(self, clock: impl Clock + RefUnwindSafe + UnwindSafe) -> Self {
        self.client_options(move |options| options.clock(clock))
    }

    /// Sets the scene up with the commands `commands` registers (in one
    /// [`Commands::update`](botlane::Commands::update), before login).
    pub async fn start(
        self,
        commands: impl FnOnce(&mut CommandRegistry<D>) -> Result<(), DeclarationError>,
    ) -> Result<Scene<D>, SceneError> {
        let data = self.data;
        launch(self.config, self.options, |setup| {
            let bot = Client::with_data(setup.options, data).map_err(SceneError::Bot)?;
            bot.commands()
                .update(commands)
                .map_err(SceneError::Commands)?;
            Ok(bot)
        })
        .await
    }
}

impl SceneBuilder {
    /// Sets the scene up with the bot `build` makes: the whole client,
    /// built by the test as the bot's `main` builds it (its shared state,
    /// commands, checks, error hook, hooks after the command, owners),
    /// from the options in its [`BotSetup`]; the scene logs it in and
    /// returns with it running, as [`start`](Self::start) does. `build`
    /// must not log the client in. Its error fails the scene with
    /// [`SceneError::Build`].
    ///
    /// For a bot with shared state, the client built carries it
    /// ([`Client::with_data`]); this is why there is no
    /// [`with_data`](Self::with_data) before `start_bot`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use botlane::framework::{Check, CommandSettings};
    /// use botlane::{BoxError, Client, ClientOptions, CommandContext, CommandDeclaration};
    /// use botlane_devserver::Scene;
    ///
    /// /// The bot as its `main` would build it.
    /// fn bot(options: ClientOptions) -> Result<Client, BoxError> {
    ///     let client = Client::new(options)?;
    ///     client.add_check(Check::sync(|_ctx| Err("closed for the night".into())));
    ///     let reload = CommandDeclaration::new("reload", "Reload the word lists");
    ///     let owners_only = CommandSettings::new().owners_only();
    ///     client.commands().update(|registry| {
    ///         registry
    ///             .register_with(reload, owners_only, |ctx: CommandContext| async move {
    ///                 ctx.reply("reloaded").await
    ///             })
    ///             .map(drop)
    ///     })?;
    ///     Ok(client)
    /// }
    ///
    /// let scene = Scene::builder()
    ///     .start_bot(|setup| {
    ///         // Alice owns the bot, and skips its checks.
    ///         let alice = setup.user_account.id.as_str();
    ///         bot(setup.options.owners([alice]).skip_checks_for_owners(true))
    ///     })
    ///     .await?;
    /// scene.say("/reload").await?;
    /// assert_eq!(scene.answer().await?.content, "reloaded");
    /// assert!(scene.bot.is_owner(&scene.user_account.id));
    /// scene.close().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn start_bot<D, E>(
        self,
        build: impl FnOnce(BotSetup<'_>) -> Result<Client<D>, E>,
    ) -> Result<Scene<D>, SceneError>
    where
        D: Send + Sync + 'static,
        E: Into<BoxError>,
    {
        launch(self.config, self.options, |setup| {
            build(setup).map_err(|e| SceneError::Build(e.into()))
        })
        .await
    }
}

/// The change [`SceneBuilder::client_options`] makes to the bot's options.
type OptionsChange = Box<dyn FnOnce(ClientOptions) -> ClientOptions + Send>;

/// Starts the service with `config`, makes the accounts, the channel and
/// the memberships, builds the bot with `build` from the scene's options
/// (changed by `change_options`), logs it in, then connects alice.
async fn launch<D: Send + Sync + 'static>(
    config: DevServerConfig,
    change_options: OptionsChange,
    build: impl FnOnce(BotSetup<'_>) -> Result<Client<D>, SceneError>,
) -> Result<Scene<D>, SceneError> {
    let server = DevServer::start(config).await.map_err(SceneError::Server)?;
    let server_id = server.create_server("lobby");
    let channel = server
        .create_channel(&server_id, "general")
        .map_err(SceneError::Server)?;
    let bot_account = server.add_bot("bot");
    let user_account = server.add_user("alice");
    for member in [&bot_account.id, &user_account.id] {
        server
            .add_member(&channel, member)
            .map_err(SceneError::Server)?;
    }

    let keystore_dir = tempfile::Builder::new()
        .prefix("botlane-scene-")
        .tempdir()
        .map_err(SceneError::Keystore)?;
    // The REST lane points at this devserver too (with its certificate
    // when it serves https), so `scene.bot.rest()` works once the
    // config turns bot credentials on.
    let mut options = ClientOptions::new(
        bot_account.token.clone(),
        keystore_dir.path().join(KEYSTORE_FILE),
        server.ws_url(),
    )
    .rest_url(server.rest_url());
    if let Some(der) = server.rest_root_certificate_der() {
        options = options.root_certificate(der);
    }
    let bot = build(BotSetup {
        options: change_options(options),
        server: &server,
        user_account: &user_account,
        channel: &channel,
    })?;
    bot.login().await.map_err(SceneError::Bot)?;
    let keystore_dir = KeystoreDir::new(keystore_dir, bot.clone());

    // After the bot's login, which registered its public key: the key
    // alice creates is wrapped to it. The service pushes that key to the
    // bot before any message alice sends next, so the bot can read them.
    let user = TestUser::connect(&server.ws_url(), &user_account.token)
        .await
        .map_err(SceneError::User)?;
    user.open_channel(&channel)
        .await
        .map_err(SceneError::User)?;
    Ok(Scene {
        bot,
        bot_account,
        user,
        user_account,
        channel,
        server_id,
        server,
        keystore_dir,
    })
}

impl Scene {
    /// Sets a scene up with the default settings and the commands
    /// `commands` registers; see [`Scene`].
    pub async fn start(
        commands: impl FnOnce(&mut CommandRegistry) -> Result<(), DeclarationError>,
    ) -> Result<Self, SceneError> {
        Self::builder().start(commands).await
    }

    /// A scene with other settings: the devserver's configuration, the
    /// client's options, the bot's shared state.
    pub fn builder() -> SceneBuilder {
        SceneBuilder {
            config: DevServerConfig::default(),
            options: Box::new(|options| options),
            data: (),
        }
    }
}

impl<D: Send + Sync + 'static> Scene<D> {
    /// The bot's id.
    pub fn bot_id(&self) -> &str {
        &self.bot_account.id
    }

    /// Where the bot's keystore is, in a temporary directory the scene
    /// removes when it is closed or dropped.
    pub fn keystore_path(&self) -> std::path::PathBuf {
        self.keystore_dir.path.join(KEYSTORE_FILE)
    }

    /// Alice sends `line` as plain text (the text lane); returns the
    /// message id.
    pub async fn say(&self, line: &str) -> Result<String, TestUserError> {
        self.user.send_text(&self.channel, line).await
    }

    /// Alice invokes the bot's typed command `command` on the structured
    /// lane ([`TestUser::invoke`]); returns the message id.
    pub async fn invoke<C: Command>(&self, command: &C) -> Result<String, TestUserError> {
        self.user
            .invoke(&self.channel, self.bot_id(), command)
            .await
    }

    /// Alice sends `content` with `sidecar` ([`TestUser::send_with_sidecar`]);
    /// returns the message id.
    pub async fn send_sidecar(
        &self,
        content: &str,
        sidecar: &Sidecar,
    ) -> Result<String, TestUserError> {
        self.user
            .send_with_sidecar(&self.channel, content, &sidecar.to_json())
            .await
    }

    /// The next message the bot posts, as alice receives it, waiting up to
    /// [`ANSWER_TIMEOUT`]; the other messages that arrive before it are
    /// skipped.
    pub async fn answer(&self) -> Result<ReceivedMessage, TestUserError> {
        self.answer_within(ANSWER_TIMEOUT).await
    }

    /// [`answer`](Self::answer), waiting up to `timeout`.
    pub async fn answer_within(&self, timeout: Duration) -> Result<ReceivedMessage, TestUserError> {
        let bot = self.bot_account.id.clone();
        self.user
            .wait_for_message(|m| m.author_id == bot, timeout)
            .await
    }

    /// Closes the bot ([`Client::close`]: its keystore is written), alice's
    /// connection and the service, then removes the keystore directory.
    /// Dropping the scene stops everything too, without waiting: the
    /// service and alice at once, the bot on a task that closes it and
    /// then removes its keystore directory. The scene owns its bot: taking
    /// `bot` out of it and dropping the rest closes it the same way.
    pub async fn close(self) -> Result<(), SceneError> {
        let Self {
            bot,
            user,
            server,
            keystore_dir,
            ..
        } = self;
        let closed = bot.close().await.map_err(SceneError::Bot);
        drop(user);
        server.shutdown().await;
        keystore_dir.remove();
        closed
    }
}

impl<D> std::fmt::Debug for Scene<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scene")
            .field("bot_id", &self.bot_account.id)
            .field("user_id", &self.user_account.id)
            .field("channel", &self.channel)
            .field("ws_url", &self.server.ws_url())
            .finish_non_exhaustive()
    }
}
