//! The registry a client runs with ([`Client::commands`](crate::Client::commands)):
//! an immutable snapshot that dispatch and menu publishing read without a
//! lock, replaced as a whole by each change.
//!
//! - **Readers** (dispatch, through a cache it revalidates once per
//!   message; menu publishing) load the current `Arc<CommandRegistry>`
//!   atomically and keep it as long as they need: a handler's context holds
//!   the snapshot it was dispatched from.
//! - **Writers** are serialised by a mutex: each change copies the current
//!   registry, applies itself to the copy and swaps it in, so concurrent
//!   registrations never lose one another. A change that fails leaves the
//!   registry as it was: a batch ([`Commands::update`]) applies whole or
//!   not at all.
//! - **Republishing**: every applied change wakes the session's menu task
//!   once; it republishes only when the menu hash differs from the one
//!   published on this session, so a batch of registrations is published
//!   once, and a change that leaves the menu as it was is not published.
//! - **The menu** is kept beside the registry as its canonical JSON and
//!   hash ([`MenuFeed`]), so the session publishes it without knowing the
//!   type of the handlers' shared state.
//! - **Mutable per-command state** (cooldown trackers) is not in the
//!   snapshot: a snapshot is never mutated, and a registration that swaps
//!   it does not reset anything a command has counted.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};

use arc_swap::cache::Cache;
use arc_swap::ArcSwap;
use tokio::sync::Notify;

use super::context::CommandContext;
use super::function::FnCommand;
use super::handler::BoxError;
use super::registry::CommandRegistry;
use crate::commands::types::CommandDeclaration;
use crate::commands::validate::DeclarationError;
use crate::sync::lock;

/// The commands of a [`Client`](crate::Client), usable before and after
/// [`login`](crate::Client::login); cheap to clone, and no lock is ever
/// handed out.
///
/// It keeps the spec's registry operations: [`register`](Self::register),
/// and the reads through a [`snapshot`](Self::snapshot). Everything else a
/// [`CommandRegistry`] does (typed commands, settings, the built-in help)
/// is done on the registry in [`update`](Self::update), where several
/// changes are one, published once. Each change is applied at once and,
/// after login, republishes the menu if its hash changed.
///
/// ```
/// use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
///
/// # let dir = tempfile::tempdir().unwrap();
/// let client = Client::new(ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws"))?;
/// client
///     .commands()
///     .register(CommandDeclaration::new("ping", "Pong"), |ctx: CommandContext| async move {
///         ctx.reply("pong").await
///     })?;
/// // The framework's additions, on the registry itself.
/// client.commands().update(|registry| registry.enable_help().map(drop))?;
/// let registry = client.commands().snapshot();
/// assert_eq!(registry.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Commands<D = ()> {
    live: Arc<Live<D>>,
}

struct Live<D> {
    current: ArcSwap<CommandRegistry<D>>,
    /// Serialises changes: each copies the registry the previous one left.
    writer: Mutex<()>,
    /// The menu of `current`, for the session.
    menu: MenuFeed,
}

/// The registry of a [`RegistryCache`]: the live one.
pub(crate) struct Current<D>(Arc<Live<D>>);

impl<D> std::ops::Deref for Current<D> {
    type Target = ArcSwap<CommandRegistry<D>>;

    fn deref(&self) -> &Self::Target {
        &self.0.current
    }
}

/// The registry as a reader of every message keeps it
/// ([`Commands::cache`]).
pub(crate) type RegistryCache<D> = Cache<Current<D>, Arc<CommandRegistry<D>>>;

/// The menu of a client's registry as the session publishes it: the
/// canonical JSON and its hash, replaced with the registry, and a wake-up
/// after every applied change (the session's menu task waits on it).
#[derive(Clone)]
pub(crate) struct MenuFeed {
    inner: Arc<FeedInner>,
}

struct FeedInner {
    current: ArcSwap<PublishedMenu>,
    changed: Notify,
}

/// One registry's menu, ready to publish.
#[derive(Debug)]
pub(crate) struct PublishedMenu {
    /// The compact JSON of the canonical menu.
    pub(crate) json: String,
    /// Its hash, the session's skip guard.
    pub(crate) hash: String,
}

impl<D> From<&CommandRegistry<D>> for PublishedMenu {
    fn from(registry: &CommandRegistry<D>) -> Self {
        Self {
            json: registry.canonical_menu_json(),
            hash: registry.hash(),
        }
    }
}

impl Default for MenuFeed {
    fn default() -> Self {
        Self {
            inner: Arc::new(FeedInner {
                current: ArcSwap::from_pointee(PublishedMenu::from(&CommandRegistry::new())),
                changed: Notify::new(),
            }),
        }
    }
}

impl MenuFeed {
    /// The menu of the registry as it is now.
    pub(crate) fn current(&self) -> Arc<PublishedMenu> {
        self.inner.current.load_full()
    }

    /// Resolves after the next applied change (at once if one was applied
    /// since the last call returned).
    pub(crate) async fn changed(&self) {
        self.inner.changed.notified().await;
    }

    fn replace(&self, menu: PublishedMenu) {
        self.inner.current.store(Arc::new(menu));
        self.inner.changed.notify_one();
    }
}

impl<D> Clone for Commands<D> {
    fn clone(&self) -> Self {
        Self {
            live: Arc::clone(&self.live),
        }
    }
}

impl<D> fmt::Debug for Commands<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Commands")
            .field("len", &self.snapshot().len())
            .finish_non_exhaustive()
    }
}

impl<D> Commands<D> {
    /// The registry as it is now: an immutable snapshot that later changes
    /// do not affect.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let client = botlane::Client::new(botlane::ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")).unwrap();
    /// let before = client.commands().snapshot();
    /// client.commands().update(|registry| registry.enable_help().map(drop))?;
    /// assert!(before.is_empty());
    /// assert_eq!(client.commands().snapshot().len(), 1);
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn snapshot(&self) -> Arc<CommandRegistry<D>> {
        self.live.current.load_full()
    }

    /// The registry for a reader of every message: revalidated by one
    /// plain load per read, where a look through the `ArcSwap` takes and
    /// gives back a slot with two atomic writes. It keeps the
    /// snapshot it last read until it reads a newer one.
    pub(crate) fn cache(&self) -> RegistryCache<D> {
        Cache::new(Current(Arc::clone(&self.live)))
    }
}

impl<D: Send + Sync + 'static> Commands<D> {
    /// An empty registry, for a new client.
    pub(crate) fn new() -> Self {
        Self {
            live: Arc::new(Live {
                current: ArcSwap::from_pointee(CommandRegistry::empty()),
                writer: Mutex::new(()),
                menu: MenuFeed::default(),
            }),
        }
    }

    /// The menu feed the session publishes from.
    pub(crate) fn menu_feed(&self) -> MenuFeed {
        self.live.menu.clone()
    }

    /// Applies `change` to a copy of the registry and, if it succeeds,
    /// swaps the copy in as one change: after login the menu is republished
    /// at most once for it, and only if its hash changed. If `change` fails,
    /// nothing of it is applied. Changes from several tasks are applied one
    /// after the other; none is lost.
    ///
    /// `change` runs under the writers' lock: keep it short and do not block
    /// in it (it is not async, so it cannot await).
    ///
    /// ```
    /// use botlane::{CommandDeclaration, CommandRegistry, DeclarationError};
    ///
    /// fn add_commands(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    ///     let ok = |_ctx| async { Ok::<(), std::io::Error>(()) };
    ///     registry
    ///         .register(CommandDeclaration::new("roll", "Roll dice"), ok)?
    ///         .register(CommandDeclaration::new("flip", "Flip a coin"), ok)?;
    ///     Ok(())
    /// }
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let client = botlane::Client::new(botlane::ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")).unwrap();
    /// client.commands().update(add_commands)?;
    /// assert_eq!(client.commands().snapshot().len(), 2);
    ///
    /// // All or nothing: the second registration fails, so the first is not kept.
    /// let err = client.commands().update(|registry| {
    ///     registry.register(CommandDeclaration::new("coin", "Flip"), |_ctx| async { Ok::<(), std::io::Error>(()) })?;
    ///     registry.register(CommandDeclaration::new("roll", "Again"), |_ctx| async { Ok::<(), std::io::Error>(()) })?;
    ///     Ok::<(), DeclarationError>(())
    /// });
    /// assert!(err.is_err());
    /// assert!(client.commands().snapshot().get("coin").is_none());
    /// # Ok::<(), DeclarationError>(())
    /// ```
    pub fn update<T, E>(
        &self,
        change: impl FnOnce(&mut CommandRegistry<D>) -> Result<T, E>,
    ) -> Result<T, E> {
        let _one_writer = lock(&self.live.writer);
        let mut next = CommandRegistry::clone(&self.live.current.load());
        let out = change(&mut next)?;
        let menu = PublishedMenu::from(&next);
        self.live.current.store(Arc::new(next));
        self.live.menu.replace(menu);
        Ok(out)
    }

    /// Registers a command with an async handler, as
    /// [`CommandRegistry::register`] does; chainable. Each call is one
    /// change (see [`update`](Self::update) to make several one).
    pub fn register<F, Fut, E>(
        &self,
        decl: CommandDeclaration,
        handler: F,
    ) -> Result<&Self, DeclarationError>
    where
        F: Fn(CommandContext<D>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError>,
    {
        self.update(|registry| registry.register(decl, handler).map(drop))?;
        Ok(self)
    }

    /// Registers a command written as a function with
    /// [`#[command]`](crate::framework::command), as
    /// [`CommandRegistry::add`] does; chainable, each call one change.
    ///
    /// ```
    /// use botlane::prelude::*;
    ///
    /// /// Check that the bot is alive
    /// #[command]
    /// async fn ping(ctx: CommandContext) -> Result<(), ClientError> {
    ///     ctx.reply("pong").await
    /// }
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let client = Client::new(ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")).unwrap();
    /// client.commands().add(ping())?;
    /// assert!(client.commands().snapshot().get("ping").is_some());
    /// # Ok::<(), botlane::DeclarationError>(())
    /// ```
    pub fn add(&self, command: FnCommand<D>) -> Result<&Self, DeclarationError> {
        self.update(|registry| registry.add(command).map(drop))?;
        Ok(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::framework::handler::CommandHandler;

    fn ok_handler() -> CommandHandler {
        CommandHandler::new(|_ctx| async { Ok::<(), std::io::Error>(()) })
    }

    #[test]
    fn concurrent_registrations_are_all_kept() {
        let commands = Commands::new();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let commands = commands.clone();
                std::thread::spawn(move || {
                    for i in 0..5 {
                        let name = format!("c{t}x{i}");
                        commands
                            .update(|r| {
                                r.register_handler(CommandDeclaration::new(name, "D"), ok_handler())
                                    .map(drop)
                            })
                            .unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let registry = commands.snapshot();
        assert_eq!(registry.len(), 40, "no registration was lost");
        for t in 0..8 {
            for i in 0..5 {
                assert!(registry.get(&format!("c{t}x{i}")).is_some(), "c{t}x{i}");
            }
        }
    }

    #[test]
    fn a_snapshot_is_never_changed_by_later_registrations() {
        let commands = Commands::new();
        commands
            .update(|r| {
                r.register_handler(CommandDeclaration::new("a", "A"), ok_handler())
                    .map(drop)
            })
            .unwrap();
        let held = commands.snapshot();
        let hash = held.hash();
        commands
            .update(|r| {
                r.register_handler(CommandDeclaration::new("b", "B"), ok_handler())
                    .map(drop)
            })
            .unwrap();
        assert_eq!((held.len(), held.hash()), (1, hash));
        assert_eq!(commands.snapshot().len(), 2);
    }

    #[test]
    fn a_failed_batch_changes_nothing() {
        let commands = Commands::new();
        let before = commands.snapshot();
        let failed = commands.update(|registry| {
            registry.register_handler(CommandDeclaration::new("a", "A"), ok_handler())?;
            registry
                .register_handler(CommandDeclaration::new("Bad Name", "B"), ok_handler())
                .map(drop)
        });
        assert!(failed.is_err());
        assert!(
            Arc::ptr_eq(&before, &commands.snapshot()),
            "the snapshot was not even replaced"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn each_applied_change_wakes_the_menu_task_once_and_changes_coalesce() {
        let commands = Commands::new();
        let failed: Result<(), &str> = commands.update(|_| Err("no"));
        assert!(failed.is_err());
        let feed = commands.menu_feed();
        let woken = tokio::time::timeout(std::time::Duration::from_secs(1), feed.changed());
        assert!(woken.await.is_err(), "a failed change wakes nobody");
        for name in ["a", "b", "c"] {
            commands
                .update(|r| {
                    r.register_handler(CommandDeclaration::new(name, "D"), ok_handler())
                        .map(drop)
                })
                .unwrap();
        }
        feed.changed().await;
        assert_eq!(feed.current().hash, commands.snapshot().hash());
        let again = tokio::time::timeout(std::time::Duration::from_secs(1), feed.changed());
        assert!(
            again.await.is_err(),
            "three changes before the wait: one wake-up"
        );
    }
}
