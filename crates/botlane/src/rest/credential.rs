//! The credential state machine of the spec, apart from any I/O: the slot
//! holds no credential, a mint in flight, or a valid credential.
//!
//! Single flight: the first caller that finds no usable credential spawns
//! the mint as its own task and parks a shared handle to it in the slot;
//! every caller (the first one included) awaits that handle. Because the
//! mint is a task and not the caller's future, cancelling any caller, the
//! first one included, neither cancels the mint nor starts another one, and
//! the mint's opcode-638 request always gets its positional reply. The task
//! itself moves the slot to "valid" or back to "no credential" when it ends.
//!
//! Every mint has a generation number. A caller whose request came back 401
//! drops the credential only if the slot still holds the one it sent
//! (same generation), so N concurrent 401s cause one re-mint, not N.
//!
//! The lifetime believed is the service's `expires_in`, 15 minutes when it
//! is absent (the spec's fixed lifetime), clamped to
//! [`MIN_LIFETIME`]..=[`MAX_LIFETIME`]: a service that claims more is not
//! believed, and one that claims 0 or a few seconds cannot make every call
//! mint (a credential it already considers expired is handled by the 401
//! path: one re-mint and one retry per call).

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt, Shared};
use secrecy::SecretString;
use tokio::time::Instant;

use super::error::RestError;
use crate::sync::lock;

/// What a successful mint yields: the `verification` value and how long the
/// service says it lives, in seconds, when it says.
pub(crate) struct Minted {
    pub(crate) value: SecretString,
    pub(crate) expires_in: Option<u64>,
}

/// A cached credential. Its `Debug` shows the secret as redacted.
#[derive(Debug)]
pub(crate) struct Credential {
    /// Which mint made it.
    pub(crate) generation: u64,
    /// The value of the `verification` header.
    pub(crate) value: SecretString,
    /// From this instant on, the next call mints a fresh one first.
    refresh_at: Instant,
}

type Outcome = Result<Arc<Credential>, RestError>;

/// The spec's credential lifetime, believed when `expires_in` is absent and
/// the longest believed when it is present.
pub(crate) const MAX_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// The shortest lifetime believed: a credential then serves calls for at
/// least 22.5 s (three quarters of it) before the lane refreshes it.
pub(crate) const MIN_LIFETIME: Duration = Duration::from_secs(30);

/// The lifetime the lane plans with for the service's `expires_in`.
pub(crate) fn lifetime(expires_in: Option<u64>) -> Duration {
    expires_in
        .map_or(MAX_LIFETIME, Duration::from_secs)
        .clamp(MIN_LIFETIME, MAX_LIFETIME)
}

enum Slot {
    Empty,
    Minting {
        generation: u64,
        done: Shared<BoxFuture<'static, Outcome>>,
    },
    Valid(Arc<Credential>),
}

struct State {
    slot: Slot,
    /// The generation of the last mint started.
    generation: u64,
}

struct Inner {
    state: Mutex<State>,
    margin: Duration,
}

/// The credential slot of one REST lane; cheap to clone.
#[derive(Clone)]
pub(crate) struct CredentialCache {
    inner: Arc<Inner>,
}

impl CredentialCache {
    /// A cache that refreshes a credential when less than
    /// `min(margin, lifetime / 4)` of its lifetime is left.
    pub(crate) fn new(margin: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    slot: Slot::Empty,
                    generation: 0,
                }),
                margin,
            }),
        }
    }

    /// A usable credential: the cached one while it is fresh, else the
    /// result of the mint in flight, else of a mint started now with `mint`
    /// (called at most once, and only to start a mint).
    pub(crate) async fn get<F, Fut>(&self, mint: F) -> Outcome
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Minted, RestError>> + Send + 'static,
    {
        let done = {
            let mut state = lock(&self.inner.state);
            match &state.slot {
                Slot::Valid(c) if Instant::now() < c.refresh_at => return Ok(c.clone()),
                Slot::Minting { done, .. } => done.clone(),
                Slot::Valid(_) | Slot::Empty => {
                    state.generation += 1;
                    let generation = state.generation;
                    let done = self.spawn(generation, mint());
                    state.slot = Slot::Minting {
                        generation,
                        done: done.clone(),
                    };
                    done
                }
            }
        };
        done.await
    }

    fn spawn<Fut>(&self, generation: u64, mint: Fut) -> Shared<BoxFuture<'static, Outcome>>
    where
        Fut: Future<Output = Result<Minted, RestError>> + Send + 'static,
    {
        let inner = self.inner.clone();
        let task = tokio::spawn(async move {
            // The service's clock for the credential starts after this, so
            // measuring from here errs on the early side.
            let started = Instant::now();
            let outcome = mint.await.map(|m| {
                let lifetime = lifetime(m.expires_in);
                let early = inner.margin.min(lifetime / 4);
                Arc::new(Credential {
                    generation,
                    value: m.value,
                    refresh_at: started + (lifetime - early),
                })
            });
            inner.settle(generation, &outcome);
            outcome
        });
        let inner = self.inner.clone();
        task.map(move |joined| {
            joined.unwrap_or_else(|_| {
                // The task ended without settling (its runtime shut down):
                // free the slot so that a later call can mint again.
                let outcome = Err(RestError::MintInterrupted);
                inner.settle(generation, &outcome);
                outcome
            })
        })
        .boxed()
        .shared()
    }

    /// Drops the credential after a 401, if it is still the one of
    /// `generation`; a newer credential or a mint in flight is kept.
    pub(crate) fn invalidate(&self, generation: u64) {
        let mut state = lock(&self.inner.state);
        if matches!(&state.slot, Slot::Valid(c) if c.generation == generation) {
            state.slot = Slot::Empty;
        }
    }
}

impl Inner {
    /// Ends the mint of `generation`: the slot becomes valid or empty.
    fn settle(&self, generation: u64, outcome: &Outcome) {
        let mut state = lock(&self.state);
        if matches!(&state.slot, Slot::Minting { generation: g, .. } if *g == generation) {
            state.slot = match outcome {
                Ok(credential) => Slot::Valid(credential.clone()),
                Err(_) => Slot::Empty,
            };
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use secrecy::ExposeSecret;

    use super::*;
    use crate::rest::error::ServiceActionError;

    const MARGIN: Duration = Duration::from_secs(60);
    const LIFETIME: Option<u64> = Some(900);
    const MINT_TIME: Duration = Duration::from_millis(50);

    /// A fake mint: counts calls, takes `MINT_TIME`, names each credential
    /// after its call number, says `expires_in`, and fails with code `fail`
    /// when set.
    #[derive(Clone)]
    struct FakeMint {
        calls: Arc<AtomicUsize>,
        expires_in: Option<u64>,
        fail: Option<i32>,
    }

    impl FakeMint {
        fn new(expires_in: Option<u64>) -> Self {
            Self {
                calls: Arc::new(AtomicUsize::new(0)),
                expires_in,
                fail: None,
            }
        }

        fn calls(&self) -> usize {
            self.calls.load(Ordering::SeqCst)
        }

        fn start(
            &self,
        ) -> impl Future<Output = Result<Minted, RestError>> + Send + 'static + use<> {
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let (expires_in, fail) = (self.expires_in, self.fail);
            async move {
                tokio::time::sleep(MINT_TIME).await;
                match fail {
                    Some(code) => Err(ServiceActionError::rest_mint(code).into()),
                    None => Ok(Minted {
                        value: SecretString::from(format!("cred-{n}")),
                        expires_in,
                    }),
                }
            }
        }
    }

    async fn get(cache: &CredentialCache, mint: &FakeMint) -> Outcome {
        cache.get(|| mint.start()).await
    }

    fn value(c: &Credential) -> &str {
        c.value.expose_secret()
    }

    #[tokio::test(start_paused = true)]
    async fn first_call_mints_and_later_calls_use_the_cache() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(LIFETIME);
        let a = get(&cache, &mint).await.unwrap();
        let b = get(&cache, &mint).await.unwrap();
        assert_eq!(mint.calls(), 1);
        assert_eq!((value(&a), value(&b)), ("cred-1", "cred-1"));
        assert_eq!(a.generation, b.generation);
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_first_calls_share_one_mint() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(LIFETIME);
        let calls = (0..1000).map(|_| {
            let (cache, mint) = (cache.clone(), mint.clone());
            tokio::spawn(async move { get(&cache, &mint).await.map(|c| c.generation) })
        });
        let results = futures_util::future::join_all(calls).await;
        assert_eq!(mint.calls(), 1);
        assert!(results.into_iter().all(|r| r.unwrap().unwrap() == 1));
    }

    #[tokio::test(start_paused = true)]
    async fn refresh_happens_within_the_margin_of_expiry() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(LIFETIME);
        get(&cache, &mint).await.unwrap();
        // Minted at t=0 (took MINT_TIME); refresh from t = 900 - 60 = 840 s.
        tokio::time::sleep(Duration::from_secs(839)).await;
        assert_eq!(value(&get(&cache, &mint).await.unwrap()), "cred-1");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(value(&get(&cache, &mint).await.unwrap()), "cred-2");
        assert_eq!(mint.calls(), 2);
    }

    /// Calls the cache every `step` until `until` has passed; the mints made.
    async fn calls_over(
        cache: &CredentialCache,
        mint: &FakeMint,
        step: Duration,
        until: Duration,
    ) -> usize {
        let start = Instant::now();
        while start.elapsed() < until {
            get(cache, mint).await.unwrap();
            tokio::time::sleep(step).await;
        }
        mint.calls()
    }

    #[tokio::test(start_paused = true)]
    async fn a_lifetime_at_the_floor_refreshes_at_three_quarters() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(Some(30));
        get(&cache, &mint).await.unwrap();
        // Refresh from 30 - min(60, 30 / 4) = 22.5 s on.
        tokio::time::sleep(Duration::from_millis(22_400)).await;
        get(&cache, &mint).await.unwrap();
        assert_eq!(mint.calls(), 1);
        tokio::time::sleep(Duration::from_millis(100)).await;
        get(&cache, &mint).await.unwrap();
        assert_eq!(mint.calls(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn zero_and_tiny_lifetimes_are_raised_to_the_floor() {
        for expires_in in [0, 1, 5, 29] {
            let cache = CredentialCache::new(MARGIN);
            let mint = FakeMint::new(Some(expires_in));
            // A call every 100 ms for a minute: believed for 30 s, refreshed
            // after 22.5 s, so three mints (at 0, ~22.5 and ~45 s), not one
            // per call.
            let mints = calls_over(
                &cache,
                &mint,
                Duration::from_millis(100),
                Duration::from_secs(60),
            )
            .await;
            assert_eq!(mints, 3, "expires_in {expires_in}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_absent_lifetime_is_the_spec_s_fifteen_minutes() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(None);
        assert_eq!(lifetime(None), Duration::from_secs(900));
        get(&cache, &mint).await.unwrap();
        // Refresh from 900 - 60 = 840 s on.
        tokio::time::sleep(Duration::from_secs(839)).await;
        assert_eq!(value(&get(&cache, &mint).await.unwrap()), "cred-1");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(value(&get(&cache, &mint).await.unwrap()), "cred-2");
    }

    #[tokio::test(start_paused = true)]
    async fn an_over_long_lifetime_is_capped_at_fifteen_minutes() {
        for expires_in in [901, 86_400, u64::MAX] {
            let cache = CredentialCache::new(MARGIN);
            let mint = FakeMint::new(Some(expires_in));
            assert_eq!(lifetime(Some(expires_in)), MAX_LIFETIME);
            get(&cache, &mint).await.unwrap();
            tokio::time::sleep(MAX_LIFETIME - MARGIN - Duration::from_secs(1)).await;
            assert_eq!(value(&get(&cache, &mint).await.unwrap()), "cred-1");
            tokio::time::sleep(Duration::from_secs(1)).await;
            assert_eq!(
                value(&get(&cache, &mint).await.unwrap()),
                "cred-2",
                "expires_in {expires_in}"
            );
        }
    }

    #[test]
    fn the_clamp_keeps_values_between_the_bounds() {
        assert_eq!(lifetime(Some(0)), MIN_LIFETIME);
        assert_eq!(lifetime(Some(30)), Duration::from_secs(30));
        assert_eq!(lifetime(Some(120)), Duration::from_secs(120));
        assert_eq!(lifetime(Some(900)), Duration::from_secs(900));
    }

    #[tokio::test(start_paused = true)]
    async fn only_the_current_generation_is_dropped() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(LIFETIME);
        let first = get(&cache, &mint).await.unwrap();
        cache.invalidate(first.generation);
        let second = get(&cache, &mint).await.unwrap();
        assert_eq!(value(&second), "cred-2");
        // A late 401 for the first credential leaves the second in place.
        cache.invalidate(first.generation);
        assert_eq!(value(&get(&cache, &mint).await.unwrap()), "cred-2");
        assert_eq!(mint.calls(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn fifty_concurrent_401s_cause_one_re_mint() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(LIFETIME);
        let stale = get(&cache, &mint).await.unwrap().generation;
        let calls = (0..50).map(|_| {
            let (cache, mint) = (cache.clone(), mint.clone());
            tokio::spawn(async move {
                cache.invalidate(stale);
                get(&cache, &mint).await.map(|c| c.generation)
            })
        });
        let results = futures_util::future::join_all(calls).await;
        assert_eq!(mint.calls(), 2);
        assert!(results.into_iter().all(|r| r.unwrap().unwrap() == 2));
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_reaches_every_waiter_and_leaves_no_credential() {
        let cache = CredentialCache::new(MARGIN);
        let mut mint = FakeMint::new(LIFETIME);
        mint.fail = Some(-9);
        let calls = (0..10).map(|_| {
            let (cache, mint) = (cache.clone(), mint.clone());
            tokio::spawn(async move { get(&cache, &mint).await })
        });
        for r in futures_util::future::join_all(calls).await {
            match r.unwrap() {
                Err(RestError::Action(e)) => assert_eq!((e.opcode, e.code), (638, -9)),
                other => panic!("expected a refusal, got {other:?}"),
            }
        }
        assert_eq!(mint.calls(), 1);
        mint.fail = None;
        assert_eq!(value(&get(&cache, &mint).await.unwrap()), "cred-2");
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_initiating_caller_keeps_the_mint() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(LIFETIME);
        let first = {
            let (cache, mint) = (cache.clone(), mint.clone());
            tokio::spawn(async move { get(&cache, &mint).await })
        };
        tokio::time::sleep(MINT_TIME / 2).await;
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        // The next caller joins the mint already in flight.
        let c = get(&cache, &mint).await.unwrap();
        assert_eq!((value(&c), mint.calls()), ("cred-1", 1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_mint_nobody_awaits_still_fills_the_slot() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(LIFETIME);
        // Poll once so the mint starts, then drop the only caller.
        assert!(get(&cache, &mint).now_or_never().is_none());
        tokio::time::sleep(MINT_TIME * 2).await;
        assert!(matches!(&lock(&cache.inner.state).slot, Slot::Valid(_)));
        assert_eq!(value(&get(&cache, &mint).await.unwrap()), "cred-1");
        assert_eq!(mint.calls(), 1);
    }

    #[test]
    fn an_interrupted_mint_frees_the_slot() {
        let cache = CredentialCache::new(MARGIN);
        let mint = FakeMint::new(LIFETIME);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        // Start a mint, then shut its runtime down under it.
        assert!(rt
            .block_on(async { get(&cache, &mint).now_or_never() })
            .is_none());
        drop(rt);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let first = rt.block_on(get(&cache, &mint));
        assert!(
            matches!(first, Err(RestError::MintInterrupted)),
            "{first:?}"
        );
        let second = rt.block_on(get(&cache, &mint)).unwrap();
        assert_eq!((value(&second), mint.calls()), ("cred-2", 2));
    }

    #[test]
    fn credential_debug_is_redacted() {
        let c = Credential {
            generation: 1,
            value: SecretString::from("top-secret-value"),
            refresh_at: Instant::now(),
        };
        assert!(!format!("{c:?}").contains("top-secret-value"));
    }
}
