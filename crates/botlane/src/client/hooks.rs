//! What the client sets for every command, beside the registry: its checks,
//! its error hook and its hooks after the command. Each is swapped in whole
//! (`rcu`), so each is usable before and after login and an invocation reads
//! one consistent set. And who its owners are, from its options.

use std::future::Future;

use super::Client;
use crate::dispatch::ClientHooks;
use crate::framework::after::{after_command, CommandRan};
use crate::framework::check::Check;
use crate::framework::on_error::OnError;

impl<D: Send + Sync + 'static> Client<D> {
    /// Adds a check that every command runs before its own checks (in the
    /// order added); usable before and after login; chainable. A refusal
    /// fails the invocation with reason
    /// [`Check`](crate::CommandErrorReason::Check) and its reason is the
    /// answer.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let client = botlane::Client::new(botlane::ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")).unwrap();
    /// use botlane::framework::Check;
    /// client
    ///     .add_check(Check::allowed_channels(["c1", "c2"]))
    ///     .add_check(Check::sync(|ctx| {
    ///         if ctx.message().content.len() <= 500 { Ok(()) } else { Err("that is too long for me".into()) }
    ///     }));
    /// ```
    pub fn add_check(&self, check: Check<D>) -> &Self {
        self.update_hooks(|hooks| hooks.checks.push(check.clone()));
        self
    }

    /// Sets what to do when a command fails, beside emitting
    /// [`Event::CommandError`](crate::Event::CommandError): by default
    /// ([`OnError::answer`]) the user who invoked gets an answer saying
    /// why. A command's own [`CommandSettings::on_error`](crate::framework::CommandSettings::on_error)
    /// replaces it for that command. Usable before and after login;
    /// chainable.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let client = botlane::Client::new(botlane::ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")).unwrap();
    /// use botlane::framework::OnError;
    /// // Error answers off, in one line.
    /// client.on_error(OnError::silent());
    /// // Or: answer, except argument errors of the text lane.
    /// client.on_error(OnError::answer().text_argument_errors(false));
    /// ```
    pub fn on_error(&self, on_error: OnError<D>) -> &Self {
        self.update_hooks(|hooks| hooks.on_error = on_error.clone());
        self
    }

    /// Adds a hook that runs after every command (poise's `post_command`),
    /// in the order added; usable before and after login; chainable.
    ///
    /// It receives a [`CommandRan`]: the command, the lane, the message,
    /// channel and author ids, how long the checks, cooldown and handler
    /// took, and whether it succeeded. **It sees failures too** (a check's
    /// refusal, a cooldown, a handler error or panic, a timeout), after
    /// their [`Event::CommandError`](crate::Event::CommandError) and error
    /// hook: a metrics hook counts both; a port of poise's `post_command`,
    /// which runs only after success, starts with
    /// `if !ran.succeeded() { return; }`. A failure of the argument step (a
    /// line that does not parse, arguments out of bounds) never started and
    /// is not seen: it is only the event and the error hook.
    ///
    /// **It runs after the handler has returned**, so after any reply the
    /// handler sent is on its way: the user may read the reply, and send
    /// the next command, before the hook has run. A count that another
    /// command's answer must include (a `/stats` right after a `/roll`) is
    /// made in the handler, or in a check, not here.
    ///
    /// It runs on the invocation's own future, after everything else, under
    /// its handler permit, for at most the command's timeout (its own, else
    /// [`handler_timeout`](crate::ClientOptions::handler_timeout); with
    /// timeouts off, [`DEFAULT_HANDLER_TIMEOUT`](crate::framework::DEFAULT_HANDLER_TIMEOUT)):
    /// a hook that never finishes holds its permit that long, then is
    /// dropped. A hook that panics is caught, like a hook past its bound
    /// (both logged at WARN, at most once per 10 s), and the next one runs.
    /// A hook that waits (a network call) makes the invocation wait too;
    /// one that only counts costs its closure call. Unset, an invocation
    /// pays one check.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use botlane::framework::CommandRan;
    /// use botlane::{Client, ClientOptions};
    ///
    /// #[derive(Default)]
    /// struct Metrics {
    ///     ok: AtomicU64,
    ///     failed: AtomicU64,
    /// }
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// let client = Client::with_data(
    ///     ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws"),
    ///     Metrics::default(),
    /// )?;
    /// client
    ///     // Metrics: every invocation that ran, success or failure.
    ///     .after_command(|ran: CommandRan<Metrics>| async move {
    ///         let counter = if ran.succeeded() { &ran.data().ok } else { &ran.data().failed };
    ///         counter.fetch_add(1, Ordering::Relaxed);
    ///     })
    ///     // poise's post_command: successes only.
    ///     .after_command(|ran: CommandRan<Metrics>| async move {
    ///         if ran.succeeded() {
    ///             println!("{} ran in {:?} for {}", ran.command, ran.elapsed, ran.author_id);
    ///         }
    ///     });
    /// # Ok::<(), botlane::ClientError>(())
    /// ```
    pub fn after_command<F, Fut>(&self, hook: F) -> &Self
    where
        F: Fn(CommandRan<D>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let hook = after_command(hook);
        self.update_hooks(|hooks| hooks.after.push(hook.clone()));
        self
    }

    /// Whether `user_id` is one of the bot's
    /// [`owners`](crate::ClientOptions::owners), compared in canonical
    /// form: for a check or a handler that treats the owners apart beyond
    /// [`owners_only`](crate::framework::CommandSettings::owners_only) (poise's
    /// `ctx.framework().options().owners`), through a
    /// [`WeakClient`](crate::WeakClient) it holds.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use botlane::{Client, ClientOptions};
    /// let options = ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws")
    ///     .owners(["3F2504E0-4F89-11D3-9A0C-0305E82C3301"]);
    /// let client = Client::new(options)?;
    /// assert!(client.is_owner("3f2504e04f8911d39a0c0305e82c3301"));
    /// assert!(!client.is_owner("someone-else"));
    /// # Ok::<(), botlane::ClientError>(())
    /// ```
    pub fn is_owner(&self, user_id: &str) -> bool {
        let owners = self.inner.runner.owners();
        owners.is_some_and(|owners| owners.contains(user_id))
    }

    /// Swaps in a copy of the hooks with `change` made to it (`change` may
    /// run more than once, when two updates race).
    fn update_hooks(&self, change: impl Fn(&mut ClientHooks<D>)) {
        self.inner.runner.update_hooks(change);
    }
}
